/**
 * Create or edit one video. The API validates; its messages appear beside the fields they name.
 * A video given by URL has its links edited here; one made from a file has its media made by the
 * service, so here it shows how far that has come and lets the merchant choose its poster.
 */
import { BlockStack, Card, FormLayout, InlineStack, Layout, Text, Thumbnail } from '@shopify/polaris';
import { useState } from 'react';

import { ApiError, patch, post, shopPath } from '../api';
import { useShop } from '../context';
import { VIDEO_STATUSES } from '../labels';
import { isOnItsWay, useLiveVideos } from '../live';
import type { Product, UploadedVideoPatch, Video, VideoInput, VideoStatus } from '../types';
import { fieldError } from './fields';
import { FormFrame, FormSelect, FormTextField, useForm, type FormKind } from './FormFrame';
import { Captions } from './Captions';
import { PosterPicker } from './PosterPicker';
import { ProcessingStatus } from './ProcessingStatus';
import { ProductPicker } from './ProductPicker';

/** How long a new poster is waited for before the form stops asking. */
const POSTER_WAIT_MS = 120_000;

const KIND: FormKind = {
  noun: 'video',
  back: 'Videos',
  create: 'Add',
  fields: ['title', 'thumbnail', 'videoUrl', 'miniVersionUrl', 'duration', 'status', 'productIds'],
};
const MAX_DURATION = 86_400;

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
  const form = useForm({ values: [title, thumbnail, videoUrl, miniVersionUrl, duration, status, productIds], onSaved, onCancel });
  const { error, fail, send } = form;
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
      fail(new ApiError('VALIDATION_ERROR', `duration: enter a number of seconds from 0 to ${MAX_DURATION}`, 400));
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

  const err = (name: string) => fieldError(error, name);
  // Publishing waits for the video to be playable: the service says so, beside the status.
  const notReady = error instanceof ApiError && error.code === 'VIDEO_NOT_READY' ? error.message : undefined;
  const processingDone = live?.processing?.state === 'ready';

  const statusField = (
    <FormSelect
      name="status"
      label="Status"
      options={VIDEO_STATUSES.map((s) => ({ label: `${s.label}: ${s.help}`, value: s.value }))}
      value={status}
      onChange={(v) => setStatus(v as VideoStatus)}
      helpText={fromFile && !processingDone ? 'It can be published once it is ready.' : undefined}
      error={notReady}
    />
  );

  /** The links of a video given by URL, and its length. */
  const urlFields = (
    <>
      <FormTextField
        name="videoUrl"
        label="Video URL"
        type="url"
        value={videoUrl}
        onChange={setVideoUrl}
        helpText="The full video, an MP4 file shoppers can play (https://…)."
        requiredIndicator
      />
      <FormTextField
        name="miniVersionUrl"
        label="Preview clip URL"
        type="url"
        value={miniVersionUrl}
        onChange={setMiniVersionUrl}
        helpText="Optional: a short, small, silent version that plays on the card. Leave empty to show the thumbnail only."
      />
      <InlineStack gap="300" blockAlign="start" wrap={false}>
        <div className="vd-grow">
          <FormTextField
            name="thumbnail"
            label="Thumbnail URL"
            type="url"
            value={thumbnail}
            onChange={setThumbnail}
            helpText="The picture shown before the video plays, 9:16 works best."
          />
        </div>
        {/^https?:\/\//i.test(thumbnail.trim()) && <Thumbnail source={thumbnail.trim()} alt="Thumbnail preview" size="large" />}
      </InlineStack>
      <FormLayout.Group>
        <FormTextField
          name="duration"
          label="Duration (seconds)"
          type="number"
          min={0}
          max={MAX_DURATION}
          step={0.1}
          value={duration}
          onChange={setDuration}
          helpText="Shown on the card. 0 if you don't know it."
        />
        {statusField}
      </FormLayout.Group>
    </>
  );

  return (
    <FormFrame kind={KIND} editing={video} form={form} onSubmit={save}>
      <Layout.Section>
        <Card>
          <FormLayout>
            <FormTextField name="title" label="Title" value={title} onChange={setTitle} maxLength={512} requiredIndicator />
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
    </FormFrame>
  );
}
