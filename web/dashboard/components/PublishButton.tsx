/**
 * Publishes a processed draft video from where the merchant is (a finished upload, a widget's
 * list of videos): a draft shows nowhere on the store, so this is the step that makes it show.
 */
import { Button, InlineError } from '@shopify/polaris';
import { useId, useState } from 'react';

import { patch, shopPath } from '../api';
import { useShop, useToast } from '../context';
import type { Video } from '../types';

/** Whether `video` can be published now: a draft whose file, if it has one, is processed. */
function canPublish(video: Video): boolean {
  return video.status !== 'PUBLISHED' && (!video.processing || video.processing.state === 'ready');
}

export function PublishButton({ video, onPublished }: { video: Video; onPublished: (video: Video) => void }) {
  const { domain } = useShop();
  const notify = useToast();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const errorId = useId();
  if (!canPublish(video)) return null;

  const publish = async () => {
    setBusy(true);
    setError(null);
    try {
      const published = await patch<Video>(shopPath(domain, 'videos', video.id), { status: 'PUBLISHED' });
      notify(`Published ${published.title}: it can show in your store`);
      onPublished(published);
    } catch (e) {
      setError(e instanceof Error ? e.message : String(e));
    } finally {
      setBusy(false);
    }
  };

  return (
    <>
      <Button size="slim" variant="primary" onClick={publish} loading={busy} accessibilityLabel={`Publish ${video.title}`}>
        Publish
      </Button>
      {error && <InlineError message={error} fieldID={errorId} />}
    </>
  );
}
