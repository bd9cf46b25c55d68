/** Widgets: the shop's widgets, and the form to create or change one. */
import { Badge, BlockStack, Button, ButtonGroup, Card, IndexTable, Layout, Page, Text } from '@shopify/polaris';
import { useState } from 'react';

import { del, get, shopPath } from '../api';
import { ConfirmModal } from '../components/ConfirmModal';
import { ErrorBanner, LoadingCard } from '../components/States';
import { WidgetForm } from '../components/WidgetForm';
import { useShop, useToast } from '../context';
import { useLoad } from '../hooks';
import { labelOf, statusTone, WIDGET_STATUSES, WIDGET_TYPES } from '../labels';
import type { Product, Video, Widget } from '../types';

const nameOf = (w: Widget) => w.title || 'Untitled widget';

export function WidgetsPage() {
  const { domain } = useShop();
  const notify = useToast();
  const widgets = useLoad(() => get<{ widgets: Widget[] }>(shopPath(domain, 'widgets')), [domain]);
  const videos = useLoad(() => get<{ videos: Video[] }>(shopPath(domain, 'videos')), [domain]);
  const products = useLoad(() => get<{ products: Product[] }>(shopPath(domain, 'products')), [domain]);
  const [editing, setEditing] = useState<Widget | 'new' | null>(null);
  const [deleting, setDeleting] = useState<Widget | null>(null);

  if (editing) {
    const failed = videos.error ?? products.error;
    if (!videos.data || !products.data) {
      return (
        <Page title={editing === 'new' ? 'Create a widget' : 'Edit widget'} backAction={{ content: 'Widgets', onAction: () => setEditing(null) }}>
          {failed ? (
            <ErrorBanner
              title="Your videos and products could not be loaded"
              error={failed}
              onRetry={() => {
                videos.reload();
                products.reload();
              }}
            />
          ) : (
            <LoadingCard label="Loading your videos and products" />
          )}
        </Page>
      );
    }
    return (
      <WidgetForm
        widget={editing === 'new' ? undefined : editing}
        videos={videos.data.videos}
        products={products.data.products}
        onCancel={() => setEditing(null)}
        onSaved={(w) => {
          notify(editing === 'new' ? `Created ${nameOf(w)}` : `Saved ${nameOf(w)}`);
          setEditing(null);
          widgets.reload();
        }}
      />
    );
  }

  const list = widgets.data?.widgets ?? [];

  return (
    <Page
      title="Widgets"
      subtitle="Video carousels, stories and product page galleries for your store."
      primaryAction={{ content: 'Create widget', onAction: () => setEditing('new') }}
    >
      <Layout>
        <Layout.Section>
          <BlockStack gap="400">
            {widgets.error && <ErrorBanner title="Your widgets could not be loaded" error={widgets.error} onRetry={widgets.reload} />}
            {!widgets.data && widgets.loading && <LoadingCard label="Loading your widgets" />}
            {widgets.data && (
              <Card padding="0">
                <div className="vd-table-head">
                  <Text as="h2" variant="headingMd">
                    {list.length === 1 ? '1 widget' : `${list.length} widgets`}
                  </Text>
                </div>
                <IndexTable
                  resourceName={{ singular: 'widget', plural: 'widgets' }}
                  itemCount={list.length}
                  selectable={false}
                  headings={[
                    { title: 'Title' },
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
                        <Button variant="primary" onClick={() => setEditing('new')}>
                          Create widget
                        </Button>
                      </BlockStack>
                    </div>
                  }
                >
                  {list.map((w, i) => (
                    <IndexTable.Row id={w.id} key={w.id} position={i}>
                      <IndexTable.Cell as="th" scope="row">
                        <Text as="span" fontWeight="semibold">
                          {nameOf(w)}
                        </Text>
                      </IndexTable.Cell>
                      <IndexTable.Cell>{labelOf(WIDGET_TYPES, w.type)}</IndexTable.Cell>
                      <IndexTable.Cell>
                        <Badge tone={statusTone(w.status)}>{labelOf(WIDGET_STATUSES, w.status)}</Badge>
                      </IndexTable.Cell>
                      <IndexTable.Cell>
                        <Text as="span" alignment="end" numeric>
                          {w.sourceType === 'product' ? 'From the product' : String(w.videoIds.length)}
                        </Text>
                      </IndexTable.Cell>
                      <IndexTable.Cell>
                        <Text as="span" alignment="end" numeric>
                          {w.priority}
                        </Text>
                      </IndexTable.Cell>
                      <IndexTable.Cell>
                        <ButtonGroup>
                          <Button onClick={() => setEditing(w)} accessibilityLabel={`Edit ${nameOf(w)}`}>
                            Edit
                          </Button>
                          <Button tone="critical" variant="plain" onClick={() => setDeleting(w)} accessibilityLabel={`Delete ${nameOf(w)}`}>
                            Delete
                          </Button>
                        </ButtonGroup>
                      </IndexTable.Cell>
                    </IndexTable.Row>
                  ))}
                </IndexTable>
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
