/**
 * The frame of a page that lists the shop's things (videos, widgets, API keys): the loading and
 * failed states, a card with a heading, the list as a table (or as stacked cards on a phone),
 * and for a page of its own, Edit and Delete on every row with a question before deleting.
 */
import { BlockStack, Button, ButtonGroup, Card, IndexTable, Layout, Page, Text } from '@shopify/polaris';
import type { IndexTableProps } from '@shopify/polaris';
import { useState, type ReactNode } from 'react';

import { del, shopPath } from '../api';
import { useShop, useToast } from '../context';
import type { Loaded } from '../hooks';
import type { Route } from '../routes';
import { ConfirmModal } from './ConfirmModal';
import { RouteLink } from './RouteLink';
import { StackedRows, useCompact } from './StackedRows';
import { ErrorBanner, LoadingCard } from './States';

/** One column of a list: its heading, and what a row shows in it. */
export interface ListColumn<T> {
  title: string;
  /** A number, aligned to the end in the table. */
  numeric?: boolean;
  cell: (item: T) => ReactNode;
}

/** A list that is loading, failed, or shown in a card under `head`. */
export function ListCard({
  loaded,
  errorTitle,
  loadingLabel,
  head,
  children,
}: {
  loaded: Pick<Loaded<unknown>, 'data' | 'error' | 'loading' | 'reload'>;
  errorTitle: string;
  loadingLabel: string;
  head: ReactNode;
  children: ReactNode;
}) {
  return (
    <>
      {loaded.error && <ErrorBanner title={errorTitle} error={loaded.error} onRetry={loaded.reload} />}
      {!loaded.data && loaded.loading && <LoadingCard label={loadingLabel} />}
      {loaded.data != null && (
        <Card padding="0">
          <div className="vd-table-head">{head}</div>
          {children}
        </Card>
      )}
    </>
  );
}

export interface ListTableProps<T> {
  /** The list's accessible name as stacked cards. */
  label: string;
  noun: { singular: string; plural: string };
  items: T[];
  /** The row's name, its header cell. */
  name: (item: T) => string;
  /** The screen the name links to: the item's own page. */
  nameLink?: (item: T) => Route;
  nameHeading: string;
  /** Shown under the name. */
  nameExtra?: (item: T) => ReactNode;
  /** The heading level of a name as a stacked card, one below the card's heading. */
  nameLevel: 'h3' | 'h4';
  /** A first column, beside the name as a stacked card: a thumbnail. */
  media?: ListColumn<T>;
  columns: ListColumn<T>[];
  actions: (item: T) => ReactNode;
  emptyState: ReactNode;
}

/** The rows as a table, or on a phone as stacked cards (a six-column table does not fit one). */
export function ListTable<T extends { id: string }>({
  label,
  noun,
  items,
  name,
  nameLink,
  nameHeading,
  nameExtra,
  nameLevel,
  media,
  columns,
  actions,
  emptyState,
}: ListTableProps<T>) {
  const compact = useCompact();
  const nameCell = (item: T, as: 'h3' | 'h4' | 'span') => {
    // A long name wraps, so that the columns beside it stay in the card.
    const text = (
      <span className="vd-wrap">
        <Text as={as} fontWeight="semibold">
          {nameLink ? <RouteLink to={nameLink(item)}>{name(item)}</RouteLink> : name(item)}
        </Text>
      </span>
    );
    return nameExtra ? (
      <BlockStack gap="100">
        {text}
        {nameExtra(item)}
      </BlockStack>
    ) : (
      text
    );
  };

  if (compact && items.length > 0) {
    return (
      <StackedRows
        label={label}
        rows={items.map((item) => ({
          id: item.id,
          media: media?.cell(item),
          title: nameCell(item, nameLevel),
          facts: columns.map((c) => ({ label: c.title, value: c.cell(item) })),
          actions: actions(item),
        }))}
      />
    );
  }
  const rest: IndexTableProps['headings'][number][] = [
    ...columns.map((c) => (c.numeric ? { title: c.title, alignment: 'end' as const } : { title: c.title })),
    { title: 'Actions' },
  ];
  const headings: IndexTableProps['headings'] = media
    ? [{ title: media.title }, { title: nameHeading }, ...rest]
    : [{ title: nameHeading }, ...rest];
  return (
    <IndexTable resourceName={noun} itemCount={items.length} selectable={false} headings={headings} emptyState={emptyState}>
      {items.map((item, i) => (
        <IndexTable.Row id={item.id} key={item.id} position={i}>
          {media && <IndexTable.Cell>{media.cell(item)}</IndexTable.Cell>}
          <IndexTable.Cell as="th" scope="row">
            {nameCell(item, 'span')}
          </IndexTable.Cell>
          {columns.map((c) => (
            <IndexTable.Cell key={c.title}>
              {c.numeric ? (
                <Text as="span" alignment="end" numeric>
                  {c.cell(item)}
                </Text>
              ) : (
                c.cell(item)
              )}
            </IndexTable.Cell>
          ))}
          <IndexTable.Cell>{actions(item)}</IndexTable.Cell>
        </IndexTable.Row>
      ))}
    </IndexTable>
  );
}

