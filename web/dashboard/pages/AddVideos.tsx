/**
 * Add videos: files dropped (several at once) and uploaded, resumably; a link the service imports
 * the file from; and, for merchants who host their files, the form that takes their links. Each
 * arrival is then followed while the service processes it.
 */
import {
  Badge,
  Banner,
  BlockStack,
  Button,
  ButtonGroup,
  Card,
  DropZone,
  Form,
  FormLayout,
  InlineStack,
  Layout,
  Page,
  ProgressBar,
  Text,
  TextField,
  Thumbnail,
} from '@shopify/polaris';
import { useEffect, useId, useState } from 'react';

import { ApiError, post, shopPath } from '../api';
import { fieldError, namesAField } from '../components/fields';
import { ProcessingStatus } from '../components/ProcessingStatus';
import { PublishButton } from '../components/PublishButton';
import { useShop, useToast } from '../context';
import { formatBytes } from '../format';
import { useLiveVideo } from '../live';
import type { Video } from '../types';
import {
  addImport,
  canTryAgain,
  discardUnfinished,
  pauseUpload,
  resumeUpload,
  startUpload,
  unfinishedUploads,
  useUploads,
  type Unfinished,
  type Upload,
} from '../uploads';

/** The containers the service takes; a browser may not know a type for every one of them. */
const ACCEPT = 'video/*,.mp4,.m4v,.mov,.webm,.mkv';

export function AddVideosPage({
  onBack,
  onAddByUrl,
  onEdit,
}: {
  onBack: () => void;
  onAddByUrl: () => void;
  onEdit: (video: Video) => void;
}) {
  const { domain } = useShop();
  const uploads = useUploads(domain);
  const arrivalsId = useId();
  const [refused, setRefused] = useState<string[]>([]);
  const [unfinished, setUnfinished] = useState<Unfinished[]>([]);
  // Read again when an upload learns its video: it may be one of the unfinished.
  const known = uploads.map((u) => u.videoId ?? '').join(' ');

  useEffect(() => {
    let live = true;
    unfinishedUploads(domain).then((all) => live && setUnfinished(all));
    return () => {
      live = false;
    };
  }, [domain, known]);

  const started = new Set(uploads.map((u) => u.videoId).filter(Boolean));
  const waiting = unfinished.filter((u) => !u.videoId || !started.has(u.videoId));

  const onDrop = (_all: File[], accepted: File[], rejected: File[]) => {
    setRefused(rejected.map((f) => f.name));
    for (const file of accepted) startUpload(domain, file);
  };

  return (
    <Page
      title="Add videos"
      subtitle="Upload the videos from your phone or computer: videoapp makes the versions that start at once on your store."
      backAction={{ content: 'Videos', onAction: onBack }}
    >
      <Layout>
        <Layout.Section>
          <Card>
            <BlockStack gap="300">
              <DropZone label="Video files" accept={ACCEPT} type="video" allowMultiple onDrop={onDrop}>
                <DropZone.FileUpload actionTitle="Add files" actionHint="or drop video files here: MP4, MOV, WebM or MKV" />
              </DropZone>
              {refused.length > 0 && (
                <Banner tone="warning" title="Not video files" onDismiss={() => setRefused([])}>
                  <p>{`${refused.join(', ')}: choose video files (MP4, MOV, WebM or MKV).`}</p>
                </Banner>
              )}
            </BlockStack>
          </Card>
        </Layout.Section>

        {waiting.length > 0 && (
          <Layout.Section>
            <UnfinishedUploads shop={domain} uploads={waiting} onDiscarded={(u) => setUnfinished((all) => all.filter((x) => x !== u))} />
          </Layout.Section>
        )}

        {uploads.length > 0 && (
          <Layout.Section>
            <Card padding="0">
              <div className="vd-table-head">
                <Text as="h2" variant="headingMd" id={arrivalsId}>
                  Videos being added
                </Text>
              </div>
              <ul className="vd-arrivals" aria-labelledby={arrivalsId}>
                {uploads.map((u) => (
                  <ArrivalRow key={u.key} upload={u} onEdit={onEdit} />
                ))}
              </ul>
            </Card>
          </Layout.Section>
        )}

        <Layout.Section>
          <ImportForm />
        </Layout.Section>

        <Layout.Section>
          <Card>
            <BlockStack gap="200" inlineAlign="start">
              <Text as="h2" variant="headingMd">
                Advanced: add by URL
              </Text>
              <Text as="p" tone="subdued">
                If you host your video files yourself, give their links (the video, a preview clip and a thumbnail) instead of uploading
                them.
              </Text>
              <Button onClick={onAddByUrl}>Add by URL</Button>
            </BlockStack>
          </Card>
        </Layout.Section>
      </Layout>
    </Page>
  );
}

