/**
 * Create or edit one widget: every field, its videos in order, its display rules, and a live
 * preview below. The API validates; its messages appear beside the fields they name.
 */
import { Card, ChoiceList, FormLayout, Layout, Text } from '@shopify/polaris';
import { useMemo, useState } from 'react';

import { ApiError, patch, post, shopPath } from '../api';
import { useShop } from '../context';
import { CLICK_BEHAVIORS, LOCATIONS, MODAL_LAYOUTS, SOURCE_TYPES, VIEW_STYLES, WIDGET_STATUSES, WIDGET_TYPES } from '../labels';
import type {
  ClickBehavior,
  Collection,
  Location,
  ModalLayout,
  Product,
  SourceType,
  Video,
  ViewStyle,
  Widget,
  WidgetInput,
  WidgetStatus,
  WidgetType,
} from '../types';
import { fieldError } from './fields';
import { FormFrame, FormSection, FormSelect, FormTextField, useForm, type FormKind } from './FormFrame';
import { ProductPicker } from './ProductPicker';
import { VideoOrder } from './VideoOrder';
import { WidgetIdSection } from './WidgetId';
import { WidgetPreview } from './WidgetPreview';

const KIND: FormKind = {
  noun: 'widget',
  back: 'Widgets',
  create: 'Create',
  fields: [
    'title',
    'type',
    'status',
    'priority',
    'viewStyle',
    'clickBehavior',
    'modalLayout',
    'sourceType',
    'videoIds',
    'rules.locations',
    'rules.productIds',
    'rules.collectionIds',
  ],
};

const NEW_WIDGET: WidgetInput = {
  type: 'carousel',
  title: '',
  // A merchant making a widget wants it on the store; a draft is a choice.
  status: 'active',
  priority: 0,
  viewStyle: 'default',
  clickBehavior: 'open_modal',
  modalLayout: 'vertical',
  sourceType: 'manual',
  videoIds: [],
  rules: {},
};

