/** Videos being uploaded or processed, followed until they are ready or have failed. */
import { useEffect, useRef, useState } from 'react';

import { ApiError, get, shopPath } from './api';
import type { Video } from './types';

/** How often a video on its way is read again. */
export const POLL_MS = 2000;

/** True while the service is still working on the video (or receiving it). */
export const isOnItsWay = (v: Video): boolean =>
  v.processing?.state === 'uploading' || v.processing?.state === 'queued' || v.processing?.state === 'processing';

/** What a poll learned of one video: its newest answer, for the `base` it was asked about. */
interface Learned {
  base: Video;
  now: Video;
}

/**
 * `videos`, each replaced by a newer answer of the service while `waiting` holds for it
 * (by default: while it is on its way), read again every {@link POLL_MS}. A video is read for
 * the object given: a caller that passes a new object (a reload, the answer to a retry) starts
 * over from it.
 */
export function useLiveVideos(domain: string, videos: Video[], waiting: (v: Video) => boolean = isOnItsWay): Video[] {
  const [learned, setLearned] = useState<Map<string, Learned>>(() => new Map());
  const [gone, setGone] = useState<Set<string>>(() => new Set());
  const [round, setRound] = useState(0);

  const current = videos.map((v) => {
    const l = learned.get(v.id);
    return l && l.base === v ? l.now : v;
  });
  const due = current.filter((v) => !gone.has(v.id) && waiting(v));
  const dueKey = due.map((v) => v.id).join(' ');
  // The videos given at the latest render: a round reads them when it starts, but a new array
  // of the same videos (most callers make one each render) does not start a round.
  const given = useRef(videos);
  useEffect(() => {
    given.current = videos;
  }, [videos]);

  useEffect(() => {
    if (!dueKey) return;
    let live = true;
    const bases = new Map(given.current.map((v) => [v.id, v]));
    const timer = setTimeout(async () => {
      const ids = dueKey.split(' ');
      const answers = await Promise.allSettled(ids.map((id) => get<Video>(shopPath(domain, 'videos', id))));
      if (!live) return;
      setLearned((before) => {
        const next = new Map(before);
        answers.forEach((a, i) => {
          const base = bases.get(ids[i]!);
          if (a.status === 'fulfilled' && base) next.set(base.id, { base, now: a.value });
        });
        return next;
      });
      const deleted = ids.filter((_, i) => {
        const a = answers[i];
        return a?.status === 'rejected' && a.reason instanceof ApiError && (a.reason.status === 404 || a.reason.status === 401);
      });
      if (deleted.length) setGone((before) => new Set([...before, ...deleted]));
      setRound((r) => r + 1);
    }, POLL_MS);
    return () => {
      live = false;
      clearTimeout(timer);
    };
    // `dueKey` stands for `due`; `round` asks again after each answer.
  }, [domain, dueKey, round]);

  return current;
}

/** One video by its id, read at once and then followed like {@link useLiveVideos}'. */
export function useLiveVideo(
  domain: string,
  id: string | null,
  waiting?: (v: Video) => boolean,
): { video: Video | null; error: Error | null; replace: (v: Video) => void } {
  const [base, setBase] = useState<Video | null>(null);
  const [error, setError] = useState<Error | null>(null);

  useEffect(() => {
    if (!id) return;
    let live = true;
    get<Video>(shopPath(domain, 'videos', id)).then(
      (v) => live && setBase(v),
      (e: unknown) => live && setError(e instanceof Error ? e : new Error(String(e))),
    );
    return () => {
      live = false;
    };
  }, [domain, id]);

  const [video] = useLiveVideos(domain, base ? [base] : [], waiting);
  return { video: video ?? null, error, replace: setBase };
}
