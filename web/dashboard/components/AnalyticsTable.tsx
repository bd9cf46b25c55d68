/**
 * A per-video or per-widget analytics table. Sorting and paging are the API's (`sort_by`,
 * `sort_order`, `page`, `limit`), so what is shown is exactly one page of the service's order.
 */
import { BlockStack, Button, Card, IndexTable, InlineStack, Pagination, Select, Text, type IndexTableProps } from '@shopify/polaris';
import { useMemo, useState, type ReactNode } from 'react';

import { download, get } from '../api';
import { useToast } from '../context';
import type { DateRange } from '../dates';
import { useLoad } from '../hooks';
import type { Paged, SortKey, SortOrder } from '../types';
import type { Route } from '../routes';
import { RouteLink } from './RouteLink';
import { StackedRows, useCompact } from './StackedRows';
import { ErrorBanner } from './States';

/** A row's name cell: the name in bold (a link to the row's own page, if it has one), with what else identifies the row beneath it. */
export function TitleCell({ title, to, children }: { title: string; to?: Route; children: ReactNode }) {
  return (
    <div className="vd-cell-title">
      <BlockStack gap="100" inlineAlign="start">
        <Text as="span" fontWeight="semibold">
          {to ? <RouteLink to={to}>{title}</RouteLink> : title}
        </Text>
        {children}
      </BlockStack>
    </div>
  );
}

export interface Column<Row> {
  heading: string;
  /** The API's `sort_by` for this column, when it can sort by it. */
  sortKey?: SortKey;
  numeric?: boolean;
  render: (row: Row) => ReactNode;
}

const SORT_LABELS: Record<SortKey, string> = {
  views: 'Views',
  clicks: 'Clicks',
  impressions: 'Impressions',
  add_to_cart: 'Add to cart',
  orders: 'Orders',
  revenue: 'Revenue',
  title: 'Title',
  created_at: 'Date created',
};

const PAGE_SIZE = 10;

type Headings = IndexTableProps['headings'];

/** The two lists the analytics API ranks: its endpoint and how the table names its rows. */
const RESOURCES = {
  videos: { title: 'Videos', endpoint: '/analytics/videos', resourceName: { singular: 'video', plural: 'videos' } },
  widgets: { title: 'Widgets', endpoint: '/analytics/widgets', resourceName: { singular: 'widget', plural: 'widgets' } },
} as const;

