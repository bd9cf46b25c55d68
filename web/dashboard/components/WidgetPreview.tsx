/**
 * The widget as shoppers will see it: drawn by the storefront loader's own renderer from the
 * same JSON shape the storefront answers, so what is previewed is what the store shows.
 */
import { BlockStack, Select, Text } from '@shopify/polaris';
import { useEffect, useMemo, useRef, useState, type MouseEvent } from 'react';

import { renderWidget } from '../../loader/render';
import { CSS } from '../../loader/styles';
import type { Product as LoaderProduct, Video as LoaderVideo, Widget as LoaderWidget } from '../../loader/types';
import { useToast } from '../context';
import type { Product, Video, WidgetInput } from '../types';

/** Redraws at most this often while the merchant types. */
const DEBOUNCE_MS = 250;

/** The loader's style sheet, added to the page once (as the loader itself does on a store). */
function addLoaderStyles(): void {
  if (document.querySelector('style[data-videoapp-style]')) return;
  const style = document.createElement('style');
  style.setAttribute('data-videoapp-style', '');
  style.textContent = CSS;
  document.head.append(style);
}

/**
 * The loader records impressions and clicks when the platform's consent API allows it. In the
 * dashboard that API is absent, so it is stood in for with a refusal: a merchant's preview is
 * never counted as a shopper's.
 */
function silenceLoaderEvents(): void {
  const w = window;
  w.Shopify = w.Shopify ?? {};
  w.Shopify.customerPrivacy = { analyticsProcessingAllowed: () => false };
}

const toLoaderProduct = (p: Product): LoaderProduct => ({
  id: p.id,
  title: p.title,
  handle: p.handle,
  image: p.image ?? '',
  url: p.url ?? '',
});

function toLoaderVideo(v: Video, products: Map<string, Product>): LoaderVideo {
  return {
    id: v.id,
    title: v.title,
    thumbnail: v.thumbnail,
    videoUrl: v.videoUrl,
    miniVersionUrl: v.miniVersionUrl,
    duration: v.duration,
    hlsUrl: v.hlsUrl ?? '',
    posterUrl: v.posterUrl ?? '',
    products: v.productIds.flatMap((id) => {
      const p = products.get(id);
      return p ? [toLoaderProduct(p)] : [];
    }),
  };
}

