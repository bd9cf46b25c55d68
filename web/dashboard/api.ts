/**
 * The dashboard API client. Every call carries a fresh session token; failures become
 * {@link ApiError}s. Nothing is retried: a merchant's click maps to exactly one request.
 */
import { sessionToken } from './session';

const BASE = '/app/api';

/** The service's error body, `{ success: false, error: { code, message } }`, or a transport failure. */
export class ApiError extends Error {
  readonly code: string;
  readonly status: number;
  /**
   * For a `VALIDATION_ERROR`, the field the message names (`title`, `videoIds`,
   * `rules.productIds[2]`): the text before the message's first colon.
   */
  readonly field: string | null;

  constructor(code: string, message: string, status: number) {
    super(message);
    this.name = 'ApiError';
    this.code = code;
    this.status = status;
    const colon = message.indexOf(':');
    this.field = code === 'VALIDATION_ERROR' && colon > 0 ? message.slice(0, colon).trim() : null;
  }

  /** The message without its leading field name, for display beside that field. */
  get detail(): string {
    if (!this.field) return this.message;
    const rest = this.message.slice(this.message.indexOf(':') + 1).trim();
    return rest ? rest.charAt(0).toUpperCase() + rest.slice(1) : this.message;
  }
}

export type Query = Record<string, string | number | null | undefined>;

/** `/shops/{shop}/…` with every segment escaped. */
export const shopPath = (shop: string, ...parts: string[]): string =>
  ['/shops', shop, ...parts].map((p, i) => (i === 0 ? p : encodeURIComponent(p))).join('/');

/** The full URL of an API path, as `fetch` (and the upload client) ask for it. */
export function apiUrl(path: string, query?: Query): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(query ?? {})) if (v != null && v !== '') q.set(k, String(v));
  const s = q.toString();
  return `${BASE}${path}${s ? `?${s}` : ''}`;
}

const STATUS_TEXT: Record<number, string> = {
  401: 'Your session has ended. Reload the page.',
  404: 'Not found. It may have been deleted.',
  429: 'Too many requests. Wait a moment and try again.',
  503: 'videoapp is briefly unavailable. Try again in a moment.',
};

/** The error a failed answer's status and body (text) mean. */
export function errorOf(status: number, body: string): ApiError {
  let parsed: unknown = null;
  try {
    parsed = JSON.parse(body);
  } catch {
    /* not our JSON error body */
  }
  const error = (parsed as { error?: { code?: unknown; message?: unknown } } | null)?.error;
  if (error && typeof error.code === 'string' && typeof error.message === 'string') {
    return new ApiError(error.code, error.message, status);
  }
  const text = STATUS_TEXT[status] ?? `The request failed (HTTP ${status}). Try again.`;
  return new ApiError(`HTTP_${status}`, text, status);
}

async function toError(response: Response): Promise<ApiError> {
  let body = '';
  try {
    body = await response.text();
  } catch {
    /* the body is lost: the status still says something */
  }
  return errorOf(response.status, body);
}

export const networkError = (): ApiError =>
  new ApiError('NETWORK_ERROR', 'Could not reach videoapp. Check your connection and try again.', 0);

/** The `authorization` header of one request: a fresh session token each time. */
export const authorization = async (): Promise<string> => `Bearer ${await sessionToken()}`;

interface Options {
  query?: Query;
  body?: unknown;
  /** A body sent as it is (a file), with its content type, instead of `body` as JSON. */
  raw?: { body: Blob | string; type: string };
  accept?: string;
}

async function send(method: string, path: string, { query, body, raw, accept = 'application/json' }: Options = {}): Promise<Response> {
  const headers: Record<string, string> = { authorization: await authorization(), accept };
  if (raw) headers['content-type'] = raw.type;
  else if (body !== undefined) headers['content-type'] = 'application/json';
  let response: Response;
  try {
    response = await fetch(apiUrl(path, query), {
      method,
      headers,
      body: raw ? raw.body : body === undefined ? null : JSON.stringify(body),
      credentials: 'same-origin',
    });
  } catch {
    throw networkError();
  }
  if (!response.ok) throw await toError(response);
  return response;
}

const json = async <T>(response: Response): Promise<T> => (await response.json()) as T;

/**
 * Answers asked for before the page that reads them is drawn (boot.ts asks for the home page's
 * while React renders it), by URL: the page's `get` of the same URL takes the answer instead of
 * asking again. Each is taken once.
 */
let early = new Map<string, Promise<unknown>>();

/** Starts `GET path?query` now, for a later {@link get} of the same URL to take. */
export function prefetch(path: string, query?: Query): void {
  const url = apiUrl(path, query);
  if (early.has(url)) return;
  const answer = send('GET', path, { query }).then(json);
  answer.catch(() => undefined);
  early.set(url, answer);
}

/** The answers asked for early, to hand to another copy of this module (boot.js is a bundle of its own). */
export const earlyAnswers = (): Map<string, Promise<unknown>> => early;

/** Takes over the answers another copy of this module asked for early. */
export function adoptEarlyAnswers(answers: Map<string, Promise<unknown>>): void {
  early = answers;
}

export async function get<T>(path: string, query?: Query): Promise<T> {
  const url = apiUrl(path, query);
  const answer = early.get(url);
  if (answer) {
    early.delete(url);
    return answer as Promise<T>;
  }
  return json<T>(await send('GET', path, { query }));
}

export const post = async <T>(path: string, body: unknown): Promise<T> => json<T>(await send('POST', path, { body }));

export const patch = async <T>(path: string, body: unknown): Promise<T> => json<T>(await send('PATCH', path, { body }));

export async function del(path: string): Promise<void> {
  await send('DELETE', path);
}

/** `PUT` of a file as it is (`type` its content type); the answer's JSON. */
export const putFile = async <T>(path: string, file: Blob | string, type: string): Promise<T> =>
  json<T>(await send('PUT', path, { raw: { body: file, type } }));

/** `DELETE` whose answer is JSON. */
export const delJSON = async <T>(path: string): Promise<T> => json<T>(await send('DELETE', path));

/** The file name a `Content-Disposition` header gives, if any. */
export function dispositionName(header: string | null): string | null {
  if (!header) return null;
  const extended = /filename\*\s*=\s*(?:UTF-8|utf-8)''([^;]+)/.exec(header);
  if (extended?.[1]) {
    try {
      return decodeURIComponent(extended[1].trim());
    } catch {
      /* fall through to the plain name */
    }
  }
  const plain = /filename\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^;\s]+))/.exec(header);
  const name = plain?.[1]?.replace(/\\(.)/g, '$1') ?? plain?.[2];
  // Only a base name is used, whatever the header says.
  return name ? name.replace(/[/\\]/g, '_') : null;
}

/**
 * Fetches a CSV export with the session token and saves it under the name the service gives.
 * A plain link could not carry the token, hence the Blob. Resolves to the file name.
 */
export async function download(path: string, query: Query, fallbackName = 'videoapp-export.csv'): Promise<string> {
  const response = await send('GET', path, { query: { ...query, format: 'csv' }, accept: 'text/csv' });
  const name = dispositionName(response.headers.get('content-disposition')) || fallbackName;
  const blob = await response.blob();
  const href = URL.createObjectURL(blob);
  const a = document.createElement('a');
  a.href = href;
  a.download = name;
  a.hidden = true;
  document.body.append(a);
  a.click();
  a.remove();
  // Revoked later: some browsers read the blob after click() returns.
  setTimeout(() => URL.revokeObjectURL(href), 30_000);
  return name;
}
