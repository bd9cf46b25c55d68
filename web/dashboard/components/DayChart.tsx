/**
 * The card of one metric per day over the range: a choice of metric and its line chart, with the
 * loading and error states of the series it draws.
 */
import { BlockStack, Card, InlineStack, SkeletonBodyText, Text } from '@shopify/polaris';
import { useMemo, useState } from 'react';

import { SERIES_METRICS, type SeriesKey } from '../format';
import type { Loaded } from '../hooks';
import type { TimeseriesResponse } from '../types';
import { LineChart } from './LineChart';
import { NarrowSelect } from './NarrowSelect';
import { ErrorBanner } from './States';

export function DayChart({ series, currency }: { series: Loaded<TimeseriesResponse>; currency: string }) {
  const [metric, setMetric] = useState<SeriesKey>('views');
  const info = SERIES_METRICS.find((m) => m.key === metric) ?? SERIES_METRICS[0]!;
  const points = useMemo(() => (series.data?.data ?? []).map((b) => ({ date: b.date, value: b.metrics[metric] })), [series.data, metric]);
  return (
    <Card>
      <BlockStack gap="300">
        <InlineStack align="space-between" blockAlign="end" gap="300" wrap>
          <Text as="h2" variant="headingMd">
            {info.label} per day
          </Text>
          <NarrowSelect
            label="Chart metric"
            options={SERIES_METRICS.map((m) => ({ label: m.label, value: m.key }))}
            value={metric}
            onChange={setMetric}
          />
        </InlineStack>
        {series.error && <ErrorBanner title="The chart could not be loaded" error={series.error} onRetry={series.reload} />}
        {series.data && !series.loading ? (
          <LineChart points={points} label={info.label} kind={info.kind} currency={currency} />
        ) : (
          !series.error && <SkeletonBodyText lines={6} />
        )}
      </BlockStack>
    </Card>
  );
}
