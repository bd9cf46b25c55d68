/** Videos: the shop's video catalog, adding videos, the form to change one, and a video's own page. */
import { Badge, BlockStack, Thumbnail } from '@shopify/polaris';

import { FormLoading } from '../components/FormFrame';
import { ListPage } from '../components/ListPage';
import { ProcessingStatus } from '../components/ProcessingStatus';
import { VideoForm } from '../components/VideoForm';
import { useShop, useToast } from '../context';
import { formatDuration } from '../format';
import { useShopData } from '../hooks';
import { labelOf, statusTone, VIDEO_STATUSES } from '../labels';
import { useLiveVideos } from '../live';
import { useNavigation } from '../navigation';
import type { Product, Video } from '../types';
import { AddVideosPage } from './AddVideos';
import { VideoStatsPage } from './VideoStats';

const NO_VIDEOS: Video[] = [];

export function VideosPage() {
  const { route, go } = useNavigation();
  if (!route.stats) return <VideoCatalog />;
  const id = route.stats;
  const fromAnalytics = route.from === 'analytics';
  return (
    <VideoStatsPage
      key={id}
      id={id}
      back={{
        label: fromAnalytics ? 'Analytics' : 'Videos',
        go: () => go(fromAnalytics ? { page: 'analytics' } : { page: 'videos' }),
        edit: () => go({ page: 'videos', video: id }),
      }}
    />
  );
}

/** The list, "Add videos" and the form: what the page shows but a video's own page. */
function VideoCatalog() {
  const { domain } = useShop();
  const notify = useToast();
  const { route, go } = useNavigation();
  const videos = useShopData<{ videos: Video[] }>(['videos']);
  const products = useShopData<{ products: Product[] }>(['products']);
  // The video the URL names, read by itself: a link to its form opens it without the list.
  const editingId = route.video && route.video !== 'new' ? route.video : undefined;
  const editing = useShopData<Video | null>(editingId ? ['videos', editingId] : null);
  const list = useLiveVideos(domain, videos.data?.videos ?? NO_VIDEOS);

  const addVideos = () => go({ page: 'videos', add: true });

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
    if (!products.data || (editingId && (!video || video.id !== editingId))) {
      return (
        <FormLoading
          title={editingId ? 'Edit video' : 'Add a video'}
          back="Videos"
          onBack={() => back()}
          error={(editingId ? editing.error : null) ?? products.error}
          errorTitle={editingId ? 'This video could not be loaded' : 'Your products could not be loaded'}
          loadingLabel={editingId ? 'Loading the video' : 'Loading your products'}
          onRetry={() => {
            editing.reload();
            products.reload();
          }}
        />
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

  return (
    <ListPage
      title="Videos"
      subtitle="The videos your widgets can show, each with the products shoppers can buy from it."
      add={{ content: 'Add videos', onAction: addVideos }}
      resource="videos"
      loaded={videos}
      noun={{ singular: 'video', plural: 'videos' }}
      items={list}
      name={(v) => v.title}
      nameLink={(v) => ({ page: 'videos', stats: v.id })}
      nameHeading="Title"
      media={{
        title: 'Thumbnail',
        cell: (v) =>
          v.posterUrl || v.thumbnail ? (
            <Thumbnail source={v.posterUrl || v.thumbnail} alt="" size="small" />
          ) : (
            <span className="vd-thumb-empty" />
          ),
      }}
      columns={[
        {
          title: 'Status',
          cell: (v) => (
            <BlockStack gap="150" inlineAlign="start">
              <Badge tone={statusTone(v.status)}>{labelOf(VIDEO_STATUSES, v.status)}</Badge>
              {v.processing && v.processing.state !== 'ready' && <ProcessingStatus video={v} onRetried={videos.reload} />}
            </BlockStack>
          ),
        },
        { title: 'Length', numeric: true, cell: (v) => (v.duration > 0 ? formatDuration(v.duration) : '—') },
        { title: 'Products', numeric: true, cell: (v) => String(v.productIds.length) },
      ]}
      empty="No videos yet. Add your first video, then show it in a widget."
      onEdit={(v) => go({ page: 'videos', video: v.id })}
      deleteWarning="The video is removed from every widget that shows it. This cannot be undone."
    />
  );
}
