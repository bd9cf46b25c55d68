/**
 * Create or edit one video. The API validates; its messages appear beside the fields they name.
 * A video given by URL has its links edited here; one made from a file has its media made by the
 * service, so here it shows how far that has come and lets the merchant choose its poster.
 */
import { Banner, BlockStack, Button, Card, Form, FormLayout, InlineStack, Layout, Page, Select, Text, TextField, Thumbnail } from '@shopify/polaris';
import { useState } from 'react';

import { ApiError, patch, post, shopPath } from '../api';
import { useShop } from '../context';
import { VIDEO_STATUSES } from '../labels';
import { isOnItsWay, useLiveVideos } from '../live';
import { useUnsavedChanges } from '../navigation';
import type { Product, UploadedVideoPatch, Video, VideoInput, VideoStatus } from '../types';
import { fieldError, namesAField } from './fields';
import { Captions } from './Captions';
import { PosterPicker } from './PosterPicker';
import { ProcessingStatus } from './ProcessingStatus';
import { ProductPicker } from './ProductPicker';

/** How long a new poster is waited for before the form stops asking. */
const POSTER_WAIT_MS = 120_000;

const FIELDS = ['title', 'thumbnail', 'videoUrl', 'miniVersionUrl', 'duration', 'status', 'productIds'];
const MAX_DURATION = 86_400;

const errorText = (e: unknown) => (e instanceof Error ? e.message : String(e));