/** One video on its way in: the upload's progress, then the service's processing. */
function ArrivalRow({ upload, onEdit }: { upload: Upload; onEdit: (video: Video) => void }) {
  const { domain } = useShop();
  const labelId = useId();
  const { video, error, replace } = useLiveVideo(domain, upload.state === 'done' ? upload.videoId : null);
  const sent = upload.bytesTotal ? Math.round((upload.bytesSent / upload.bytesTotal) * 100) : 0;
  const title = video?.title || upload.title;
  const poster = video && (video.posterUrl || video.thumbnail);
  // A file the service refused will not be taken however often it is sent: only why is shown.
  const refused = upload.state === 'failed' && !canTryAgain(upload.error);

  return (
    <li className="vd-arrival" data-upload={upload.source} data-upload-state={upload.state} data-video-id={upload.videoId ?? undefined}>
      <InlineStack gap="300" blockAlign="start" wrap={false}>
        {poster ? <Thumbnail source={poster} alt="" size="small" /> : <span className="vd-thumb-empty" />}
        <div className="vd-grow">
          <BlockStack gap="150">
            <BlockStack gap="050">
              <Text as="h3" fontWeight="semibold">
                {title}
              </Text>
              <Text as="p" variant="bodySm" tone="subdued" breakWord>
                {upload.source === 'link' ? `Imported from ${upload.fileName}` : upload.fileName}
              </Text>
            </BlockStack>

            {upload.state !== 'done' && !refused && (
              <>
                <Text as="p" id={labelId} variant="bodySm" numeric>
                  <span className="vd-visually-hidden">{`Upload of ${title}: `}</span>
                  {upload.state === 'paused'
                    ? `Paused at ${sent}%`
                    : upload.state === 'failed'
                      ? `Stopped at ${sent}%`
                      : `Uploading: ${sent}% of ${formatBytes(upload.bytesTotal)}`}
                  {upload.resumed && ', continued from where it stopped'}
                </Text>
                <ProgressBar
                  progress={sent}
                  size="small"
                  tone={upload.state === 'failed' ? 'critical' : 'highlight'}
                  ariaLabelledBy={labelId}
                />
              </>
            )}
            {upload.state === 'failed' && upload.error && (
              <Text as="p" tone="critical">
                {upload.error.message}
              </Text>
            )}

            {upload.state === 'done' && error && (
              <Text as="p" tone="critical">
                {error.message}
              </Text>
            )}
            {upload.state === 'done' && !video && !error && (
              <Text as="p" variant="bodySm" tone="subdued">
                Uploaded. Reading its state…
              </Text>
            )}
            {video && <ProcessingStatus video={video} onRetried={replace} />}
            {video?.status === 'PUBLISHED' && (
              <InlineStack>
                <Badge tone="success">Published</Badge>
              </InlineStack>
            )}
          </BlockStack>
        </div>
        <ButtonGroup>
          {upload.state === 'uploading' && (
            <Button onClick={() => pauseUpload(upload.key)} accessibilityLabel={`Pause ${title}`}>
              Pause
            </Button>
          )}
          {(upload.state === 'paused' || (upload.state === 'failed' && canTryAgain(upload.error))) && (
            <Button onClick={() => resumeUpload(upload.key)} accessibilityLabel={`Resume ${title}`}>
              Resume
            </Button>
          )}
          {video && <PublishButton video={video} onPublished={replace} />}
          {video && (
            <Button onClick={() => onEdit(video)} accessibilityLabel={`Edit ${title}`}>
              Edit
            </Button>
          )}
        </ButtonGroup>
      </InlineStack>
    </li>
  );
}

