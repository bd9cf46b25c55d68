/**
 * A processed video's HLS renditions, played through Media Source Extensions.
 *
 * The service makes a ladder of rungs, each a playlist of 2 s fMP4 segments carrying pictures and
 * sound. A browser's own HLS player (Chromium's, Safari's) starts from the master playlist, walks
 * four requests in a row before the first frame, waits for a whole segment, then fills its buffer
 * as fast as the network allows: on a phone that is megabytes nobody may watch. Here instead:
 * - while a card is on screen, `warm` reads the master playlist, picks the rung for the screen
 *   and keeps that rung's segment list, its init segment and, unless Save-Data is on, the first
 *   quarter second of its first segment (a fragment of its own, ~50–100 KB at 540 px);
 * - on a tap, `stream` appends those at once, so the first frame shows without waiting for the
 *   network, and the rest of the segment as its bytes arrive;
 * - it then fetches a segment only when less than max(2 s, 3 × the last segment's fetch time) is
 *   buffered ahead, so a shopper who watches 5 s downloads about 5 s and never the whole file;
 * - a detached player (`emptied`) aborts its fetch at once.
 * Where Media Source Extensions cannot play the rung, the caller falls back to the browser's HLS
 * or the progressive MP4.
 */
import type { Video } from './types';
import { saveData, url } from './util';

interface Segment {
  uri: string;
  start: number;
  end: number;
}

interface Rung {
  type: string;
  init: ArrayBuffer;
  segments: Segment[];
  /** The first segment's first fragment (its first quarter second), read ahead of a tap. */
  head?: Uint8Array<ArrayBuffer>;
}

/** Per master playlist: its rung for this screen, once read (null: not playable here). */
const rungs = new Map<string, Promise<Rung | null>>();

/** Device pixels per CSS pixel worth paying a phone's network for on a moving picture. */
const MAX_DENSITY = 1.25;
/** Buffered seconds ahead under which the next segment is fetched (at least). */
const AHEAD_S = 2;
/** What is read ahead of a tap waits for everything the page itself asks for. */
const LOW = { priority: 'low' } as RequestInit;

const get = async (u: string, init?: RequestInit): Promise<Response> => {
  const r = await fetch(u, init);
  if (!r.ok) throw new Error(`${r.status} ${u}`);
  return r;
};

async function read(hls: string): Promise<Rung | null> {
  const lines = (await (await get(hls, LOW)).text()).split(/\r?\n/);
  const ladder = lines
    .flatMap((l, i) => {
      const m = /RESOLUTION=(\d+)x(\d+)/.exec(l);
      const codecs = /CODECS="([^"]+)"/.exec(l);
      const next = lines[i + 1];
      return m && codecs && next ? [{ w: +m[1]!, h: +m[2]!, uri: next, type: `video/mp4; codecs="${codecs[1]}"` }] : [];
    })
    .sort((a, b) => Math.min(a.w, a.h) - Math.min(b.w, b.h));
  const top = ladder[ladder.length - 1];
  if (!top || !MediaSource.isTypeSupported(top.type)) return null;
  // The short side the player shows, in device pixels: the same for every rung (one aspect).
  const need = Math.min(innerWidth / top.w, innerHeight / top.h) * Math.min(top.w, top.h) * Math.min(devicePixelRatio || 1, MAX_DENSITY);
  const pick = ladder.find((r) => Math.min(r.w, r.h) >= need * 0.9) || top;
  const base = new URL(pick.uri, hls).href;
  const segments: Segment[] = [];
  let init = '';
  let start = 0;
  let duration = 0;
  for (const line of (await (await get(base, LOW)).text()).split(/\r?\n/)) {
    const map = /^#EXT-X-MAP:URI="([^"]+)"/.exec(line);
    if (map) init = map[1]!;
    else if (line.startsWith('#EXTINF:')) duration = parseFloat(line.slice(8));
    else if (line && line[0] !== '#') {
      segments.push({ uri: new URL(line, base).href, start, end: (start += duration) });
    }
  }
  if (!init || !segments.length) return null;
  const rung: Rung = { type: pick.type, segments, init: await (await get(new URL(init, base).href, LOW)).arrayBuffer() };
  if (!saveData()) rung.head = await firstFragment(segments[0]!.uri).catch(() => undefined);
  return rung;
}

