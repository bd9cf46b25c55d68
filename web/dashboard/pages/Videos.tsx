/** Videos: the shop's video catalog, adding videos, and the form to change one. */
import { Badge, BlockStack, Button, ButtonGroup, Card, IndexTable, Layout, Page, Text, Thumbnail } from '@shopify/polaris';
import { useState } from 'react';

import { del, get, shopPath } from '../api';
import { ConfirmModal } from '../components/ConfirmModal';
import { StackedRows, useCompact } from '../components/StackedRows';
import { ProcessingStatus } from '../components/ProcessingStatus';
import { ErrorBanner, LoadingCard } from '../components/States';
import { VideoForm } from '../components/VideoForm';
import { useShop, useToast } from '../context';
import { formatDuration } from '../format';
import { useLoad } from '../hooks';
import { labelOf, statusTone, VIDEO_STATUSES } from '../labels';
import { useLiveVideos } from '../live';
import { useNavigation } from '../navigation';
import type { Product, Video } from '../types';
import { AddVideosPage } from './AddVideos';

const NO_VIDEOS: Video[] = [];

export function VideosPage() {
  const { domain } = useShop();
  const notify = useToast();
  const { route, go } = useNavigation();
  const compact = useCompact();
  const videos = useLoad(() => get<{ videos: Video[] }>(shopPath(domain, 'videos')), [domain]);
  const products = useLoad(() => get<{ products: Product[] }>(shopPath(domain, 'products')), [domain]);
  // The video the URL names, read by itself: a link to its form opens it without the list.
  const editingId = route.video && route.video !== 'new' ? route.video : undefined;
  const editing = useLoad(
    () => (editingId ? get<Video>(shopPath(domain, 'videos', editingId)) : Promise.resolve(null)),
    [domain, editingId],
  );
  const [deleting, setDeleting] = useState<Video | null>(null);
  const list = useLiveVideos(domain, videos.data?.videos ?? NO_VIDEOS);

  const addVideos = () => go({ page: 'videos', add: true });
  const edit = (video: Video) => go({ page: 'videos', video: video.id });

  if (route.add && !route.video) {
    return (
      <AddVideosPage
        onBack={() => {
          go({ page: 'videos' });
          videos.reload();
        }}
        onAddByUrl={() => go({ page: 'videos', add: true, video: 'new' })}
        onEdit={(video) => go({ page: 'videos', add: true, video: video.id })}
      />
    );
  }

  if (route.video) {
    // A form goes back to where it was opened from: the list, or "Add videos".
    const back = (saved = false) => {
      go(route.add ? { page: 'videos', add: true } : { page: 'videos' }, { saved });
      videos.reload();
    };
    const video = editingId ? editing.data : undefined;
    const failed = (editingId ? editing.error : null) ?? products.error;
    if (!products.data || (editingId && (!video || video.id !== editingId))) {
      return (
        <Page title={editingId ? 'Edit video' : 'Add a video'} backAction={{ content: 'Videos', onAction: () => back() }}>
          {failed ? (
            <ErrorBanner
              title={editingId ? 'This video could not be loaded' : 'Your products could not be loaded'}
              error={failed}
              onRetry={() => {
                editing.reload();
                products.reload();
              }}
            />
          ) : (
            <LoadingCard label={editingId ? 'Loading the video' : 'Loading your products'} />
          )}
        </Page>
      );
    }
    return (
      <VideoForm
        key={route.video}
        video={video ?? undefined}
        products={products.data.products}
        onCancel={() => back()}
        onSaved={(v) => {
          notify(video ? `Saved ${v.title}` : `Added ${v.title}`);
          go({ page: 'videos' }, { saved: true });
          videos.reload();
        }}
      />
    );
  }

  const thumbnail = (v: Video) =>
    v.posterUrl || v.thumbnail ? <Thumbnail source={v.posterUrl || v.thumbnail} alt="" size="small" /> : <span className="vd-thumb-empty" />;
  const status = (v: Video) => (
    <BlockStack gap="150" inlineAlign="start">
      <Badge tone={statusTone(v.status)}>{labelOf(VIDEO_STATUSES, v.status)}</Badge>
      {v.processing && v.processing.state !== 'ready' && <ProcessingStatus video={v} onRetried={videos.reload} />}
    </BlockStack>
  );
  const length = (v: Video) => (v.duration > 0 ? formatDuration(v.duration) : '—');
  const actions = (v: Video) => (
    <ButtonGroup>
      <Button onClick={() => edit(v)} accessibilityLabel={`Edit ${v.title}`}>
        Edit
      </Button>
      <Button tone="critical" variant="plain" onClick={() => setDeleting(v)} accessibilityLabel={`Delete ${v.title}`}>
        Delete
      </Button>
    </ButtonGroup>
  );

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
                {compact && list.length > 0 ? (
                  <StackedRows
                    label="Videos"
                    rows={list.map((v) => ({
                      id: v.id,
                      media: thumbnail(v),
                      title: (
                        <Text as="h3" fontWeight="semibold">
                          {v.title}
                        </Text>
                      ),
                      facts: [
                        { label: 'Status', value: status(v) },
                        { label: 'Length', value: length(v) },
                        { label: 'Products', value: String(v.productIds.length) },
                      ],
                      actions: actions(v),
                    }))}
                  />
                ) : (
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
                        <IndexTable.Cell>{thumbnail(v)}</IndexTable.Cell>
                        <IndexTable.Cell as="th" scope="row">
                          <Text as="span" fontWeight="semibold">
                            {v.title}
                          </Text>
                        </IndexTable.Cell>
                        <IndexTable.Cell>{status(v)}</IndexTable.Cell>
                        <IndexTable.Cell>
                          <Text as="span" alignment="end" numeric>
                            {length(v)}
                          </Text>
                        </IndexTable.Cell>
                        <IndexTable.Cell>
                          <Text as="span" alignment="end" numeric>
                            {v.productIds.length}
                          </Text>
                        </IndexTable.Cell>
                        <IndexTable.Cell>{actions(v)}</IndexTable.Cell>
                      </IndexTable.Row>
                    ))}
                  </IndexTable>
                )}
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
