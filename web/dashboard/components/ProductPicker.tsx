/**
 * Choose products from the shop's catalog: the chosen ones as removable tags (in the order
 * chosen, which is the order shoppers see), then a search over the rest (by title or handle)
 * with a checkbox each, beside the product's image, so a product is recognised at a glance.
 */
import { BlockStack, Checkbox, InlineError, InlineStack, Tag, Text, TextField, Thumbnail } from '@shopify/polaris';
import { useId, useMemo, useState } from 'react';

import type { Product } from '../types';

const SHOWN = 25;

export function ProductPicker({
  label,
  helpText,
  products,
  selected,
  onChange,
  error,
}: {
  label: string;
  helpText?: string;
  products: Product[];
  selected: string[];
  onChange: (ids: string[]) => void;
  error?: string;
}) {
  const [query, setQuery] = useState('');
  const searchId = useId();
  const helpId = useId();
  const byId = useMemo(() => new Map(products.map((p) => [p.id, p])), [products]);

  const matches = useMemo(() => {
    const q = query.trim().toLowerCase();
    return q ? products.filter((p) => p.title.toLowerCase().includes(q) || p.handle.toLowerCase().includes(q)) : products;
  }, [products, query]);

  const toggle = (id: string, on: boolean) => onChange(on ? [...selected.filter((s) => s !== id), id] : selected.filter((s) => s !== id));

  return (
    <fieldset className="vd-fieldset" aria-describedby={helpText ? helpId : undefined}>
      <legend className="vd-legend">{label}</legend>
      <BlockStack gap="200">
        {helpText && (
          <Text as="p" tone="subdued" id={helpId}>
            {helpText}
          </Text>
        )}
        {selected.length > 0 ? (
          <InlineStack gap="200" wrap>
            {selected.map((id) => {
              const title = byId.get(id)?.title ?? id;
              return (
                <Tag key={id} onRemove={() => toggle(id, false)} accessibilityLabel={`Remove ${title}`}>
                  {title}
                </Tag>
              );
            })}
          </InlineStack>
        ) : (
          <Text as="p" tone="subdued">
            None chosen.
          </Text>
        )}
        {products.length === 0 ? (
          <Text as="p" tone="subdued">
            Your store has no products in videoapp yet. They appear here once the catalog is imported.
          </Text>
        ) : (
          <>
            <TextField
              id={searchId}
              label="Search products"
              value={query}
              onChange={setQuery}
              autoComplete="off"
              clearButton
              onClearButtonClick={() => setQuery('')}
              placeholder="Product name"
            />
            <div className="vd-choices">
              <BlockStack gap="100">
                {matches.slice(0, SHOWN).map((p) => (
                  <Checkbox
                    key={p.id}
                    label={
                      <span className="vd-choice">
                        {p.image ? <Thumbnail source={p.image} alt="" size="extraSmall" /> : <span className="vd-thumb-empty vd-thumb-empty--small" />}
                        <span>{p.title}</span>
                      </span>
                    }
                    checked={selected.includes(p.id)}
                    onChange={(on) => toggle(p.id, on)}
                  />
                ))}
                {matches.length === 0 && (
                  <Text as="p" tone="subdued">
                    No product matches “{query.trim()}”.
                  </Text>
                )}
              </BlockStack>
            </div>
            {matches.length > SHOWN && (
              <Text as="p" tone="subdued">
                Showing {SHOWN} of {matches.length} products. Search to find the others.
              </Text>
            )}
          </>
        )}
        {error && <InlineError message={error} fieldID={searchId} />}
      </BlockStack>
    </fieldset>
  );
}
