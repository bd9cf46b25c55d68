/**
 * Session tokens. Inside the platform's admin, App Bridge (loaded by the admin page, never by
 * this bundle) gives one per call, keeping it fresh itself; on the demo store, which serves the
 * dashboard on its own origin, the first is the one in the app's URL and `GET
 * /admin/session-token` mints the next, each kept until ten seconds before it expires (a page's
 * first calls would otherwise wait on one mint each).
 */

/** Neither App Bridge nor the demo store could give a token: the page was opened directly. */
export class NoSessionError extends Error {
  constructor() {
    super("Open videoapp from your store's admin.");
    this.name = 'NoSessionError';
  }
}

interface Bridge {
  idToken?: () => Promise<string>;
}

const bridge = (): Bridge | undefined => (globalThis as { shopify?: Bridge }).shopify;

/** True inside the platform's admin, where App Bridge is present. */
export const isEmbedded = (): boolean => typeof bridge()?.idToken === 'function';

/** Seconds before its `exp` that a kept token is no longer used. */
const MARGIN_SECONDS = 10;

/** The demo store's last token (or the mint under way), shared by concurrent calls. */
let kept: Promise<string> | null = null;

/**
 * The token the admin put in the app's URL when it opened it (`id_token`, as the platform does):
 * read before the router drops it from the address, and used while fresh, so the first calls
 * need not wait for a mint.
 */
const launchToken = ((): string | null => {
  const token = new URLSearchParams(globalThis.location?.search ?? '').get('id_token');
  return token && !/[\s<]/.test(token) ? token : null;
})();

function stillFresh(token: string): boolean {
  const exp = claims(token)?.exp;
  return typeof exp === 'number' && exp - MARGIN_SECONDS > Date.now() / 1000;
}

/** A session token valid for the next call; throws {@link NoSessionError} when none can be had. */
export async function sessionToken(): Promise<string> {
  const b = bridge();
  if (b && typeof b.idToken === 'function') {
    try {
      const token = await b.idToken();
      if (token) return token;
    } catch {
      /* App Bridge refused: reported below as no session */
    }
    throw new NoSessionError();
  }
  if (!kept && launchToken && stillFresh(launchToken)) kept = Promise.resolve(launchToken);
  if (kept) {
    const token = await kept.catch(() => '');
    if (token && stillFresh(token)) return token;
  }
  kept = mintOnDemoStore();
  kept.catch(() => {
    kept = null;
  });
  return kept;
}

async function mintOnDemoStore(): Promise<string> {
  let response: Response;
  try {
    response = await fetch('/admin/session-token', {
      credentials: 'same-origin',
      cache: 'no-store',
      headers: { accept: 'text/plain' },
    });
  } catch {
    throw new NoSessionError();
  }
  const token = response.ok ? (await response.text()).trim() : '';
  // A page that is not the demo store may answer 200 with HTML; a token has no spaces or tags.
  if (!token || /[\s<]/.test(token)) throw new NoSessionError();
  return token;
}

/** The token's claims, read without verification (the service verifies it). */
export function claims(token: string): Record<string, unknown> | null {
  const payload = token.split('.')[1];
  if (!payload) return null;
  try {
    const b64 = payload
      .replace(/-/g, '+')
      .replace(/_/g, '/')
      .padEnd(Math.ceil(payload.length / 4) * 4, '=');
    const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
    const value: unknown = JSON.parse(new TextDecoder().decode(bytes));
    return value && typeof value === 'object' ? (value as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

const normalize = (shop: string) =>
  shop
    .trim()
    .toLowerCase()
    .replace(/^https?:\/\//, '')
    .replace(/\/.*$/, '');

/**
 * The shop the dashboard works on: the page's `shop` parameter, else the token's `dest` claim.
 * Also proves that a token can be had, so a page opened outside the admin fails here, at once.
 */
export async function resolveShop(search: string = location.search): Promise<string> {
  const token = await sessionToken();
  const fromQuery = new URLSearchParams(search).get('shop');
  if (fromQuery && normalize(fromQuery)) return normalize(fromQuery);
  const dest = claims(token)?.dest;
  if (typeof dest === 'string' && normalize(dest)) return normalize(dest);
  throw new NoSessionError();
}
