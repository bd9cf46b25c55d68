/**
 * A video's page: what shoppers did with it in the range, its sales beside its watching (how long,
 * how far), its numbers per day and where they came from.
 */
import { Badge, BlockStack, Box, Card, InlineGrid, InlineStack, Layout, Page, SkeletonBodyText, Text } from '@shopify/polaris';

import { get } from '../api';
import { SplitParts } from '../components/AttributionSplit';
import { Breakdown } from '../components/Breakdown';
import { DayChart } from '../components/DayChart';
import { Metric } from '../components/MetricCard';
import { RangePicker } from '../components/RangePicker';
import { ReachedChart } from '../components/ReachedChart';
import { ErrorBanner } from '../components/States';
import { useShop } from '../context';
import { formatDay } from '../dates';
import { formatDuration, WATCH_METRICS, type MetricInfo, type SeriesKey } from '../format';
import { useLoad } from '../hooks';
import { labelOf, statusTone, VIDEO_STATUSES } from '../labels';
import { useRange } from '../range';
import type { Metrics, TimeseriesResponse, VideoAnalyticsOne } from '../types';

const SALES: MetricInfo<SeriesKey>[] = [
  { key: 'orders', label: 'Orders', kind: 'count', help: 'Completed checkouts credited to this video' },
  { key: 'revenue', label: 'Revenue', kind: 'money', help: 'Value of those orders' },
  { key: 'add_to_cart', label: 'Add to cart', kind: 'count', help: 'Products added to the cart from this video' },
];

const WATCH_HELP: Partial<Record<SeriesKey, string>> = {
  watch_time_seconds: 'Time it played, over every opening',
  avg_watch_seconds: 'Time it played each time it was opened',
};

/** Nothing at all happened: no card shown, opened, watched or bought from. */
const nothingHappened = (m: Metrics): boolean =>
  !m.impressions && !m.views && !m.clicks && !m.add_to_cart && !m.orders && !m.watch_time_seconds && !m.reached.p25;

export function VideoStatsPage({ id, back }: { id: string; back: { label: string; go: () => void; edit: () => void } }) {
  const { shop } = useShop();
  const { range, picker } = useRange();
  const { start, end } = range;
  const endpoint = `/analytics/video/${encodeURIComponent(id)}`;

  const one = useLoad(
    () => get<VideoAnalyticsOne>(endpoint, { start_date: start, end_date: end, compare: 'previous_period' }),
    [endpoint, start, end],
  );
  const series = useLoad(
    () => get<TimeseriesResponse>('/analytics/timeseries', { start_date: start, end_date: end, interval: 'day', video_id: id }),
    [id, start, end],
  );

  // The video's title and poster stay while another range loads; its numbers do not.
  const video = one.data?.data;
  const data = one.loading ? undefined : one.data?.data;

  return (
    <Page
      title={video?.title || (one.error ? 'Video' : 'Loading the video…')}
      titleMetadata={video ? <Badge tone={statusTone(video.status)}>{labelOf(VIDEO_STATUSES, video.status)}</Badge> : undefined}
      backAction={{ content: back.label, onAction: back.go }}
      secondaryActions={[{ content: 'Edit video', onAction: back.edit }]}
    >
      <Layout>
        <Layout.Section>
          <Card>
            <InlineStack gap="400" blockAlign="center" wrap={false}>
              {video?.thumbnail_url ? (
                <img className="vd-video-poster" src={video.thumbnail_url} alt="" />
              ) : (
                <span className="vd-video-poster" />
              )}
              <BlockStack gap="300">
                <RangePicker {...picker} />
                {video && (
                  <Text as="p" tone="subdued">
                    {video.duration > 0 ? `${formatDuration(video.duration)} long` : 'Length not known yet'}
                    {', '}
                    {video.product_count === 1 ? '1 product' : `${video.product_count} products`}
                  </Text>
                )}
              </BlockStack>
            </InlineStack>
          </Card>
        </Layout.Section>

        {one.error && (
          <Layout.Section>
            <ErrorBanner title="This video's numbers could not be loaded" error={one.error} onRetry={one.reload} />
          </Layout.Section>
        )}

        {!data && !one.error && (
          <Layout.Section>
            <Card>
              <SkeletonBodyText lines={6} />
            </Card>
          </Layout.Section>
        )}

        {data && nothingHappened(data.metrics) && (
          <Layout.Section>
            <Card>
              <div className="vd-empty" data-testid="video-empty">
                <BlockStack gap="200" inlineAlign="center">
                  <Text as="h2" variant="headingMd">
                    Nothing happened with this video in these dates
                  </Text>
                  <Text as="p" tone="subdued">
                    No shopper saw, opened or bought from it{' '}
                    {start === end ? `on ${formatDay(start)}` : `between ${formatDay(start)} and ${formatDay(end)}`}. Show it in an active
                    widget, or choose other dates.
                  </Text>
                </BlockStack>
              </div>
            </Card>
          </Layout.Section>
        )}

        {data && !nothingHappened(data.metrics) && (
          <>
            <Layout.Section variant="oneHalf">
              <Card>
                <BlockStack gap="400">
                  <Text as="h2" variant="headingMd">
                    Sales
                  </Text>
                  <InlineGrid columns={{ xs: 1, sm: 3, md: 1, lg: 3 }} gap="300">
                    {SALES.map((m) => (
                      <Metric
                        key={m.key}
                        id={m.key}
                        label={m.label}
                        help={m.help}
                        value={data.metrics[m.key]}
                        previous={data.comparison?.metrics[m.key]}
                        kind={m.kind}
                        currency={shop.currency}
                      />
                    ))}
                  </InlineGrid>
                  <SplitParts metrics={data.metrics} currency={shop.currency} level="h3" />
                </BlockStack>
              </Card>
            </Layout.Section>

            <Layout.Section variant="oneHalf">
              <Card>
                <BlockStack gap="400">
                  <Text as="h2" variant="headingMd">
                    Watching
                  </Text>
                  <InlineGrid columns={{ xs: 1, sm: 3, md: 1, lg: 3 }} gap="300">
                    {WATCH_METRICS.map((m) => (
                      <Metric
                        key={m.key}
                        id={m.key}
                        label={m.label}
                        help={WATCH_HELP[m.key] ?? m.help}
                        value={data.metrics[m.key]}
                        previous={data.comparison?.metrics[m.key]}
                        kind={m.kind}
                        currency={shop.currency}
                      />
                    ))}
                  </InlineGrid>
                  <BlockStack gap="200">
                    <Text as="h3" variant="headingSm">
                      How far shoppers watched
                    </Text>
                    <Text as="p" variant="bodySm" tone="subdued">
                      Of the {data.metrics.clicks === 1 ? '1 time' : `${data.metrics.clicks} times`} the video was opened, how many reached
                      each point.
                    </Text>
                    <ReachedChart reached={data.metrics.reached} openings={data.metrics.clicks} />
                  </BlockStack>
                </BlockStack>
              </Card>
            </Layout.Section>

            <Layout.Section>
              <DayChart series={series} currency={shop.currency} />
            </Layout.Section>

            <Layout.Section>
              <Box paddingBlockEnd="400">
                <Breakdown
                  endpoint={endpoint}
                  range={range}
                  currency={shop.currency}
                  heading="Where shoppers watched it"
                  intro="This video's numbers by the page it showed on, the shopper's device, country or where they came from."
                />
              </Box>
            </Layout.Section>
          </>
        )}
      </Layout>
    </Page>
  );
}