/** Bytes `from` to `to` (inclusive) of `u`, or `from` to its end. */
async function range(u: string, from: number, to: number | '', init?: RequestInit): Promise<Response> {
  const r = await get(u, { ...init, headers: { range: `bytes=${from}-${to}` } });
  if (r.status !== 206) throw new Error(`no range of ${u}`);
  return r;
}

/**
 * The first fragment of a segment (the service makes it the segment's first quarter second):
 * its box headers come first, then exactly its bytes.
 */
async function firstFragment(u: string): Promise<Uint8Array<ArrayBuffer> | undefined> {
  const top = new Uint8Array(await (await range(u, 0, 4095, LOW)).arrayBuffer());
  const view = new DataView(top.buffer);
  let size: number;
  for (let at = 0; at + 8 <= top.length; at += size) {
    size = view.getUint32(at);
    if (size < 8) return;
    if (String.fromCharCode(...top.subarray(at + 4, at + 8)) !== 'mdat') continue;
    const end = at + size;
    if (end <= top.length) return top.subarray(0, end);
    const rest = new Uint8Array(await (await range(u, top.length, end - 1, LOW)).arrayBuffer());
    const head = new Uint8Array(end);
    head.set(top);
    head.set(rest, top.length);
    return head;
  }
  return undefined;
}

/** Whether this browser can stream `v` here (Media Source Extensions, and renditions). */
export const streamable = (v: Video): boolean => !!(url(v.hlsUrl) && window.MediaSource);

/** Reads ahead of a tap what `stream` needs for `v`, once per video and page. */
export function warm(v: Video): Promise<Rung | null> {
  const hls = url(v.hlsUrl);
  if (!hls || !streamable(v)) return Promise.resolve(null);
  let rung = rungs.get(hls);
  if (!rung) {
    rung = read(hls).catch(() => null);
    rungs.set(hls, rung);
  }
  return rung;
}

/**
 * Plays `v`'s rung in `el`; `fail` is called (once) when it cannot, unless the player was
 * detached meanwhile.
 */
export function stream(el: HTMLVideoElement, v: Video, fail: () => void): void {
  const source = new MediaSource();
  const stop = new AbortController();
  const loaded = new Set<Segment>();
  let busy = false;
  let last = 0;
  const failed = () => {
    if (!stop.signal.aborted) {
      stop.abort();
      fail();
    }
  };
  el.addEventListener('emptied', () => stop.abort(), { once: true });
  el.src = URL.createObjectURL(source);
  source.addEventListener(
    'sourceopen',
    async () => {
      try {
        URL.revokeObjectURL(el.src);
        const rung = await warm(v);
        if (!rung || stop.signal.aborted) throw new Error('no rung');
        const buffer = source.addSourceBuffer(rung.type);
        const append = (bytes: BufferSource) =>
          new Promise((done, no) => {
            buffer.addEventListener('updateend', done, { once: true });
            buffer.addEventListener('error', no, { once: true });
            buffer.appendBuffer(bytes);
          });
        const pump = async (): Promise<void> => {
          if (busy || stop.signal.aborted || source.readyState !== 'open') return;
          const now = el.currentTime;
          const next = rung.segments.find((s) => s.end > now + 0.05 && !loaded.has(s));
          if (!next) {
            if (loaded.size === rung.segments.length && !buffer.updating) source.endOfStream();
            return;
          }
          if (next.start - now > Math.max(AHEAD_S, 3 * last)) return;
          busy = true;
          try {
            const began = performance.now();
            // The first segment's first fragment may be here already: the rest follows it.
            const head = next === rung.segments[0] ? rung.head : undefined;
            if (head) await append(head);
            const signal = { signal: stop.signal };
            const body = (await (head ? range(next.uri, head.length, '', signal) : get(next.uri, signal))).body;
            if (!body) throw new Error('no body');
            // Appended as it arrives: the first frame needs the first keyframe, not the segment.
            const reader = body.getReader();
            for (let r = await reader.read(); !r.done; r = await reader.read()) await append(r.value);
            loaded.add(next);
            last = (performance.now() - began) / 1000;
          } finally {
            busy = false;
          }
          return pump();
        };
        const go = () => pump().catch(failed);
        await append(rung.init);
        el.addEventListener('timeupdate', go);
        el.addEventListener('seeking', go);
        await pump();
      } catch {
        failed();
      }
    },
    { once: true },
  );
}