export function VideoForm({
  video,
  products,
  onSaved,
  onCancel,
}: {
  /** The video to edit; absent to create one. */
  video?: Video;
  products: Product[];
  onSaved: (video: Video) => void;
  onCancel: () => void;
}) {
  const { domain } = useShop();
  const [title, setTitle] = useState(video?.title ?? '');
  const [thumbnail, setThumbnail] = useState(video?.thumbnail ?? '');
  const [videoUrl, setVideoUrl] = useState(video?.videoUrl ?? '');
  const [miniVersionUrl, setMiniVersionUrl] = useState(video?.miniVersionUrl ?? '');
  const [duration, setDuration] = useState(video ? String(video.duration) : '0');
  const [status, setStatus] = useState<VideoStatus>(video?.status ?? 'DRAFT');
  const [productIds, setProductIds] = useState<string[]>(video?.productIds ?? []);
  const [saving, setSaving] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const fields = JSON.stringify([title, thumbnail, videoUrl, miniVersionUrl, duration, status, productIds]);
  // What the form held when it opened, to tell whether anything has changed since.
  const [opened] = useState(fields);
  useUnsavedChanges(fields !== opened);
  // A video made from a file, followed while the service works on it (or on a new poster).
  const [followed, setFollowed] = useState<Video | undefined>(video);
  const [posterAsked, setPosterAsked] = useState<{ before: string; at: number } | null>(null);
  const makingPoster = (v: Video) =>
    posterAsked != null &&
    (v.posterUrl === posterAsked.before || !v.posterUrl) &&
    v.processing?.state !== 'failed' &&
    Date.now() - posterAsked.at < POSTER_WAIT_MS;
  const [live] = useLiveVideos(domain, followed ? [followed] : [], (v) => isOnItsWay(v) || makingPoster(v));
  const fromFile = live?.processing != null;

  const save = async () => {
    if (video && fromFile) {
      const changes: UploadedVideoPatch = { title: title.trim(), status, productIds };
      return send(() => patch<Video>(shopPath(domain, 'videos', video.id), changes));
    }
    const seconds = duration.trim() === '' ? 0 : Number(duration);
    if (!Number.isFinite(seconds) || seconds < 0 || seconds > MAX_DURATION) {
      setError(new ApiError('VALIDATION_ERROR', `duration: enter a number of seconds from 0 to ${MAX_DURATION}`, 400));
      return;
    }
    const body: VideoInput = {
      title: title.trim(),
      thumbnail: thumbnail.trim(),
      videoUrl: videoUrl.trim(),
      miniVersionUrl: miniVersionUrl.trim(),
      duration: seconds,
      status,
      productIds,
    };
    return send(() => (video ? patch<Video>(shopPath(domain, 'videos', video.id), body) : post<Video>(shopPath(domain, 'videos'), body)));
  };

  const send = async (request: () => Promise<Video>) => {
    setSaving(true);
    setError(null);
    try {
      onSaved(await request());
    } catch (e) {
      setError(e);
      setSaving(false);
    }
  };

  const err = (name: string) => fieldError(error, name);
  // Publishing waits for the video to be playable: the service says so, beside the status.
  const notReady = error instanceof ApiError && error.code === 'VIDEO_NOT_READY' ? error.message : undefined;
  const processingDone = live?.processing?.state === 'ready';

  const statusField = (
    <Select
      label="Status"
      options={VIDEO_STATUSES.map((s) => ({ label: `${s.label}: ${s.help}`, value: s.value }))}
      value={status}
      onChange={(v) => setStatus(v as VideoStatus)}
      helpText={fromFile && !processingDone ? 'It can be published once it is ready.' : undefined}
      error={err('status') ?? notReady}
    />
  );

  /** The links of a video given by URL, and its length. */
  const urlFields = (
    <>
      <TextField
        label="Video URL"
        type="url"
        value={videoUrl}
        onChange={setVideoUrl}
        autoComplete="off"
        helpText="The full video, an MP4 file shoppers can play (https://…)."
        error={err('videoUrl')}
        requiredIndicator
      />
      <TextField
        label="Preview clip URL"
        type="url"
        value={miniVersionUrl}
        onChange={setMiniVersionUrl}
        autoComplete="off"
        helpText="Optional: a short, small, silent version that plays on the card. Leave empty to show the thumbnail only."
        error={err('miniVersionUrl')}
      />
      <InlineStack gap="300" blockAlign="start" wrap={false}>
        <div className="vd-grow">
          <TextField
            label="Thumbnail URL"
            type="url"
            value={thumbnail}
            onChange={setThumbnail}
            autoComplete="off"
            helpText="The picture shown before the video plays, 9:16 works best."
            error={err('thumbnail')}
          />
        </div>
        {/^https?:\/\//i.test(thumbnail.trim()) && <Thumbnail source={thumbnail.trim()} alt="Thumbnail preview" size="large" />}
      </InlineStack>
      <FormLayout.Group>
        <TextField
          label="Duration (seconds)"
          type="number"
          min={0}
          max={MAX_DURATION}
          step={0.1}
          value={duration}
          onChange={setDuration}
          autoComplete="off"
          helpText="Shown on the card. 0 if you don't know it."
          error={err('duration')}
        />
        {statusField}
      </FormLayout.Group>
    </>
  );

  return (
    <Page
      title={video ? `Edit ${video.title || 'video'}` : 'Add a video'}
      backAction={{ content: 'Videos', onAction: onCancel }}
    >
      <Form onSubmit={save} noValidate>
        <Layout>
          {error != null && (
            <Layout.Section>
              <Banner tone="critical" title="The video could not be saved">
                <p>{namesAField(error, FIELDS) && !notReady ? 'Correct the field marked below, then save again.' : errorText(error)}</p>
              </Banner>
            </Layout.Section>
          )}
          <Layout.Section>
            <Card>
              <FormLayout>
                <TextField label="Title" value={title} onChange={setTitle} autoComplete="off" maxLength={512} error={err('title')} requiredIndicator />
                {fromFile ? statusField : urlFields}
              </FormLayout>
            </Card>
          </Layout.Section>
          {live && fromFile && (
            <Layout.Section>
              <Card>
                <BlockStack gap="400">
                  <BlockStack gap="200">
                    <Text as="h2" variant="headingMd">
                      Processing
                    </Text>
                    <ProcessingStatus video={live} onRetried={setFollowed} />
                  </BlockStack>
                  {processingDone && live.videoUrl && (
                    <PosterPicker
                      video={live}
                      making={makingPoster(live)}
                      onChosen={(answer) => {
                        setPosterAsked({ before: live.posterUrl, at: Date.now() });
                        setFollowed(answer);
                      }}
                    />
                  )}
                </BlockStack>
              </Card>
            </Layout.Section>
          )}
          {live && (
            <Layout.Section>
              <Card>
                <Captions video={live} onChange={setFollowed} />
              </Card>
            </Layout.Section>
          )}
          <Layout.Section>
            <Card>
              <ProductPicker
                label="Products in this video"
                helpText="Shoppers see these products with the video and can add them to their cart."
                products={products}
                selected={productIds}
                onChange={setProductIds}
                error={err('productIds')}
              />
            </Card>
          </Layout.Section>
          <Layout.Section>
            <InlineStack gap="200" align="end">
              <Button onClick={onCancel} disabled={saving}>
                Cancel
              </Button>
              <Button submit variant="primary" loading={saving}>
                {video ? 'Save video' : 'Add video'}
              </Button>
            </InlineStack>
          </Layout.Section>
        </Layout>
      </Form>
    </Page>
  );
}
