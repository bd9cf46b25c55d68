/**
 * Where and who, sent with every event: the page type the widget shows on, the storefront's
 * country, and the tab session's traffic source. See docs/STOREFRONT-CLIENT.md, "Events".
 */
import { SOURCE_KEY, SOURCES, type Placement, type Source, type WhereWho } from '../shared/storage';
import { read, write } from './util';

/** `utm_medium` values that name a source; any other medium leaves it to the referrer. */
const MEDIUMS: [Source, string][] = [
  ['email', 'email newsletter'],
  ['paid', 'cpc ppc paid paidsearch paid_social display cpm banner'],
  ['social', 'social social-network sm'],
  ['search', 'organic'],
  ['referral', 'referral'],
];

/**
 * Referrer hosts, matched on whole labels (`google` is any Google domain, `mail.google` only
 * Gmail); the first list that matches wins, so webmail goes before its search engine.
 */
const HOSTS: [Source, string][] = [
  ['email', 'mail.google outlook.live outlook.office mail.yahoo mail.proton mail.aol'],
  ['search', 'google bing yahoo duckduckgo baidu yandex ecosia search.brave naver'],
  [
    'social',
    'facebook fb instagram t.co twitter x.com linkedin lnkd.in pinterest reddit tiktok youtube youtu.be snapchat threads.net whatsapp',
  ],
];

const hostOf = (u: string) => {
  try {
    return new URL(u).hostname.toLowerCase().replace(/^www\./, '');
  } catch {
    return '';
  }
};

/** A landing page's traffic source, from its address (`utm_medium`) and its referrer. */
export function sourceOf(page: string, referrer: string): Source {
  let medium = '';
  try {
    medium = (new URL(page).searchParams.get('utm_medium') || '').trim().toLowerCase();
  } catch {
    /* no usable address: the referrer decides */
  }
  const named = MEDIUMS.find(([, words]) => words.split(' ').includes(medium));
  if (named) return named[0];
  const host = hostOf(referrer);
  if (!host || host === hostOf(page)) return 'direct';
  const known = HOSTS.find(([, names]) => names.split(' ').some((n) => `.${host}.`.includes(`.${n}.`)));
  return known ? known[0] : 'referral';
}

/**
 * The tab session's source: the one stored for it, else this page's (the session's landing
 * page, as far as the loader can know). {@link keepSource} stores it, with consent.
 */
let source: Source | undefined;
const sessionSource = (): Source => {
  if (!source) {
    const stored = read(SOURCE_KEY, 'sessionStorage') as Source;
    source = SOURCES.includes(stored) ? stored : sourceOf(location.href, document.referrer);
  }
  return source;
};

/** Stores the session's source, so that every later page of the session sends it. */
export const keepSource = () => write(SOURCE_KEY, sessionSource(), 'sessionStorage');

/** This page's where and who, on a page of type `placement`. */
export function whereWhoHere(placement: Placement): WhereWho {
  const country = window.Shopify && window.Shopify.country;
  const here: WhereWho = { placement, source: sessionSource() };
  if (typeof country === 'string' && /^[A-Z]{2}$/.test(country)) here.country = country;
  return here;
}