export function WidgetPreview({
  widget,
  widgetId,
  videos,
  products,
  removeBranding,
}: {
  widget: WidgetInput;
  widgetId: string;
  videos: Video[];
  products: Product[];
  removeBranding: boolean;
}) {
  const notify = useToast();
  const box = useRef<HTMLDivElement>(null);
  const productById = useMemo(() => new Map(products.map((p) => [p.id, p])), [products]);
  const videoById = useMemo(() => new Map(videos.map((v) => [v.id, v])), [videos]);
  // Products that have published videos: the pages a product-sourced widget can be seen on.
  const productChoices = useMemo(
    () => products.filter((p) => videos.some((v) => v.status === 'PUBLISHED' && v.productIds.includes(p.id))),
    [products, videos],
  );
  const [productId, setProductId] = useState('');
  const previewProduct = productChoices.find((p) => p.id === productId) ?? productChoices[0];

  // Only published videos reach the storefront, in the widget's order.
  const shown: Video[] =
    widget.sourceType === 'product'
      ? previewProduct
        ? videos.filter((v) => v.status === 'PUBLISHED' && v.productIds.includes(previewProduct.id))
        : []
      : widget.videoIds.flatMap((id) => {
          const v = videoById.get(id);
          return v && v.status === 'PUBLISHED' ? [v] : [];
        });

  const shape: LoaderWidget = {
    id: widgetId,
    type: widget.type,
    title: widget.title,
    viewStyle: widget.viewStyle,
    clickBehavior: widget.clickBehavior,
    modalLayout: widget.modalLayout,
    videos: shown.map((v) => toLoaderVideo(v, productById)),
  };
  // The widget as text: a new object every render, the same text until something shown changes.
  const key = JSON.stringify(shape);

  useEffect(() => {
    const preview = JSON.parse(key) as LoaderWidget;
    const timer = setTimeout(() => {
      const el = box.current;
      if (!el) return;
      addLoaderStyles();
      silenceLoaderEvents();
      el.replaceChildren();
      if (!preview.videos.length) return;
      const rendered = renderWidget(preview, removeBranding);
      // A card shows its duration before its title, but its accessible name is the title only.
      // The dashboard's accessibility checks want a control's visible text within its name, so
      // here the name gets the duration in front, and a space (invisible between the card's
      // block children) separates the two texts. Nothing that shows differs from the store.
      rendered.querySelectorAll('.videoapp-card').forEach((card) => {
        const duration = card.querySelector('.videoapp-dur')?.textContent;
        const name = card.getAttribute('aria-label');
        if (!duration || !name) return;
        card.setAttribute('aria-label', `${duration} ${name}`);
        card.querySelector('.videoapp-name')?.before(' ');
      });
      el.append(rendered);
    }, DEBOUNCE_MS);
    return () => clearTimeout(timer);
  }, [key, removeBranding]);

  // The player opens over the whole page, outside this component: its product links and
  // add-to-cart buttons would leave the dashboard or touch a cart, so they only explain.
  useEffect(() => {
    const onClick = (e: Event) => {
      const target = e.target as Element | null;
      if (!target?.closest?.('[data-videoapp-player]')) return;
      if (target.closest('[data-videoapp-add-to-cart]')) {
        e.preventDefault();
        e.stopPropagation();
        notify('In your store, this adds the product to the cart.');
      } else if (target.closest('a[href]')) {
        e.preventDefault();
        e.stopPropagation();
        notify("In your store, this opens the product's page.");
      }
    };
    document.addEventListener('click', onClick, true);
    return () => {
      document.removeEventListener('click', onClick, true);
      // A player still open when the form closes is closed the way a shopper would close it.
      if (document.querySelector('[data-videoapp-player]')) {
        document.dispatchEvent(new KeyboardEvent('keydown', { key: 'Escape', bubbles: true }));
      }
    };
  }, [notify]);

  const onClickCapture = (e: MouseEvent<HTMLDivElement>) => {
    if (widget.clickBehavior !== 'open_product') return;
    const card = (e.target as Element).closest('[data-videoapp-video]');
    if (!card) return;
    const video = videoById.get(card.getAttribute('data-videoapp-video') ?? '');
    const first = video?.productIds.map((id) => productById.get(id)).find(Boolean);
    if (!first?.url) return;
    e.preventDefault();
    e.stopPropagation();
    notify(`In your store, this opens ${first.title}.`);
  };

  const hidden = widget.sourceType === 'manual' ? widget.videoIds.length - shown.length : 0;

  return (
    <BlockStack gap="300">
      {widget.sourceType === 'product' && productChoices.length > 0 && (
        <div className="vd-range-select">
          <Select
            label="Preview on the page of"
            options={productChoices.map((p) => ({ label: p.title, value: p.id }))}
            value={previewProduct?.id ?? ''}
            onChange={setProductId}
          />
        </div>
      )}
      {shown.length === 0 && (
        <Text as="p" tone="subdued">
          {widget.sourceType === 'product'
            ? 'No product has a published video yet, so this widget shows nothing in your store.'
            : 'Add a published video to see the widget. Without one, it does not appear in your store.'}
        </Text>
      )}
      {hidden > 0 && (
        <Text as="p" tone="subdued">
          {hidden === 1 ? '1 video is' : `${hidden} videos are`} not shown here, as in your store, because{' '}
          {hidden === 1 ? 'it is' : 'they are'} not published.
        </Text>
      )}
      {widget.status !== 'active' && shown.length > 0 && (
        <Text as="p" tone="subdued">
          Shoppers see this widget once its status is Active.
        </Text>
      )}
      {/* A floating widget is fixed to the page's corner: here, the preview's own corner (a
          transformed box holds what is fixed inside it). */}
      <div
        className="vd-preview"
        ref={box}
        onClickCapture={onClickCapture}
        style={widget.type === 'floating' ? { transform: 'translateZ(0)', minHeight: 128 } : undefined}
      />
    </BlockStack>
  );
}
