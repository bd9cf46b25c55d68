/** Videos: the shop's video catalog, adding videos, and the form to change one. */
import { Badge, BlockStack, Button, ButtonGroup, Card, IndexTable, Layout, Page, Text, Thumbnail } from '@shopify/polaris';
import { useState } from 'react';

import { del, get, shopPath } from '../api';
import { ConfirmModal } from '../components/ConfirmModal';
import { ProcessingStatus } from '../components/ProcessingStatus';
import { ErrorBanner, LoadingCard } from '../components/States';
import { VideoForm } from '../components/VideoForm';
import { useShop, useToast } from '../context';
import { formatDuration } from '../format';
import { useLoad } from '../hooks';
import { labelOf, statusTone, VIDEO_STATUSES } from '../labels';
import { useLiveVideos } from '../live';
import type { Product, Video } from '../types';
import { AddVideosPage } from './AddVideos';

/** Where the merchant is on this page; a form goes back to where it was opened from. */
type View =
  | { kind: 'list' }
  | { kind: 'add' }
  | { kind: 'by-url' }
  | { kind: 'edit'; video: Video; from: 'list' | 'add' };

const NO_VIDEOS: Video[] = [];

export function VideosPage() {
  const { domain } = useShop();
  const notify = useToast();
  const videos = useLoad(() => get<{ videos: Video[] }>(shopPath(domain, 'videos')), [domain]);
  const products = useLoad(() => get<{ products: Product[] }>(shopPath(domain, 'products')), [domain]);
  const [view, setView] = useState<View>({ kind: 'list' });
  const [deleting, setDeleting] = useState<Video | null>(null);
  const list = useLiveVideos(domain, videos.data?.videos ?? NO_VIDEOS);

  if (view.kind === 'add') {
    return (
      <AddVideosPage
        onBack={() => {
          setView({ kind: 'list' });
          videos.reload();
        }}
        onAddByUrl={() => setView({ kind: 'by-url' })}
        onEdit={(video) => setView({ kind: 'edit', video, from: 'add' })}
      />
    );
  }

  if (view.kind === 'edit' || view.kind === 'by-url') {
    const editing = view.kind === 'edit' ? view.video : undefined;
    const back = () => {
      setView(view.kind === 'by-url' || view.from === 'add' ? { kind: 'add' } : { kind: 'list' });
      videos.reload();
    };
    if (!products.data) {
      return (
        <Page title={editing ? 'Edit video' : 'Add a video'} backAction={{ content: 'Videos', onAction: back }}>
          {products.error ? (
            <ErrorBanner title="Your products could not be loaded" error={products.error} onRetry={products.reload} />
          ) : (
            <LoadingCard label="Loading your products" />
          )}
        </Page>
      );
    }
    return (
      <VideoForm
        video={editing}
        products={products.data.products}
        onCancel={back}
        onSaved={(v) => {
          notify(editing ? `Saved ${v.title}` : `Added ${v.title}`);
          setView({ kind: 'list' });
          videos.reload();
        }}
      />
    );
  }

  const addVideos = () => setView({ kind: 'add' });

  return (
    <Page
      title="Videos"
      subtitle="The videos your widgets can show, each with the products shoppers can buy from it."
      primaryAction={{ content: 'Add videos', onAction: addVideos }}
    >
      <Layout>
        <Layout.Section>
          <BlockStack gap="400">
            {videos.error && <ErrorBanner title="Your videos could not be loaded" error={videos.error} onRetry={videos.reload} />}
            {!videos.data && videos.loading && <LoadingCard label="Loading your videos" />}
            {videos.data && (
              <Card padding="0">
                <div className="vd-table-head">
                  <Text as="h2" variant="headingMd">
                    {list.length === 1 ? '1 video' : `${list.length} videos`}
                  </Text>
                </div>
                <IndexTable
                  resourceName={{ singular: 'video', plural: 'videos' }}
                  itemCount={list.length}
                  selectable={false}
                  headings={[
                    { title: 'Thumbnail' },
                    { title: 'Title' },
                    { title: 'Status' },
                    { title: 'Length', alignment: 'end' },
                    { title: 'Products', alignment: 'end' },
                    { title: 'Actions' },
                  ]}
                  emptyState={
                    <div className="vd-empty">
                      <BlockStack gap="200" inlineAlign="center">
                        <Text as="p">No videos yet. Add your first video, then show it in a widget.</Text>
                        <Button variant="primary" onClick={addVideos}>
                          Add videos
                        </Button>
                      </BlockStack>
                    </div>
                  }
                >
                  {list.map((v, i) => (
                    <IndexTable.Row id={v.id} key={v.id} position={i}>
                      <IndexTable.Cell>
                        {v.posterUrl || v.thumbnail ? (
                          <Thumbnail source={v.posterUrl || v.thumbnail} alt="" size="small" />
                        ) : (
                          <span className="vd-thumb-empty" />
                        )}
                      </IndexTable.Cell>
                      <IndexTable.Cell as="th" scope="row">
                        <Text as="span" fontWeight="semibold">
                          {v.title}
                        </Text>
                      </IndexTable.Cell>
                      <IndexTable.Cell>
                        <BlockStack gap="150" inlineAlign="start">
                          <Badge tone={statusTone(v.status)}>{labelOf(VIDEO_STATUSES, v.status)}</Badge>
                          {v.processing && v.processing.state !== 'ready' && <ProcessingStatus video={v} onRetried={videos.reload} />}
                        </BlockStack>
                      </IndexTable.Cell>
                      <IndexTable.Cell>
                        <Text as="span" alignment="end" numeric>
                          {v.duration > 0 ? formatDuration(v.duration) : '—'}
                        </Text>
                      </IndexTable.Cell>
                      <IndexTable.Cell>
                        <Text as="span" alignment="end" numeric>
                          {v.productIds.length}
                        </Text>
                      </IndexTable.Cell>
                      <IndexTable.Cell>
                        <ButtonGroup>
                          <Button onClick={() => setView({ kind: 'edit', video: v, from: 'list' })} accessibilityLabel={`Edit ${v.title}`}>
                            Edit
                          </Button>
                          <Button tone="critical" variant="plain" onClick={() => setDeleting(v)} accessibilityLabel={`Delete ${v.title}`}>
                            Delete
                          </Button>
                        </ButtonGroup>
                      </IndexTable.Cell>
                    </IndexTable.Row>
                  ))}
                </IndexTable>
              </Card>
            )}
          </BlockStack>
        </Layout.Section>
      </Layout>

      <ConfirmModal
        open={deleting != null}
        title={`Delete ${deleting?.title ?? 'this video'}?`}
        confirmLabel="Delete video"
        onClose={() => setDeleting(null)}
        onConfirm={async () => {
          if (!deleting) return;
          await del(shopPath(domain, 'videos', deleting.id));
          notify(`Deleted ${deleting.title}`);
          videos.reload();
        }}
      >
        <Text as="p">
          The video is removed from every widget that shows it. This cannot be undone.
        </Text>
      </ConfirmModal>
    </Page>
  );
}
