/** Small DOM and storage utilities; none of them throws. */

/** Expected failures are not the host page's business: at most a debug line. */
export const debug = (e: unknown): void => {
  try {
    console.debug('videoapp:', e);
  } catch {
    /* no console */
  }
};

/** `f`, with anything it throws (or rejects with) caught. */
export const safe =
  <A extends unknown[]>(f: (...args: A) => unknown) =>
  (...args: A): void => {
    try {
      const r = f(...args);
      if (r instanceof Promise) r.catch(debug);
    } catch (e) {
      debug(e);
    }
  };

/** Adds a listener whose exceptions never reach the page. */
export const on = (target: EventTarget, type: string, f: (e: Event) => unknown, opts?: AddEventListenerOptions): void =>
  target.addEventListener(type, safe(f), opts);

type Attrs = Record<string, string | number | null | undefined>;
type Kid = Node | string | false | null | undefined;

/** An element with a class, attributes (null/undefined are skipped) and children (text is text). */
export function h<K extends keyof HTMLElementTagNameMap>(tag: K, cls = '', attrs: Attrs = {}, kids: Kid[] = []): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  if (cls) el.className = cls;
  for (const k in attrs) {
    const v = attrs[k];
    if (v != null) el.setAttribute(k, String(v));
  }
  for (const kid of kids) if (kid || kid === '') el.append(kid);
  return el;
}

/** http(s), protocol-relative or root-relative URLs only; anything else is dropped. */
export const url = (u: unknown): string | null => (typeof u === 'string' && /^(https?:\/\/|\/)/i.test(u) ? u : null);

const store = (kind: 'localStorage' | 'sessionStorage'): Storage | null => {
  try {
    return window[kind];
  } catch {
    return null;
  }
};

export const read = (key: string, kind: 'localStorage' | 'sessionStorage' = 'localStorage'): string | null => {
  try {
    return store(kind)?.getItem(key) ?? null;
  } catch {
    return null;
  }
};

export const write = (key: string, value: string | null, kind: 'localStorage' | 'sessionStorage' = 'localStorage'): void => {
  try {
    const s = store(kind);
    if (value == null) s?.removeItem(key);
    else s?.setItem(key, value);
  } catch {
    /* full or disabled storage: the value is lost, nothing else */
  }
};

export const readJSON = <T>(key: string): T | null => {
  try {
    return JSON.parse(read(key) || 'null') as T | null;
  } catch {
    return null;
  }
};

/** The shopper asked the browser to save data (Save-Data). */
export const saveData = (): boolean => !!(navigator as { connection?: { saveData?: boolean } }).connection?.saveData;

export const matches = (query: string): boolean => {
  try {
    return matchMedia(query).matches;
  } catch {
    return false;
  }
};
