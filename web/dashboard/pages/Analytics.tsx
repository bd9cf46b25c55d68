/**
 * Analytics: the shop's totals and their direct and influenced part, what the holdout shows, a
 * daily chart, the numbers broken down by placement, device, country or source, and the
 * per-video and per-widget tables.
 */
import { Badge, BlockStack, Box, Card, InlineGrid, InlineStack, Layout, Page, SkeletonBodyText, Text } from '@shopify/polaris';
import { useMemo } from 'react';

import { get } from '../api';
import { AnalyticsTable, TitleCell, type Column } from '../components/AnalyticsTable';
import { AttributionSplit } from '../components/AttributionSplit';
import { Breakdown } from '../components/Breakdown';
import { DayChart } from '../components/DayChart';
import { Checklist } from '../components/Checklist';
import { HoldoutCard } from '../components/HoldoutCard';
import { MetricCard } from '../components/MetricCard';
import { RangePicker } from '../components/RangePicker';
import { ErrorBanner } from '../components/States';
import { useShop } from '../context';
import { formatCount, formatMoney, SUMMARY_METRICS } from '../format';
import { useLoad } from '../hooks';
import { seriesRequest, summaryRequest } from '../home';
import { labelOf, statusTone, VIDEO_STATUSES, WIDGET_STATUSES, WIDGET_TYPES } from '../labels';
import { useRange } from '../range';
import type { Metrics, SummaryResponse, TimeseriesResponse, VideoAnalytics, WidgetAnalytics } from '../types';

function metricColumns<Row extends { metrics: Metrics }>(currency: string): Column<Row>[] {
  const count = (key: 'impressions' | 'views' | 'clicks' | 'add_to_cart' | 'orders') => (r: Row) => formatCount(r.metrics[key]);
  return [
    { heading: 'Impressions', sortKey: 'impressions', numeric: true, render: count('impressions') },
    { heading: 'Views', sortKey: 'views', numeric: true, render: count('views') },
    { heading: 'Clicks', sortKey: 'clicks', numeric: true, render: count('clicks') },
    { heading: 'Add to cart', sortKey: 'add_to_cart', numeric: true, render: count('add_to_cart') },
    { heading: 'Orders', sortKey: 'orders', numeric: true, render: count('orders') },
    { heading: 'Revenue', sortKey: 'revenue', numeric: true, render: (r) => formatMoney(r.metrics.revenue, currency) },
  ];
}

export function AnalyticsPage() {
  const { shop } = useShop();
  const { range, picker } = useRange();
  const { start, end } = range;

  const summary = useLoad(() => get<SummaryResponse>(...summaryRequest({ start, end })), [start, end]);
  const series = useLoad(() => get<TimeseriesResponse>(...seriesRequest({ start, end })), [start, end]);

  const videoColumns = useMemo<Column<VideoAnalytics>[]>(
    () => [
      {
        heading: 'Video',
        sortKey: 'title',
        render: (v) => (
          <TitleCell title={v.title || 'Untitled video'} to={{ page: 'videos', stats: v.id, from: 'analytics' }}>
            <Badge tone={statusTone(v.status)}>{labelOf(VIDEO_STATUSES, v.status)}</Badge>
          </TitleCell>
        ),
      },
      ...metricColumns<VideoAnalytics>(shop.currency),
    ],
    [shop.currency],
  );
  const widgetColumns = useMemo<Column<WidgetAnalytics>[]>(
    () => [
      {
        heading: 'Widget',
        sortKey: 'title',
        // Its type and number of videos under its name: nine columns would not fit a laptop's screen.
        render: (w) => (
          <TitleCell title={w.title || 'Untitled widget'}>
            <InlineStack gap="200" blockAlign="center">
              <Badge tone={statusTone(w.status)}>{labelOf(WIDGET_STATUSES, w.status)}</Badge>
              <Text as="span" tone="subdued">
                {labelOf(WIDGET_TYPES, w.type)}, {w.video_count === 1 ? '1 video' : `${formatCount(w.video_count)} videos`}
              </Text>
            </InlineStack>
          </TitleCell>
        ),
      },
      ...metricColumns<WidgetAnalytics>(shop.currency),
    ],
    [shop.currency],
  );

  // While a new range loads, the old numbers are not shown: nothing on screen is ever from
  // another range than the one the picker says.
  const data = summary.loading ? undefined : summary.data?.data;
  const previous = data?.comparison?.metrics;

  return (
    <Page title="Analytics" subtitle={shop.name ? `How shoppers use your videos on ${shop.name}` : undefined}>
      <Layout>
        <Layout.Section>
          <Checklist />
        </Layout.Section>
        <Layout.Section>
          <Card>
            <RangePicker {...picker} />
          </Card>
        </Layout.Section>

        <Layout.Section>
          <BlockStack gap="300">
            <Box paddingInline={{ xs: '400', sm: '0' }}>
              <Text as="h2" variant="headingMd">
                Overview
              </Text>
            </Box>
            {summary.error && <ErrorBanner title="The totals could not be loaded" error={summary.error} onRetry={summary.reload} />}
            <div aria-busy={summary.loading || undefined}>
              <InlineGrid columns={{ xs: 1, sm: 2, lg: 4 }} gap="300">
                {SUMMARY_METRICS.map((m) =>
                  data ? (
                    <MetricCard
                      key={m.key}
                      id={m.key}
                      label={m.label}
                      help={m.help}
                      value={data[m.key]}
                      previous={previous?.[m.key]}
                      kind={m.kind}
                      currency={shop.currency}
                    />
                  ) : (
                    <Card key={m.key}>
                      <BlockStack gap="200">
                        <Text as="h3" variant="headingSm">
                          {m.label}
                        </Text>
                        <SkeletonBodyText lines={2} />
                      </BlockStack>
                    </Card>
                  ),
                )}
              </InlineGrid>
            </div>
          </BlockStack>
        </Layout.Section>

        {!summary.error && (
          <Layout.Section>
            {data ? (
              <AttributionSplit metrics={data} currency={shop.currency} window={shop.attributionWindowDays} />
            ) : (
              <Card>
                <BlockStack gap="200">
                  <Text as="h2" variant="headingMd">
                    Direct and influenced sales
                  </Text>
                  <SkeletonBodyText lines={3} />
                </BlockStack>
              </Card>
            )}
          </Layout.Section>
        )}

        <Layout.Section>
          <HoldoutCard range={range} holdoutPercent={shop.holdoutPercent} currency={shop.currency} />
        </Layout.Section>

        <Layout.Section>
          <DayChart series={series} currency={shop.currency} />
        </Layout.Section>

        <Layout.Section>
          <Breakdown
            endpoint="/analytics/summary"
            range={range}
            currency={shop.currency}
            heading="Where your numbers come from"
            intro="Your numbers by the page the widget showed on, the shopper's device, country or where they came from."
          />
        </Layout.Section>

        <Layout.Section>
          <AnalyticsTable<VideoAnalytics> resource="videos" columns={videoColumns} range={range} />
        </Layout.Section>

        <Layout.Section>
          <AnalyticsTable<WidgetAnalytics> resource="widgets" columns={widgetColumns} range={range} />
        </Layout.Section>
      </Layout>
    </Page>
  );
}