/**
 * A page of the shop's things: its title and "add" action, the list with Edit and Delete on
 * each row, and an empty state that offers the same action as the title bar.
 */
export function ListPage<T extends { id: string }>({
  title,
  subtitle,
  add,
  loaded,
  headNote,
  empty,
  resource,
  onEdit,
  deleteWarning,
  ...table
}: Omit<ListTableProps<T>, 'label' | 'nameLevel' | 'actions' | 'emptyState'> & {
  title: string;
  subtitle: string;
  /** The page's primary action, offered again when the list is empty. */
  add: { content: string; onAction: () => void };
  loaded: Pick<Loaded<unknown>, 'data' | 'error' | 'loading' | 'reload'>;
  /** Under the count, while the list has rows. */
  headNote?: ReactNode;
  /** What the empty list says. */
  empty: string;
  /** The shop's resource listed, in API paths: `videos`, `widgets`. */
  resource: string;
  onEdit: (item: T) => void;
  /** What deleting does, in the question asked first. */
  deleteWarning: string;
}) {
  const { domain } = useShop();
  const notify = useToast();
  const [deleting, setDeleting] = useState<T | null>(null);
  const { noun, items, name } = table;
  const count = items.length === 1 ? `1 ${noun.singular}` : `${items.length} ${noun.plural}`;

  const actions = (item: T) => (
    <ButtonGroup>
      <Button onClick={() => onEdit(item)} accessibilityLabel={`Edit ${name(item)}`}>
        Edit
      </Button>
      <Button tone="critical" variant="plain" onClick={() => setDeleting(item)} accessibilityLabel={`Delete ${name(item)}`}>
        Delete
      </Button>
    </ButtonGroup>
  );

  return (
    <Page title={title} subtitle={subtitle} primaryAction={add}>
      <Layout>
        <Layout.Section>
          <BlockStack gap="400">
            <ListCard
              loaded={loaded}
              errorTitle={`Your ${noun.plural} could not be loaded`}
              loadingLabel={`Loading your ${noun.plural}`}
              head={
                headNote && items.length > 0 ? (
                  <BlockStack gap="100">
                    <Text as="h2" variant="headingMd">
                      {count}
                    </Text>
                    <Text as="p" tone="subdued">
                      {headNote}
                    </Text>
                  </BlockStack>
                ) : (
                  <Text as="h2" variant="headingMd">
                    {count}
                  </Text>
                )
              }
            >
              <ListTable
                {...table}
                label={title}
                nameLevel="h3"
                actions={actions}
                emptyState={
                  <div className="vd-empty">
                    <BlockStack gap="200" inlineAlign="center">
                      <Text as="p">{empty}</Text>
                      <Button variant="primary" onClick={add.onAction}>
                        {add.content}
                      </Button>
                    </BlockStack>
                  </div>
                }
              />
            </ListCard>
          </BlockStack>
        </Layout.Section>
      </Layout>

      <ConfirmModal
        open={deleting != null}
        title={`Delete ${deleting ? name(deleting) : `this ${noun.singular}`}?`}
        confirmLabel={`Delete ${noun.singular}`}
        onClose={() => setDeleting(null)}
        onConfirm={async () => {
          if (!deleting) return;
          await del(shopPath(domain, resource, deleting.id));
          notify(`Deleted ${name(deleting)}`);
          loaded.reload();
        }}
      >
        <Text as="p">{deleteWarning}</Text>
      </ConfirmModal>
    </Page>
  );
}
