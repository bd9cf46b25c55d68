/**
 * The numbers of a range broken down by one dimension (where the widget showed, the shopper's
 * device, country or traffic source): a row per value that had events, in the service's order.
 * Nothing is asked for until the merchant chooses a dimension, so the page it is on opens with
 * no request more than before.
 */
import { BlockStack, Button, ButtonGroup, Card, IndexTable, InlineStack, Select, Text, type IndexTableProps } from '@shopify/polaris';
import { useMemo, useState, type ReactNode } from 'react';

import { get, type Query } from '../api';
import type { DateRange } from '../dates';
import { formatCount, formatMetric, formatMoney } from '../format';
import { useLoad } from '../hooks';
import { DIMENSIONS, dimensionValue } from '../labels';
import type { BreakdownEntry, BreakdownResponse, BreakdownSortKey, Dimension, Metrics, SortOrder } from '../types';
import { StackedRows, useCompact } from './StackedRows';
import { ErrorBanner } from './States';

interface Column {
  heading: string;
  /** The API's `sort_by` for this column, when it can sort by it. */
  sortKey?: BreakdownSortKey;
  /** For the tests and the screen: the raw number shown. */
  key: string;
  value: (m: Metrics) => number;
  format: (m: Metrics, currency: string) => string;
}

const COLUMNS: Column[] = [
  { heading: 'Views', sortKey: 'views', key: 'views', value: (m) => m.views, format: (m) => formatCount(m.views) },
  { heading: 'Clicks', sortKey: 'clicks', key: 'clicks', value: (m) => m.clicks, format: (m) => formatCount(m.clicks) },
  { heading: 'Orders', sortKey: 'orders', key: 'orders', value: (m) => m.orders, format: (m) => formatCount(m.orders) },
  { heading: 'Revenue', sortKey: 'revenue', key: 'revenue', value: (m) => m.revenue, format: (m, c) => formatMoney(m.revenue, c) },
  {
    heading: 'Watch time',
    key: 'watch_time_seconds',
    value: (m) => m.watch_time_seconds,
    format: (m, c) => formatMetric(m.watch_time_seconds, 'seconds', c),
  },
  {
    heading: 'Completion rate',
    key: 'completion_rate',
    value: (m) => m.completion_rate,
    format: (m, c) => formatMetric(m.completion_rate, 'rate', c),
  },
];

const SORTS: { label: string; value: BreakdownSortKey }[] = [
  { label: 'Impressions', value: 'impressions' },
  { label: 'Views', value: 'views' },
  { label: 'Clicks', value: 'clicks' },
  { label: 'Add to cart', value: 'add_to_cart' },
  { label: 'Orders', value: 'orders' },
  { label: 'Revenue', value: 'revenue' },
];

const HEADINGS: Record<Dimension, string> = { placement: 'Placement', device: 'Device', country: 'Country', source: 'Source' };

