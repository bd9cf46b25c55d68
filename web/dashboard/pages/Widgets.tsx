/** Widgets: the shop's widgets, and the form to create or change one. */
import { Badge } from '@shopify/polaris';

import { FormLoading } from '../components/FormFrame';
import { ListPage } from '../components/ListPage';
import { CopyWidgetId, THEME_BLOCK_HINT } from '../components/WidgetId';
import { WidgetForm } from '../components/WidgetForm';
import { useToast } from '../context';
import { useShopData } from '../hooks';
import { labelOf, statusTone, WIDGET_STATUSES, WIDGET_TYPES } from '../labels';
import { useNavigation } from '../navigation';
import type { Collection, Product, Video, Widget } from '../types';

const nameOf = (w: Widget) => w.title || 'Untitled widget';

export function WidgetsPage() {
  const notify = useToast();
  const { route, go } = useNavigation();
  const widgets = useShopData<{ widgets: Widget[] }>(['widgets']);
  const videos = useShopData<{ videos: Video[] }>(['videos']);
  const products = useShopData<{ products: Product[] }>(['products']);
  // Collections only help pick a rule: without them (a failed read says nothing), the form
  // offers those the products name.
  const collections = useShopData<{ collections: Collection[] }>(['collections']);
  // The widget the URL names, read by itself: a link to its form opens it without the list.
  const editingId = route.widget;
  const editing = useShopData<Widget | null>(editingId && editingId !== 'new' ? ['widgets', editingId] : null);

  const toList = (saved = false) => go({ page: 'widgets' }, { saved });
  const edit = (w: Widget | 'new') => go({ page: 'widgets', widget: w === 'new' ? 'new' : w.id });

  if (editingId) {
    const isNew = editingId === 'new';
    const widget = isNew ? undefined : editing.data;
    if (!videos.data || !products.data || (!isNew && (!widget || widget.id !== editingId))) {
      return (
        <FormLoading
          title={isNew ? 'Create a widget' : 'Edit widget'}
          back="Widgets"
          onBack={() => toList()}
          error={(isNew ? null : editing.error) ?? videos.error ?? products.error}
          errorTitle={isNew ? 'Your videos and products could not be loaded' : 'This widget could not be loaded'}
          loadingLabel={isNew ? 'Loading your videos and products' : 'Loading the widget'}
          onRetry={() => {
            editing.reload();
            videos.reload();
            products.reload();
          }}
        />
      );
    }
    return (
      <WidgetForm
        key={editingId}
        widget={widget ?? undefined}
        videos={videos.data.videos}
        onVideoPublished={() => videos.reload()}
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

  return (
    <ListPage
      title="Widgets"
      subtitle="Video carousels, stories and product page galleries for your store."
      add={{ content: 'Create widget', onAction: () => edit('new') }}
      resource="widgets"
      loaded={widgets}
      headNote={`To place a widget anywhere in your theme, copy its ID. ${THEME_BLOCK_HINT}`}
      noun={{ singular: 'widget', plural: 'widgets' }}
      items={widgets.data?.widgets ?? []}
      name={nameOf}
      nameHeading="Title and ID"
      nameExtra={(w) => <CopyWidgetId id={w.id} title={nameOf(w)} />}
      columns={[
        { title: 'Type', cell: (w) => labelOf(WIDGET_TYPES, w.type) },
        { title: 'Status', cell: (w) => <Badge tone={statusTone(w.status)}>{labelOf(WIDGET_STATUSES, w.status)}</Badge> },
        { title: 'Videos', numeric: true, cell: (w) => (w.sourceType === 'product' ? 'From the product' : String(w.videoIds.length)) },
        { title: 'Priority', numeric: true, cell: (w) => String(w.priority) },
      ]}
      empty="No widgets yet. Create one to show your videos in your store."
      onEdit={edit}
      deleteWarning="The widget disappears from your store. Its videos stay in your catalog. This cannot be undone."
    />
  );
}
