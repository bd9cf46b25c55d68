/**
 * Video files on their way to the service, over the tus resumable upload protocol. The uploads
 * live outside React, so they go on while the merchant moves between pages; a reload stops them,
 * and the same file chosen again continues where it stopped (tus-js-client keeps each upload's
 * URL in localStorage under the file's fingerprint).
 */
import { useSyncExternalStore } from 'react';
import * as tus from 'tus-js-client';

import { ApiError, apiUrl, authorization, errorOf, networkError, shopPath } from './api';

/** The size of one PATCH: large enough to be quick, small enough to lose little when cut. */
const CHUNK_BYTES = 8 * 1024 * 1024;

export type UploadState = 'uploading' | 'paused' | 'done' | 'failed';

/**
 * A video on its way in from this page: a file being uploaded, or a link the service imports
 * (which is `done` at once: the service fetches the file itself).
 */
export interface Upload {
  /** This page's own key for the upload (a file may be chosen twice). */
  key: string;
  shop: string;
  source: 'file' | 'link';
  /** The file's name, or the link. */
  fileName: string;
  title: string;
  state: UploadState;
  bytesSent: number;
  bytesTotal: number;
  /** The video the upload makes, known from the service's first answer. */
  videoId: string | null;
  error: ApiError | null;
  /** True when an earlier, unfinished upload of the same file was continued. */
  resumed: boolean;
}

interface Entry {
  upload: Upload;
  /** None for an import. */
  client: tus.Upload | null;
}

const entries = new Map<string, Entry>();
let snapshot: Upload[] = [];
const listeners = new Set<() => void>();
let counter = 0;

function publish(): void {
  snapshot = [...entries.values()].map((e) => e.upload);
  for (const listener of listeners) listener();
}

function update(key: string, change: Partial<Upload>): void {
  const entry = entries.get(key);
  if (!entry) return;
  entry.upload = { ...entry.upload, ...change };
  publish();
}

const subscribe = (listener: () => void) => {
  listeners.add(listener);
  return () => listeners.delete(listener);
};

/** This page's uploads to `shop`, oldest first; re-renders on every change. */
export function useUploads(shop: string): Upload[] {
  const all = useSyncExternalStore(subscribe, () => snapshot);
  return all.filter((u) => u.shop === shop);
}

/** The service's endpoint for new uploads of `shop`. */
const endpointOf = (shop: string) => apiUrl(shopPath(shop, 'uploads'));