export function Breakdown({
  endpoint,
  range,
  currency,
  heading,
  intro,
}: {
  /** The analytics path that takes `breakdown`: the summary, or one video's. */
  endpoint: string;
  range: DateRange;
  currency: string;
  heading: string;
  intro: ReactNode;
}) {
  const compact = useCompact();
  const [dimension, setDimension] = useState<Dimension | null>(null);
  const [sortBy, setSortBy] = useState<BreakdownSortKey>('views');
  const [sortOrder, setSortOrder] = useState<SortOrder>('desc');

  const query = useMemo<Query | null>(
    () => dimension && { start_date: range.start, end_date: range.end, breakdown: dimension, sort_by: sortBy, sort_order: sortOrder },
    [dimension, range.start, range.end, sortBy, sortOrder],
  );
  const answer = useLoad(() => (query ? get<BreakdownResponse>(endpoint, query) : Promise.resolve(null)), [endpoint, query]);
  // Rows of another dimension than the one chosen are never shown, not even while it loads.
  const rows = (dimension && !answer.loading && answer.data?.data) || [];
  const sortColumn = COLUMNS.findIndex((c) => c.sortKey === sortBy);
  const name = (value: string) => (dimension ? dimensionValue(dimension, value) : value);
  const valueOf = (entry: BreakdownEntry) => (dimension && entry[dimension]) || 'unknown';
  const headings = [
    { title: dimension ? HEADINGS[dimension] : '' },
    ...COLUMNS.map((c) => ({ title: c.heading, alignment: 'end' as const })),
  ] as IndexTableProps['headings'];

  const cell = (c: Column, m: Metrics, value: string) => (
    <span data-testid={`breakdown-${value}-${c.key}`} data-value={String(c.value(m))}>
      {c.format(m, currency)}
    </span>
  );

  return (
    <Card padding="0">
      <BlockStack gap="0">
        <div className="vd-table-head">
          <BlockStack gap="300">
            <BlockStack gap="100">
              <Text as="h2" variant="headingMd">
                {heading}
              </Text>
              <Text as="p" tone="subdued">
                {intro}
              </Text>
            </BlockStack>
            <InlineStack gap="300" align="space-between" blockAlign="end" wrap>
              <div className="vd-segments" role="group" aria-label="Break down by">
                <ButtonGroup variant="segmented">
                  {DIMENSIONS.map((d) => (
                    <Button key={d.value} pressed={dimension === d.value} onClick={() => setDimension(d.value)}>
                      {d.label}
                    </Button>
                  ))}
                </ButtonGroup>
              </div>
              {dimension && (
                <InlineStack gap="200" blockAlign="end" wrap>
                  <Select label="Sort by" options={SORTS} value={sortBy} onChange={(v) => setSortBy(v as BreakdownSortKey)} />
                  <Select
                    label="Order"
                    options={[
                      { label: 'Highest first', value: 'desc' },
                      { label: 'Lowest first', value: 'asc' },
                    ]}
                    value={sortOrder}
                    onChange={(v) => setSortOrder(v as SortOrder)}
                  />
                </InlineStack>
              )}
            </InlineStack>
          </BlockStack>
        </div>
        {answer.error && (
          <div className="vd-table-error">
            <ErrorBanner title="The breakdown could not be loaded" error={answer.error} onRetry={answer.reload} />
          </div>
        )}
        {dimension &&
          !answer.error &&
          (compact && rows.length > 0 ? (
            <StackedRows
              label={`${heading}, ${DIMENSIONS.find((d) => d.value === dimension)?.label.toLowerCase()}`}
              rows={rows.map((entry) => {
                const value = valueOf(entry);
                return {
                  id: value,
                  title: (
                    <Text as="h3" fontWeight="semibold">
                      {name(value)}
                    </Text>
                  ),
                  facts: COLUMNS.map((c) => ({ label: c.heading, value: cell(c, entry.metrics, value) })),
                };
              })}
            />
          ) : (
            <IndexTable
              resourceName={{ singular: HEADINGS[dimension].toLowerCase(), plural: `${HEADINGS[dimension].toLowerCase()} values` }}
              itemCount={rows.length}
              selectable={false}
              loading={answer.loading}
              headings={headings}
              sortable={[false, ...COLUMNS.map((c) => !!c.sortKey)]}
              sortColumnIndex={sortColumn >= 0 ? sortColumn + 1 : undefined}
              sortDirection={sortOrder === 'asc' ? 'ascending' : 'descending'}
              defaultSortDirection="descending"
              onSort={(index, direction) => {
                const key = COLUMNS[index - 1]?.sortKey;
                if (!key) return;
                setSortBy(key);
                setSortOrder(direction === 'ascending' ? 'asc' : 'desc');
              }}
              emptyState={
                <div className="vd-empty">
                  <Text as="p" tone="subdued">
                    {answer.loading ? 'Loading…' : 'Nothing happened in these dates.'}
                  </Text>
                </div>
              }
            >
              {rows.map((entry, i) => {
                const value = valueOf(entry);
                return (
                  <IndexTable.Row id={value} key={value} position={i}>
                    <IndexTable.Cell as="th" scope="row">
                      <Text as="span" fontWeight="semibold">
                        {name(value)}
                      </Text>
                    </IndexTable.Cell>
                    {COLUMNS.map((c) => (
                      <IndexTable.Cell key={c.key}>
                        <Text as="span" alignment="end" numeric>
                          {cell(c, entry.metrics, value)}
                        </Text>
                      </IndexTable.Cell>
                    ))}
                  </IndexTable.Row>
                );
              })}
            </IndexTable>
          ))}
      </BlockStack>
    </Card>
  );
}
