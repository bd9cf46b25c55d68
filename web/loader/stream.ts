/**
 * A processed video's HLS renditions, played through Media Source Extensions.
 *
 * The service makes a ladder of rungs, each a playlist of 2 s fMP4 segments carrying pictures and
 * sound. A browser's own HLS player (Chromium's, Safari's) starts from the master playlist, walks
 * four requests in a row before the first frame, waits for a whole segment, then fills its buffer
 * as fast as the network allows: on a phone that is megabytes nobody may watch. Here instead:
 * - while a card is on screen, `warm` reads the master playlist, picks the rung for the screen
 *   and keeps that rung's segment list and init segment (about 2 KB): no picture loads;
 * - on a tap, `stream` appends the init segment and the first segment as its bytes arrive, so the
 *   first frame shows after one round trip and its first keyframe;
 * - it then fetches a segment only when less than max(2 s, 3 × the last segment's fetch time) is
 *   buffered ahead, so a shopper who watches 5 s downloads about 5 s and never the whole file;
 * - a detached player (`emptied`) aborts its fetch at once.
 * Where Media Source Extensions cannot play the rung, the caller falls back to the browser's HLS
 * or the progressive MP4.
 */
import type { Video } from './types';
import { url } from './util';

interface Segment {
  uri: string;
  start: number;
  end: number;
}

interface Rung {
  type: string;
  init: ArrayBuffer;
  segments: Segment[];
}

/** Per master playlist: its rung for this screen, once read (null: not playable here). */
const rungs = new Map<string, Promise<Rung | null>>();

/** Device pixels per CSS pixel worth paying a phone's network for on a moving picture. */
const MAX_DENSITY = 1.25;
/** Buffered seconds ahead under which the next segment is fetched (at least). */
const AHEAD_S = 2;

const get = async (u: string, init?: RequestInit): Promise<Response> => {
  const r = await fetch(u, init);
  if (!r.ok) throw new Error(`${r.status} ${u}`);
  return r;
};

async function read(hls: string): Promise<Rung | null> {
  const low = { priority: 'low' } as RequestInit;
  const lines = (await (await get(hls, low)).text()).split(/\r?\n/);
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
  for (const line of (await (await get(base, low)).text()).split(/\r?\n/)) {
    const map = /^#EXT-X-MAP:URI="([^"]+)"/.exec(line);
    if (map) init = map[1]!;
    else if (line.startsWith('#EXTINF:')) duration = parseFloat(line.slice(8));
    else if (line && line[0] !== '#') {
      segments.push({ uri: new URL(line, base).href, start, end: (start += duration) });
    }
  }
  if (!init || !segments.length) return null;
  return { type: pick.type, segments, init: await (await get(new URL(init, base).href, low)).arrayBuffer() };
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
            const body = (await get(next.uri, { signal: stop.signal })).body;
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