/** The upload's URL ends in the id of the video it makes. */
export const videoIdOf = (uploadUrl: string | null): string | null => {
  const last = (uploadUrl ?? '')
    .replace(/[?#].*$/, '')
    .split('/')
    .filter(Boolean)
    .pop();
  return last ? decodeURIComponent(last) : null;
};

/** "summer-dress.mov" → "summer-dress": a title the merchant can change later. */
export const titleFromFileName = (name: string): string => name.replace(/\.[^.]+$/, '').trim() || name;

function reason(error: Error | tus.DetailedError): ApiError {
  const response = 'originalResponse' in error ? error.originalResponse : null;
  if (!response) return networkError();
  return errorOf(response.getStatus(), response.getBody() ?? '');
}

/** Options every request of `shop`'s uploads shares: the session token, fresh for each one. */
const requestOptions = (shop: string): tus.UploadOptions => ({
  endpoint: endpointOf(shop),
  onBeforeRequest: async (req) => {
    req.setHeader('authorization', await authorization());
  },
});

/** Starts uploading `file` to `shop`, continuing an earlier upload of the same file if there is one. */
export function startUpload(shop: string, file: File): void {
  const key = `upload-${++counter}`;
  const title = titleFromFileName(file.name);
  const client = new tus.Upload(file, {
    ...requestOptions(shop),
    metadata: { title, filename: file.name },
    chunkSize: CHUNK_BYTES,
    // The upload's URL is learned (and stored for resuming) before any byte is sent: data sent
    // with the creation request would be lost, with the URL, if the page closed during it.
    uploadDataDuringCreation: false,
    removeFingerprintOnSuccess: true,
    retryDelays: [0, 1000, 3000, 5000, 10000],
    onUploadUrlAvailable: () => update(key, { videoId: videoIdOf(client.url) }),
    onProgress: (bytesSent, bytesTotal) => update(key, { bytesSent, bytesTotal }),
    onSuccess: () => update(key, { state: 'done', error: null, videoId: videoIdOf(client.url) }),
    onError: (error) => update(key, { state: 'failed', error: reason(error) }),
  });
  entries.set(key, {
    client,
    upload: {
      key,
      shop,
      source: 'file',
      fileName: file.name,
      title,
      state: 'uploading',
      bytesSent: 0,
      bytesTotal: file.size,
      videoId: null,
      error: null,
      resumed: false,
    },
  });
  publish();
  client
    .findPreviousUploads()
    .then((previous) => {
      const earlier = previous[0];
      if (earlier) {
        client.resumeFromPreviousUpload(earlier);
        update(key, { resumed: true });
      }
    })
    .catch(() => {
      /* no stored uploads to continue: a new one */
    })
    .finally(() => client.start());
}

/** Shows a video the service imports from a link among this page's arrivals. */
export function addImport(shop: string, url: string, videoId: string, title: string): void {
  const key = `import-${++counter}`;
  entries.set(key, {
    client: null,
    upload: {
      key,
      shop,
      source: 'link',
      fileName: url,
      title,
      state: 'done',
      bytesSent: 0,
      bytesTotal: 0,
      videoId,
      error: null,
      resumed: false,
    },
  });
  publish();
}

export function pauseUpload(key: string): void {
  const entry = entries.get(key);
  if (!entry?.client || entry.upload.state !== 'uploading') return;
  update(key, { state: 'paused' });
  // Without termination: the bytes sent so far stay on the service.
  entry.client.abort(false).catch(() => {});
}

/** Continues a paused or failed upload from the service's offset. */
export function resumeUpload(key: string): void {
  const entry = entries.get(key);
  if (!entry?.client || (entry.upload.state !== 'paused' && entry.upload.state !== 'failed')) return;
  update(key, { state: 'uploading', error: null });
  entry.client.start();
}

/**
 * True when trying the same upload again may help: the connection or the service failed. A
 * refusal of the file itself (too large, not a video, over the quota) stands.
 */
export const canTryAgain = (error: ApiError | null): boolean =>
  !error || error.status === 0 || error.status >= 500 || error.status === 409 || error.status === 423 || error.status === 429;

/** Uploads of `shop` that an earlier page started and did not finish. */
export interface Unfinished {
  storageKey: string;
  /** The video the upload makes. */
  videoId: string | null;
  fileName: string;
  bytesTotal: number | null;
  startedAt: string;
  uploadUrl: string | null;
}

export async function unfinishedUploads(shop: string): Promise<Unfinished[]> {
  if (!tus.canStoreURLs) return [];
  const endpoint = endpointOf(shop);
  try {
    const all = await tus.defaultOptions.urlStorage.findAllUploads();
    return (
      all
        // The fingerprint, part of the storage key, ends with the endpoint it was uploaded to.
        .filter((p) => p.urlStorageKey.includes(`-${endpoint}::`))
        .map((p) => ({
          storageKey: p.urlStorageKey,
          videoId: videoIdOf(p.uploadUrl),
          fileName: p.metadata.filename || p.metadata.title || 'A video file',
          bytesTotal: p.size,
          startedAt: p.creationTime,
          uploadUrl: p.uploadUrl,
        }))
    );
  } catch {
    return [];
  }
}

/** Gives up an unfinished upload: the service removes what it received, this page forgets it. */
export async function discardUnfinished(shop: string, unfinished: Unfinished): Promise<void> {
  if (unfinished.uploadUrl) {
    await tus.Upload.terminate(unfinished.uploadUrl, { ...requestOptions(shop), retryDelays: [0, 1000] }).catch(() => {
      /* already expired or gone: nothing is left to remove */
    });
  }
  await tus.defaultOptions.urlStorage.removeUpload(unfinished.storageKey);
}