/** Uploads an earlier visit of this page started and did not finish. */
function UnfinishedUploads({ shop, uploads, onDiscarded }: { shop: string; uploads: Unfinished[]; onDiscarded: (u: Unfinished) => void }) {
  const [discarding, setDiscarding] = useState<string | null>(null);
  return (
    <Banner tone="info" title={uploads.length === 1 ? 'An upload is unfinished' : `${uploads.length} uploads are unfinished`}>
      <BlockStack gap="200">
        <Text as="p">Choose the same file again to continue where it stopped.</Text>
        <ul className="vd-unfinished">
          {uploads.map((u) => (
            <li key={u.storageKey}>
              <InlineStack gap="300" blockAlign="center">
                <Text as="span" fontWeight="semibold">
                  {u.fileName}
                </Text>
                {u.bytesTotal != null && (
                  <Text as="span" tone="subdued">
                    {formatBytes(u.bytesTotal)}
                  </Text>
                )}
                <Button
                  variant="plain"
                  loading={discarding === u.storageKey}
                  accessibilityLabel={`Discard the upload of ${u.fileName}`}
                  onClick={async () => {
                    setDiscarding(u.storageKey);
                    await discardUnfinished(shop, u).catch(() => {});
                    setDiscarding(null);
                    onDiscarded(u);
                  }}
                >
                  Discard
                </Button>
              </InlineStack>
            </li>
          ))}
        </ul>
      </BlockStack>
    </Banner>
  );
}

const IMPORT_FIELDS = ['url', 'title'];

/** A link to a video file, which the service fetches itself. */
function ImportForm() {
  const { domain } = useShop();
  const notify = useToast();
  const [url, setUrl] = useState('');
  const [title, setTitle] = useState('');
  const [sending, setSending] = useState(false);
  const [error, setError] = useState<unknown>(null);

  const submit = async () => {
    setSending(true);
    setError(null);
    try {
      const video = await post<Video>(shopPath(domain, 'videos', 'import'), { url: url.trim(), title: title.trim() });
      addImport(domain, url.trim(), video.id, video.title);
      notify(`Importing ${video.title}`);
      setUrl('');
      setTitle('');
    } catch (e) {
      setError(e);
    } finally {
      setSending(false);
    }
  };

  const err = (name: string) => fieldError(error, name);

  return (
    <Card>
      <Form onSubmit={submit} noValidate>
        <BlockStack gap="300">
          <Text as="h2" variant="headingMd">
            Import from a link
          </Text>
          <Text as="p" tone="subdued">
            A link to a video file (https://…): videoapp downloads the file and makes its versions, as for an upload.
          </Text>
          {error != null && !namesAField(error, IMPORT_FIELDS) && (
            <Banner tone="critical" title="The video could not be imported">
              <p>{error instanceof ApiError || error instanceof Error ? error.message : String(error)}</p>
            </Banner>
          )}
          <FormLayout>
            <TextField
              label="Link to the video file"
              type="url"
              value={url}
              onChange={setUrl}
              autoComplete="off"
              error={err('url')}
              requiredIndicator
            />
            <TextField
              label="Title"
              value={title}
              onChange={setTitle}
              autoComplete="off"
              maxLength={512}
              error={err('title')}
              requiredIndicator
            />
          </FormLayout>
          <InlineStack align="end">
            <Button submit loading={sending}>
              Import
            </Button>
          </InlineStack>
        </BlockStack>
      </Form>
    </Card>
  );
}
