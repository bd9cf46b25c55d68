/**
 * Choose products (or collections) from the shop's catalog: the chosen ones as removable tags
 * (in the order chosen, which is the order shoppers see), then a search over the rest (by title
 * or handle) with a checkbox each, beside its image, so each is recognised at a glance.
 */
import { BlockStack, Checkbox, InlineError, InlineStack, Tag, Text, TextField, Thumbnail } from '@shopify/polaris';
import { useId, useMemo, useState } from 'react';

/** What the picker offers: a product or a collection, as the API lists them. */
export interface Choice {
  id: string;
  title: string;
  handle: string;
  image?: string;
}

const WORDS = {
  product: {
    search: 'Search products',
    placeholder: 'Product name',
    none: 'Your store has no products in videoapp yet. They appear here once the catalog is imported.',
    many: 'products',
    one: 'product',
  },
  collection: {
    search: 'Search collections',
    placeholder: 'Collection name',
    none: 'Your store has no collections in videoapp yet. They appear here once the catalog is imported.',
    many: 'collections',
    one: 'collection',
  },
};

const SHOWN = 25;

export function ProductPicker({
  label,
  helpText,
  products,
  selected,
  onChange,
  error,
  kind = 'product',
}: {
  label: string;
  helpText?: string;
  products: Choice[];
  kind?: keyof typeof WORDS;
  selected: string[];
  onChange: (ids: string[]) => void;
  error?: string;
}) {
  const [query, setQuery] = useState('');
  const words = WORDS[kind];
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
            {words.none}
          </Text>
        ) : (
          <>
            <TextField
              id={searchId}
              label={words.search}
              value={query}
              onChange={setQuery}
              autoComplete="off"
              clearButton
              onClearButtonClick={() => setQuery('')}
              placeholder={words.placeholder}
            />
            <div className="vd-choices">
              <BlockStack gap="100">
                {matches.slice(0, SHOWN).map((p) => (
                  <Checkbox
                    key={p.id}
                    label={
                      <span className="vd-choice">
                        {p.image ? (
                          <Thumbnail source={p.image} alt="" size="extraSmall" />
                        ) : (
                          <span className="vd-thumb-empty vd-thumb-empty--small" />
                        )}
                        <span>{p.title}</span>
                      </span>
                    }
                    checked={selected.includes(p.id)}
                    onChange={(on) => toggle(p.id, on)}
                  />
                ))}
                {matches.length === 0 && (
                  <Text as="p" tone="subdued">
                    No {words.one} matches “{query.trim()}”.
                  </Text>
                )}
              </BlockStack>
            </div>
            {matches.length > SHOWN && (
              <Text as="p" tone="subdued">
                Showing {SHOWN} of {matches.length} {words.many}. Search to find the others.
              </Text>
            )}
          </>
        )}
        {error && <InlineError message={error} fieldID={searchId} />}
      </BlockStack>
    </fieldset>
  );
}