export function AnalyticsTable<Row extends { id: string; title: string }>({
  resource,
  columns,
  range,
}: {
  resource: keyof typeof RESOURCES;
  columns: Column<Row>[];
  range: DateRange;
}) {
  const { title, endpoint, resourceName } = RESOURCES[resource];
  const notify = useToast();
  const compact = useCompact();
  const [sortBy, setSortBy] = useState<SortKey>('views');
  const [sortOrder, setSortOrder] = useState<SortOrder>('desc');
  // The page belongs to one range and one order: any change of those starts again at page 1.
  const view = `${range.start}/${range.end}/${sortBy}/${sortOrder}`;
  const [paging, setPaging] = useState({ view, page: 1 });
  const page = paging.view === view ? paging.page : 1;
  const [downloading, setDownloading] = useState(false);

  const query = useMemo(
    () => ({ start_date: range.start, end_date: range.end, sort_by: sortBy, sort_order: sortOrder }),
    [range.start, range.end, sortBy, sortOrder],
  );
  const list = useLoad(() => get<Paged<Row>>(endpoint, { ...query, page, limit: PAGE_SIZE }), [endpoint, query, page]);

  const sortColumn = columns.findIndex((c) => c.sortKey === sortBy);
  const rows = list.data?.data ?? [];
  const pages = list.data?.pagination.total_pages ?? 0;
  const total = list.data?.pagination.total_count ?? 0;
  const headings = columns.map((c) => ({ title: c.heading, alignment: c.numeric ? 'end' : 'start' })) as Headings;

  const sort = (key: SortKey, order: SortOrder) => {
    setSortBy(key);
    setSortOrder(order);
  };

  const downloadCsv = async () => {
    setDownloading(true);
    try {
      const name = await download(endpoint, query, `videoapp-${resourceName.plural}-${range.start}-to-${range.end}.csv`);
      notify(`Downloaded ${name}`);
    } catch (e) {
      notify(e instanceof Error ? e.message : 'The download failed', { error: true });
    } finally {
      setDownloading(false);
    }
  };

  return (
    <Card padding="0">
      <BlockStack gap="0">
        <div className="vd-table-head">
          <InlineStack gap="300" align="space-between" blockAlign="end" wrap>
            <BlockStack gap="100">
              <Text as="h2" variant="headingMd">
                {title}
              </Text>
              <Text as="p" tone="subdued">
                {list.data ? `${total} ${total === 1 ? resourceName.singular : resourceName.plural}` : '\u00a0'}
              </Text>
            </BlockStack>
            <InlineStack gap="200" blockAlign="end" wrap>
              <Select
                label="Sort by"
                options={(Object.keys(SORT_LABELS) as SortKey[]).map((k) => ({ label: SORT_LABELS[k], value: k }))}
                value={sortBy}
                onChange={(v) => sort(v as SortKey, sortOrder)}
              />
              <Select
                label="Order"
                options={[
                  { label: sortBy === 'title' ? 'Z to A' : sortBy === 'created_at' ? 'Newest first' : 'Highest first', value: 'desc' },
                  { label: sortBy === 'title' ? 'A to Z' : sortBy === 'created_at' ? 'Oldest first' : 'Lowest first', value: 'asc' },
                ]}
                value={sortOrder}
                onChange={(v) => sort(sortBy, v as SortOrder)}
              />
              <Button onClick={downloadCsv} loading={downloading} accessibilityLabel={`Download CSV of ${title.toLowerCase()}`}>
                Download CSV
              </Button>
            </InlineStack>
          </InlineStack>
        </div>
        {list.error && (
          <div className="vd-table-error">
            <ErrorBanner title={`${title} could not be loaded`} error={list.error} onRetry={list.reload} />
          </div>
        )}
        {compact && rows.length > 0 ? (
          <StackedRows
            label={title}
            rows={rows.map((row) => ({
              id: row.id,
              title: columns[0]?.render(row),
              facts: columns.slice(1).map((c) => ({ label: c.heading, value: c.render(row) })),
            }))}
          />
        ) : (
          <IndexTable
            resourceName={resourceName}
            itemCount={rows.length}
            selectable={false}
            loading={list.loading}
            headings={headings}
            sortable={columns.map((c) => !!c.sortKey)}
            sortColumnIndex={sortColumn >= 0 ? sortColumn : undefined}
            sortDirection={sortOrder === 'asc' ? 'ascending' : 'descending'}
            defaultSortDirection="descending"
            onSort={(index, direction) => {
              const key = columns[index]?.sortKey;
              if (key) sort(key, direction === 'ascending' ? 'asc' : 'desc');
            }}
            emptyState={
              <div className="vd-empty">
                <Text as="p" tone="subdued">
                  {list.loading ? 'Loading…' : `No ${resourceName.plural} yet.`}
                </Text>
              </div>
            }
          >
            {rows.map((row, i) => (
              <IndexTable.Row id={row.id} key={row.id} position={i}>
                {columns.map((c, ci) => (
                  <IndexTable.Cell key={c.heading} as={ci === 0 ? 'th' : 'td'} scope={ci === 0 ? 'row' : undefined}>
                    {c.numeric ? (
                      <Text as="span" alignment="end" numeric>
                        {c.render(row)}
                      </Text>
                    ) : (
                      c.render(row)
                    )}
                  </IndexTable.Cell>
                ))}
              </IndexTable.Row>
            ))}
          </IndexTable>
        )}
        {pages > 0 && (
          <div className="vd-table-foot">
            <Pagination
              hasPrevious={page > 1}
              hasNext={page < pages}
              onPrevious={() => setPaging({ view, page: page - 1 })}
              onNext={() => setPaging({ view, page: page + 1 })}
              label={`Page ${page} of ${pages}`}
              accessibilityLabel={`Pages of ${title.toLowerCase()}`}
              accessibilityLabels={{ previous: `Previous page of ${title.toLowerCase()}`, next: `Next page of ${title.toLowerCase()}` }}
            />
          </div>
        )}
      </BlockStack>
    </Card>
  );
}
