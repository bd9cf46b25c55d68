// A real tus client (tus-js-client, the one the dashboard uses, here in Node) against the admin
// API's uploads: an upload cut off midway resumes from where the service says it stands, on a
// new client with the upload's URL, and the video it makes is processed until it is ready.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { after, describe, it } from 'node:test';
import * as tus from 'tus-js-client';

import { config, shopDomain, theService, waitFor } from './stack.mjs';

const run = promisify(execFile);
const CHUNK = 256 * 1024;

async function admin(method, route, body) {
  const response = await fetch(`${theService().base}/admin/v1${route}`, {
    method,
    headers: { authorization: `Bearer ${config.adminToken}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : null };
}

/** Uploads `file` from `uploadUrl` (or a new upload), stopping after `stopAfter` bytes if given. */
function upload(file, { endpoint, uploadUrl, stopAfter }) {
  return new Promise((resolve, reject) => {
    const progress = [];
    const transfer = new tus.Upload(file, {
      endpoint,
      uploadUrl,
      chunkSize: CHUNK,
      retryDelays: [],
      headers: { authorization: `Bearer ${config.adminToken}` },
      metadata: { title: 'Resumed in Node', filename: 'node.mp4' },
      onProgress(sent) {
        progress.push(sent);
        if (stopAfter !== undefined && sent >= stopAfter) {
          transfer.abort().then(() => resolve({ url: transfer.url, progress, finished: false }), reject);
        }
      },
      onSuccess: () => resolve({ url: transfer.url, progress, finished: true }),
      onError: reject,
    });
    transfer.start();
  });
}

describe('a tus client uploads to the admin API', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'videoapp-e2e-tus-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('resumes an upload cut off midway and the video becomes ready', async () => {
    const shop = shopDomain('tus');
    assert.equal((await admin('PUT', `/shops/${shop}`, { name: 'Tus' })).status, 201);
    const file = path.join(dir, 'clip.mp4');
    await run('ffmpeg', [
      '-loglevel',
      'error',
      '-y',
      '-f',
      'lavfi',
      '-i',
      'testsrc2=size=360x640:rate=30',
      '-f',
      'lavfi',
      '-i',
      'sine',
      '-t',
      '4',
      '-c:v',
      'libx264',
      '-b:v',
      '2M',
      '-pix_fmt',
      'yuv420p',
      '-c:a',
      'aac',
      '-shortest',
      file,
    ]);
    const bytes = readFileSync(file);
    assert.ok(bytes.length > 3 * CHUNK, `the file is ${bytes.length} bytes`);
    const endpoint = `${theService().base}/admin/v1/shops/${shop}/uploads`;

    const first = await upload(bytes, { endpoint, stopAfter: CHUNK });
    assert.equal(first.finished, false);
    const id = first.url.split('/').pop();
    const { body: uploading } = await admin('GET', `/shops/${shop}/videos/${id}`);
    assert.equal(uploading.processing.state, 'uploading');

    // A new client, as after a reload: it asks where the upload stands and sends the rest.
    const second = await upload(bytes, { endpoint, uploadUrl: first.url });
    assert.equal(second.finished, true);
    assert.ok(second.progress[0] >= CHUNK, `resumed from ${second.progress[0]}, not the start`);

    const ready = await waitFor(
      async () => {
        const { body } = await admin('GET', `/shops/${shop}/videos/${id}`);
        assert.notEqual(body.processing.state, 'failed', JSON.stringify(body.processing));
        return body.processing.state === 'ready' ? body : null;
      },
      { timeout: 180_000, message: 'the uploaded video to be ready' },
    );
    assert.equal(ready.title, 'Resumed in Node');
    const mp4 = await fetch(ready.videoUrl);
    assert.equal(mp4.status, 200);
    assert.equal(Number(mp4.headers.get('content-length')) > 0, true);
  });
});
