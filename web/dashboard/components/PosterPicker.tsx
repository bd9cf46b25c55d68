/**
 * The poster of a video made from a file: the frame shoppers see before it plays. The merchant
 * stops the processed video at a moment and makes the poster from it.
 */
import { BlockStack, Button, InlineError, InlineStack, Text } from '@shopify/polaris';
import { useId, useRef, useState } from 'react';

import { post, shopPath } from '../api';
import { useShop } from '../context';
import type { Video } from '../types';

/** "0:03.2" for 3200 ms: a frame is chosen to the tenth of a second. */
export function formatMoment(ms: number): string {
  const tenths = Math.max(0, Math.round(ms / 100));
  const seconds = Math.floor(tenths / 10);
  return `${Math.floor(seconds / 60)}:${String(seconds % 60).padStart(2, '0')}.${tenths % 10}`;
}

export function PosterPicker({
  video,
  making,
  onChosen,
}: {
  video: Video;
  /** True while the service makes the poster last asked for. */
  making: boolean;
  onChosen: (video: Video, atMs: number) => void;
}) {
  const { domain } = useShop();
  const player = useRef<HTMLVideoElement>(null);
  const [atMs, setAtMs] = useState(0);
  const [saving, setSaving] = useState(false);
  const [error, setError] = useState<Error | null>(null);
  const errorId = useId();
  const poster = video.posterUrl || video.thumbnail;

  const follow = () => setAtMs(Math.round((player.current?.currentTime ?? 0) * 1000));

  const use = async () => {
    const el = player.current;
    if (!el) return;
    el.pause();
    const moment = Math.round(el.currentTime * 1000);
    setSaving(true);
    setError(null);
    try {
      onChosen(await post<Video>(shopPath(domain, 'videos', video.id, 'poster'), { atMs: moment }), moment);
    } catch (e) {
      setError(e instanceof Error ? e : new Error(String(e)));
    } finally {
      setSaving(false);
    }
  };

  return (
    <BlockStack gap="300">
      <Text as="h2" variant="headingMd">
        Poster
      </Text>
      <Text as="p" tone="subdued">
        Shoppers see the poster before the video plays. Stop the video at the moment you like, then use that frame.
      </Text>
      <InlineStack gap="400" blockAlign="start">
        <figure className="vd-poster">
          {poster ? <img src={poster} alt={`Poster of ${video.title}`} data-testid="poster-image" /> : <span className="vd-thumb-empty" />}
          <figcaption>
            <Text as="span" variant="bodySm" tone="subdued">
              {making
                ? 'Making the new poster…'
                : video.posterTimeMs == null
                  ? 'Chosen by videoapp'
                  : `The frame at ${formatMoment(video.posterTimeMs)}`}
            </Text>
          </figcaption>
        </figure>
        <video
          ref={player}
          className="vd-poster-player"
          src={video.videoUrl}
          poster={poster || undefined}
          preload="metadata"
          controls
          muted
          playsInline
          aria-label={`${video.title}: stop at the frame to use as the poster`}
          onTimeUpdate={follow}
          onSeeked={follow}
        />
      </InlineStack>
      <InlineStack gap="300" blockAlign="center">
        <Button
          onClick={use}
          loading={saving}
          disabled={making}
          accessibilityLabel={`Use this frame (${formatMoment(atMs)}) as the poster`}
        >
          Use this frame
        </Button>
        <Text as="span" tone="subdued" numeric>
          {formatMoment(atMs)}
        </Text>
      </InlineStack>
      {error && <InlineError message={error.message} fieldID={errorId} />}
    </BlockStack>
  );
}
