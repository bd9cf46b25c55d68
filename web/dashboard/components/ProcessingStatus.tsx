/**
 * Where a video made from a file stands: uploading or processing with its progress, ready, or
 * failed with the reason and a way to try again. Nothing for a video given by URL.
 */
import { Badge, BlockStack, Button, InlineError, InlineStack, ProgressBar, Text } from '@shopify/polaris';
import { useId, useState } from 'react';

import { post, shopPath } from '../api';
import { useShop } from '../context';
import { labelOf, PROCESSING_STATES } from '../labels';
import type { Video } from '../types';

type BadgeTone = 'info' | 'success' | 'critical' | 'attention';

const TONES: Record<string, BadgeTone> = {
  uploading: 'info',
  queued: 'info',
  processing: 'attention',
  ready: 'success',
  failed: 'critical',
};

export function ProcessingStatus({ video, onRetried }: { video: Video; onRetried: (video: Video) => void }) {
  const { domain } = useShop();
  const [retrying, setRetrying] = useState(false);
  const [retryError, setRetryError] = useState<Error | null>(null);
  const labelId = useId();
  const errorId = useId();
  const p = video.processing;
  if (!p) return null;

  const progress = Math.max(0, Math.min(100, Math.round(p.progress || 0)));
  const busy = p.state === 'uploading' || p.state === 'processing';
  const label = labelOf(PROCESSING_STATES, p.state);

  const retry = async () => {
    setRetrying(true);
    setRetryError(null);
    try {
      onRetried(await post<Video>(shopPath(domain, 'videos', video.id, 'retry'), {}));
    } catch (e) {
      setRetryError(e instanceof Error ? e : new Error(String(e)));
    } finally {
      setRetrying(false);
    }
  };

  return (
    <div data-processing-state={p.state} data-processing-progress={progress}>
      <BlockStack gap="150">
        <InlineStack gap="200" blockAlign="center" wrap={false}>
          <Badge tone={TONES[p.state]}>{label}</Badge>
          {busy && (
            <Text as="span" id={labelId} variant="bodySm" tone="subdued" numeric>
              <span className="vd-visually-hidden">{`${label} ${video.title}: `}</span>
              {`${progress}%`}
            </Text>
          )}
        </InlineStack>
        {busy && <ProgressBar progress={progress} size="small" ariaLabelledBy={labelId} />}
        {p.state === 'failed' && (
          <BlockStack gap="150" inlineAlign="start">
            <Text as="p" tone="critical">
              {p.error?.message || 'The video could not be processed.'}
            </Text>
            <Button size="slim" onClick={retry} loading={retrying} accessibilityLabel={`Retry ${video.title}`}>
              Retry
            </Button>
            {retryError && <InlineError message={retryError.message} fieldID={errorId} />}
          </BlockStack>
        )}
      </BlockStack>
    </div>
  );
}
