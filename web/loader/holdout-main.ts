/**
 * The holdout's decision, inline in the page's head (the app embed block renders it while the
 * shop has a holdout): the browser's group is drawn, or read back, before the page's body is
 * parsed, and a browser in the holdout gets a class on `<html>` that takes every slot off the
 * page (with a style of its own). So no slot of the holdout ever takes space, on its first page too, and nothing shifts.
 * The loader reads the group this kept (docs/STOREFRONT-CLIENT.md, "Holdout").
 *
 * Runs as is in the page: a few hundred bytes, nothing fetched, nothing thrown into the page.
 */
import { assign, GROUP_KEY, HOLDOUT_CLASS } from '../shared/holdout';

try {
  const script = document.currentScript;
  const percent = Number(script && script.getAttribute('data-videoapp-holdout'));
  const raw = localStorage.getItem(GROUP_KEY);
  const kept = assign(raw, percent, Date.now());
  const text = kept && JSON.stringify(kept);
  if (text && text !== raw) localStorage.setItem(GROUP_KEY, text);
  // A group the device cannot keep is no group: it would be drawn again on every page.
  if (kept && kept.g === 'holdout' && localStorage.getItem(GROUP_KEY) === text) {
    document.documentElement.classList.add(HOLDOUT_CLASS);
    const style = document.createElement('style');
    style.textContent = `html.${HOLDOUT_CLASS} [data-videoapp-slot]{display:none!important}`;
    document.head.append(style);
  }
} catch {
  /* storage disabled: the browser stays out of the experiment */
}
