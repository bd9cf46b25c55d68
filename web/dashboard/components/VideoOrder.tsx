/**
 * A widget's own videos in display order: add from the catalog, move up or down, remove.
 * Each move is announced, since the moved row's position changes under the keyboard focus.
 */
import { Badge, BlockStack, Button, InlineError, InlineStack, Select, Text, Thumbnail } from '@shopify/polaris';
import { useId, useMemo, useState } from 'react';

import { labelOf, VIDEO_STATUSES } from '../labels';
import { PublishButton } from './PublishButton';
import type { Video } from '../types';

export function VideoOrder({
  videos,
  selected,
  onChange,
  onPublished,
  error,
}: {
  videos: Video[];
  selected: string[];
  onChange: (ids: string[]) => void;
  /** A draft among them was published from here. */
  onPublished: (video: Video) => void;
  error?: string;
}) {
  const [toAdd, setToAdd] = useState('');
  const [announcement, setAnnouncement] = useState('');
  const selectId = useId();
  const byId = useMemo(() => new Map(videos.map((v) => [v.id, v])), [videos]);
  const available = videos.filter((v) => !selected.includes(v.id));
  const titleOf = (id: string) => byId.get(id)?.title || 'Untitled video';

  const move = (index: number, by: -1 | 1) => {
    const next = [...selected];
    const [id] = next.splice(index, 1);
    if (!id) return;
    next.splice(index + by, 0, id);
    onChange(next);
    setAnnouncement(`${titleOf(id)} moved to position ${index + by + 1} of ${next.length}`);
  };
  const remove = (index: number) => {
    const id = selected[index];
    if (!id) return;
    onChange(selected.filter((_, i) => i !== index));
    setAnnouncement(`${titleOf(id)} removed`);
  };
  const add = () => {
    const id = toAdd || available[0]?.id;
    if (!id) return;
    onChange([...selected, id]);
    setToAdd('');
    setAnnouncement(`${titleOf(id)} added at position ${selected.length + 1}`);
  };

  return (
    <BlockStack gap="300">
      {selected.length === 0 ? (
        <Text as="p" tone="subdued">
          No videos yet. Add at least one published video: a widget without videos does not appear in your store.
        </Text>
      ) : (
        <ol className="vd-order" aria-label="Videos in display order">
          {selected.map((id, i) => {
            const v = byId.get(id);
            const title = titleOf(id);
            return (
              <li key={id} className="vd-order__item">
                <Text as="span" tone="subdued" numeric>
                  {i + 1}.
                </Text>
                {v?.posterUrl || v?.thumbnail ? (
                  <Thumbnail source={v.posterUrl || v.thumbnail} alt="" size="small" />
                ) : (
                  <span className="vd-thumb-empty" />
                )}
                <div className="vd-grow">
                  <BlockStack gap="050">
                    <Text as="span" fontWeight="semibold">
                      {v ? title : 'A video that no longer exists'}
                    </Text>
                    {v && v.status !== 'PUBLISHED' && (
                      <InlineStack gap="100" blockAlign="center">
                        <Badge tone="attention">{labelOf(VIDEO_STATUSES, v.status)}</Badge>
                        <Text as="span" variant="bodySm" tone="subdued">
                          Not shown in your store until published
                        </Text>
                        <PublishButton video={v} onPublished={onPublished} />
                      </InlineStack>
                    )}
                  </BlockStack>
                </div>
                <InlineStack gap="100" wrap={false}>
                  <Button size="slim" onClick={() => move(i, -1)} disabled={i === 0} accessibilityLabel={`Move up, ${title}`}>
                    Move up
                  </Button>
                  <Button
                    size="slim"
                    onClick={() => move(i, 1)}
                    disabled={i === selected.length - 1}
                    accessibilityLabel={`Move down, ${title}`}
                  >
                    Move down
                  </Button>
                  <Button size="slim" tone="critical" variant="plain" onClick={() => remove(i)} accessibilityLabel={`Remove ${title}`}>
                    Remove
                  </Button>
                </InlineStack>
              </li>
            );
          })}
        </ol>
      )}
      {available.length > 0 ? (
        <InlineStack gap="200" blockAlign="end" wrap>
          <div className="vd-grow">
            <Select
              id={selectId}
              label="Video to add"
              options={available.map((v) => ({
                label:
                  v.status === 'PUBLISHED'
                    ? v.title || 'Untitled video'
                    : `${v.title || 'Untitled video'} (${labelOf(VIDEO_STATUSES, v.status)})`,
                value: v.id,
              }))}
              value={toAdd || available[0]!.id}
              onChange={setToAdd}
            />
          </div>
          <Button onClick={add}>Add video</Button>
        </InlineStack>
      ) : (
        <Text as="p" tone="subdued">
          {videos.length ? 'Every video is in this widget.' : 'Add videos on the Videos page first.'}
        </Text>
      )}
      {error && <InlineError message={error} fieldID={selectId} />}
      <div className="vd-visually-hidden" aria-live="polite">
        {announcement}
      </div>
    </BlockStack>
  );
}