export function WidgetForm({
  widget,
  videos,
  products,
  collections,
  onSaved,
  onCancel,
  onVideoPublished,
}: {
  widget?: Widget;
  videos: Video[];
  /** A draft video was published from the form: the caller's list of videos is stale. */
  onVideoPublished: (video: Video) => void;
  products: Product[];
  /** The shop's collections (imported at install), for the collection rule. */
  collections: Collection[];
  onSaved: (widget: Widget) => void;
  onCancel: () => void;
}) {
  const { domain, shop } = useShop();
  const [draft, setDraft] = useState<WidgetInput>(() =>
    widget
      ? {
          type: widget.type,
          title: widget.title,
          status: widget.status,
          priority: widget.priority,
          viewStyle: widget.viewStyle,
          clickBehavior: widget.clickBehavior,
          modalLayout: widget.modalLayout,
          sourceType: widget.sourceType,
          videoIds: widget.videoIds,
          rules: widget.rules ?? {},
        }
      : NEW_WIDGET,
  );
  const [priority, setPriority] = useState(String(draft.priority));
  const form = useForm({ values: { draft, priority }, onSaved, onCancel });
  const { error, fail, send } = form;
  // The collections to choose from; a shop whose collections were not imported (its catalog
  // came through the admin API) gets those its products name.
  const collectionChoices = useMemo(() => {
    if (collections.length) return collections;
    const ids = [...new Set(products.flatMap((p) => p.collectionIds ?? []))];
    return ids.map((id) => ({ id, title: `Collection ${id.split('/').pop()}`, handle: '' }));
  }, [collections, products]);

  const set = <K extends keyof WidgetInput>(key: K, value: WidgetInput[K]) => setDraft((d) => ({ ...d, [key]: value }));
  const setRule = <K extends keyof WidgetInput['rules']>(key: K, value: WidgetInput['rules'][K]) =>
    setDraft((d) => ({ ...d, rules: { ...d.rules, [key]: value } }));
  const err = (name: string) => fieldError(error, name);

  const save = async () => {
    const p = priority.trim() === '' ? 0 : Number(priority);
    if (!Number.isInteger(p) || p < -2147483648 || p > 2147483647) {
      fail(new ApiError('VALIDATION_ERROR', 'priority: enter a whole number, such as 0 or 10', 400));
      return;
    }
    const body: WidgetInput = {
      ...draft,
      title: draft.title.trim(),
      priority: p,
      rules: {
        locations: draft.rules.locations ?? [],
        productIds: draft.rules.productIds ?? [],
        collectionIds: draft.rules.collectionIds ?? [],
      },
    };
    return send(() =>
      widget ? patch<Widget>(shopPath(domain, 'widgets', widget.id), body) : post<Widget>(shopPath(domain, 'widgets'), body),
    );
  };

  const typeHelp = WIDGET_TYPES.find((t) => t.value === draft.type)?.help;
  const statusHelp = WIDGET_STATUSES.find((s) => s.value === draft.status)?.help;

  const preview = (
    <FormSection title="Preview" note="As shoppers see it. Your theme's fonts and colours apply in your store." gap="300">
      <WidgetPreview
        widget={draft}
        widgetId={widget?.id ?? 'preview'}
        videos={videos}
        products={products}
        removeBranding={shop.removeBranding}
      />
    </FormSection>
  );

  return (
    <FormFrame kind={KIND} editing={widget} form={form} onSubmit={save} after={preview}>
      {widget && (
        <Layout.Section>
          <Card>
            <WidgetIdSection id={widget.id} title={widget.title || 'this widget'} />
          </Card>
        </Layout.Section>
      )}

      <FormSection title="Widget">
        <FormLayout>
          <FormTextField
            name="title"
            label="Title"
            value={draft.title}
            onChange={(v) => set('title', v)}
            maxLength={256}
            helpText="Shown above the videos. Leave empty for no heading."
          />
          <FormLayout.Group>
            <FormSelect
              name="type"
              label="Type"
              options={WIDGET_TYPES.map((t) => ({ label: t.label, value: t.value }))}
              value={draft.type}
              onChange={(v) => set('type', v as WidgetType)}
              helpText={typeHelp}
            />
            <FormSelect
              name="status"
              label="Status"
              options={WIDGET_STATUSES.map((s) => ({ label: s.label, value: s.value }))}
              value={draft.status}
              onChange={(v) => set('status', v as WidgetStatus)}
              helpText={statusHelp}
            />
          </FormLayout.Group>
          <FormTextField
            name="priority"
            label="Priority"
            type="number"
            step={1}
            value={priority}
            onChange={setPriority}
            helpText="When several widgets fit a page, higher numbers show first."
          />
        </FormLayout>
      </FormSection>

      <FormSection title="Look and behaviour">
        <FormLayout>
          <FormSelect
            name="viewStyle"
            label="Card size"
            options={VIEW_STYLES.map((s) => ({ label: s.label, value: s.value }))}
            value={draft.viewStyle}
            onChange={(v) => set('viewStyle', v as ViewStyle)}
          />
          <FormSelect
            name="clickBehavior"
            label="When a shopper clicks a video"
            options={CLICK_BEHAVIORS.map((c) => ({ label: c.label, value: c.value }))}
            value={draft.clickBehavior}
            onChange={(v) => set('clickBehavior', v as ClickBehavior)}
          />
          <FormSelect
            name="modalLayout"
            label="Player layout"
            options={MODAL_LAYOUTS.map((m) => ({ label: m.label, value: m.value }))}
            value={draft.modalLayout}
            onChange={(v) => set('modalLayout', v as ModalLayout)}
            helpText="How the video player arranges the video and its products."
          />
        </FormLayout>
      </FormSection>

      <FormSection title="Videos">
        <ChoiceList
          title="Which videos to show"
          choices={SOURCE_TYPES.map((s) => ({ label: s.label, value: s.value, helpText: s.help }))}
          selected={[draft.sourceType]}
          onChange={([v]) => set('sourceType', (v ?? 'manual') as SourceType)}
          error={err('sourceType')}
        />
        {draft.sourceType === 'manual' ? (
          <VideoOrder
            videos={videos}
            selected={draft.videoIds}
            onChange={(ids) => set('videoIds', ids)}
            onPublished={onVideoPublished}
            error={err('videoIds')}
          />
        ) : (
          <Text as="p" tone="subdued">
            Link videos to products on the Videos page. On other pages than product pages, this widget shows nothing.
          </Text>
        )}
      </FormSection>

      <FormSection title="Where it shows" note="A page must pass every rule you set. Rules left empty allow every page.">
        <ChoiceList
          title="Page types"
          allowMultiple
          choices={LOCATIONS.map((l) => ({ label: l.label, value: l.value }))}
          selected={draft.rules.locations ?? []}
          onChange={(v) => setRule('locations', v as Location[])}
          error={err('rules.locations')}
        />
        {draft.type === 'productpage' && (
          <Text as="p" tone="subdued">
            Product page widgets appear on product pages only.
          </Text>
        )}
        <ProductPicker
          label="Only on these products' pages"
          helpText="Leave empty to allow every product."
          products={products}
          selected={draft.rules.productIds ?? []}
          onChange={(ids) => setRule('productIds', ids)}
          error={err('rules.productIds')}
        />
        <ProductPicker
          kind="collection"
          label="Only on these collections' pages"
          helpText="Leave empty to allow every collection."
          products={collectionChoices}
          selected={draft.rules.collectionIds ?? []}
          onChange={(ids) => setRule('collectionIds', ids)}
          error={err('rules.collectionIds')}
        />
      </FormSection>
    </FormFrame>
  );
}
