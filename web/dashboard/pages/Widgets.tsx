/** Widgets: the shop's widgets, and the form to create or change one. */
import { Badge, BlockStack, Button, ButtonGroup, Card, IndexTable, Layout, Page, Text } from '@shopify/polaris';
import { useState } from 'react';

import { del, get, shopPath } from '../api';
import { ConfirmModal } from '../components/ConfirmModal';
import { StackedRows, useCompact } from '../components/StackedRows';
import { ErrorBanner, LoadingCard } from '../components/States';
import { CopyWidgetId, THEME_BLOCK_HINT } from '../components/WidgetId';
import { WidgetForm } from '../components/WidgetForm';
import { useShop, useToast } from '../context';
import { useLoad } from '../hooks';
import { labelOf, statusTone, WIDGET_STATUSES, WIDGET_TYPES } from '../labels';
import { useNavigation } from '../navigation';
import type { Collection, Product, Video, Widget } from '../types';

const nameOf = (w: Widget) => w.title || 'Untitled widget';

export function WidgetsPage() {
  const { domain } = useShop();
  const notify = useToast();
  const { route, go } = useNavigation();
  const compact = useCompact();
  const widgets = useLoad(() => get<{ widgets: Widget[] }>(shopPath(domain, 'widgets')), [domain]);
  const videos = useLoad(() => get<{ videos: Video[] }>(shopPath(domain, 'videos')), [domain]);
  const products = useLoad(() => get<{ products: Product[] }>(shopPath(domain, 'products')), [domain]);
  // Collections only help pick a rule: without them, the form offers those the products name.
  const collections = useLoad(
    () => get<{ collections: Collection[] }>(shopPath(domain, 'collections')).catch(() => ({ collections: [] })),
    [domain],
  );
  // The widget the URL names, read by itself: a link to its form opens it without the list.
  const editingId = route.widget;
  const editing = useLoad(
    () => (editingId && editingId !== 'new' ? get<Widget>(shopPath(domain, 'widgets', editingId)) : Promise.resolve(null)),
    [domain, editingId],
  );
  const [deleting, setDeleting] = useState<Widget | null>(null);

  const toList = (saved = false) => go({ page: 'widgets' }, { saved });
  const edit = (w: Widget | 'new') => go({ page: 'widgets', widget: w === 'new' ? 'new' : w.id });

  if (editingId) {
    const isNew = editingId === 'new';
    const failed = (isNew ? null : editing.error) ?? videos.error ?? products.error;
    const widget = isNew ? undefined : editing.data;
    if (!videos.data || !products.data || (!isNew && (!widget || widget.id !== editingId))) {
      return (
        <Page title={isNew ? 'Create a widget' : 'Edit widget'} backAction={{ content: 'Widgets', onAction: () => toList() }}>
          {failed ? (
            <ErrorBanner
              title={isNew ? 'Your videos and products could not be loaded' : 'This widget could not be loaded'}
              error={failed}
              onRetry={() => {
                editing.reload();
                videos.reload();
                products.reload();
              }}
            />
          ) : (
            <LoadingCard label={isNew ? 'Loading your videos and products' : 'Loading the widget'} />
          )}
        </Page>
      );
    }
    return (
      <WidgetForm
        key={editingId}
        widget={widget ?? undefined}
        videos={videos.data.videos}
        products={products.data.products}
        collections={collections.data?.collections ?? []}
        onCancel={() => toList()}
        onSaved={(w) => {
          notify(isNew ? `Created ${nameOf(w)}` : `Saved ${nameOf(w)}`);
          toList(true);
          widgets.reload();
        }}
      />
    );
  }

  const list = widgets.data?.widgets ?? [];
  const videoCount = (w: Widget) => (w.sourceType === 'product' ? 'From the product' : String(w.videoIds.length));
  const actions = (w: Widget) => (
    <ButtonGroup>
      <Button onClick={() => edit(w)} accessibilityLabel={`Edit ${nameOf(w)}`}>
        Edit
      </Button>
      <Button tone="critical" variant="plain" onClick={() => setDeleting(w)} accessibilityLabel={`Delete ${nameOf(w)}`}>
        Delete
      </Button>
    </ButtonGroup>
  );

  return (
    <Page
      title="Widgets"
      subtitle="Video carousels, stories and product page galleries for your store."
      primaryAction={{ content: 'Create widget', onAction: () => edit('new') }}
    >
      <Layout>
        <Layout.Section>
          <BlockStack gap="400">
            {widgets.error && <ErrorBanner title="Your widgets could not be loaded" error={widgets.error} onRetry={widgets.reload} />}
            {!widgets.data && widgets.loading && <LoadingCard label="Loading your widgets" />}
            {widgets.data && (
              <Card padding="0">
                <div className="vd-table-head">
                  <BlockStack gap="100">
                    <Text as="h2" variant="headingMd">
                      {list.length === 1 ? '1 widget' : `${list.length} widgets`}
                    </Text>
                    {list.length > 0 && (
                      <Text as="p" tone="subdued">
                        To place a widget anywhere in your theme, copy its ID. {THEME_BLOCK_HINT}
                      </Text>
                    )}
                  </BlockStack>
                </div>
                {compact && list.length > 0 ? (
                  <StackedRows
                    label="Widgets"
                    rows={list.map((w) => ({
                      id: w.id,
                      title: (
                        <BlockStack gap="100">
                          <Text as="h3" fontWeight="semibold">
                            {nameOf(w)}
                          </Text>
                          <CopyWidgetId id={w.id} title={nameOf(w)} />
                        </BlockStack>
                      ),
                      facts: [
                        { label: 'Type', value: labelOf(WIDGET_TYPES, w.type) },
                        { label: 'Status', value: <Badge tone={statusTone(w.status)}>{labelOf(WIDGET_STATUSES, w.status)}</Badge> },
                        { label: 'Videos', value: videoCount(w) },
                        { label: 'Priority', value: String(w.priority) },
                      ],
                      actions: actions(w),
                    }))}
                  />
                ) : (
                  <IndexTable
                    resourceName={{ singular: 'widget', plural: 'widgets' }}
                    itemCount={list.length}
                    selectable={false}
                    headings={[
                      { title: 'Title and ID' },
                      { title: 'Type' },
                      { title: 'Status' },
                      { title: 'Videos', alignment: 'end' },
                      { title: 'Priority', alignment: 'end' },
                      { title: 'Actions' },
                    ]}
                    emptyState={
                      <div className="vd-empty">
                        <BlockStack gap="200" inlineAlign="center">
                          <Text as="p">No widgets yet. Create one to show your videos in your store.</Text>
                          <Button variant="primary" onClick={() => edit('new')}>
                            Create widget
                          </Button>
                        </BlockStack>
                      </div>
                    }
                  >
                    {list.map((w, i) => (
                      <IndexTable.Row id={w.id} key={w.id} position={i}>
                        <IndexTable.Cell as="th" scope="row">
                          <BlockStack gap="100">
                            <Text as="span" fontWeight="semibold">
                              {nameOf(w)}
                            </Text>
                            <CopyWidgetId id={w.id} title={nameOf(w)} />
                          </BlockStack>
                        </IndexTable.Cell>
                        <IndexTable.Cell>{labelOf(WIDGET_TYPES, w.type)}</IndexTable.Cell>
                        <IndexTable.Cell>
                          <Badge tone={statusTone(w.status)}>{labelOf(WIDGET_STATUSES, w.status)}</Badge>
                        </IndexTable.Cell>
                        <IndexTable.Cell>
                          <Text as="span" alignment="end" numeric>
                            {videoCount(w)}
                          </Text>
                        </IndexTable.Cell>
                        <IndexTable.Cell>
                          <Text as="span" alignment="end" numeric>
                            {w.priority}
                          </Text>
                        </IndexTable.Cell>
                        <IndexTable.Cell>{actions(w)}</IndexTable.Cell>
                      </IndexTable.Row>
                    ))}
                  </IndexTable>
                )}
              </Card>
            )}
          </BlockStack>
        </Layout.Section>
      </Layout>

      <ConfirmModal
        open={deleting != null}
        title={`Delete ${deleting ? nameOf(deleting) : 'this widget'}?`}
        confirmLabel="Delete widget"
        onClose={() => setDeleting(null)}
        onConfirm={async () => {
          if (!deleting) return;
          await del(shopPath(domain, 'widgets', deleting.id));
          notify(`Deleted ${nameOf(deleting)}`);
          widgets.reload();
        }}
      >
        <Text as="p">The widget disappears from your store. Its videos stay in your catalog. This cannot be undone.</Text>
      </ConfirmModal>
    </Page>
  );
}
