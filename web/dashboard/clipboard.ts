/**
 * Copies text. The Clipboard API can be refused (an embedding page's permissions, an older
 * browser), so a selected, off-screen textarea and `execCommand('copy')` are tried next.
 */
export async function copyText(text: string): Promise<boolean> {
  try {
    if (navigator.clipboard?.writeText) {
      await navigator.clipboard.writeText(text);
      return true;
    }
  } catch {
    /* refused: try the older way */
  }
  const area = document.createElement('textarea');
  area.value = text;
  area.setAttribute('readonly', '');
  area.setAttribute('aria-hidden', 'true');
  area.style.position = 'fixed';
  area.style.top = '-1000px';
  area.style.opacity = '0';
  document.body.append(area);
  area.select();
  let copied: boolean;
  try {
    copied = document.execCommand('copy');
  } catch {
    copied = false;
  }
  area.remove();
  return copied;
}

/** Selects an element's text, so a merchant can copy it by hand when copying failed. */
export function selectText(el: Element | null): void {
  if (!el) return;
  const selection = window.getSelection();
  if (!selection) return;
  const r = document.createRange();
  r.selectNodeContents(el);
  selection.removeAllRanges();
  selection.addRange(r);
}
