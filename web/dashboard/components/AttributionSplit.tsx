/**
 * The orders and revenue credited to videos, in their two parts: direct (a product was added to
 * the cart from a video) and influenced (a video was watched), each with its share of the whole.
 */
import { BlockStack, Box, Card, InlineGrid, Text } from '@shopify/polaris';

import { formatCount, formatMoney, formatShare } from '../format';
import type { Metrics } from '../types';

const PARTS = [
  { key: 'direct', label: 'Direct', help: 'A product of the order was added to the cart from a video' },
  { key: 'influenced', label: 'Influenced', help: 'The shopper watched a video before ordering' },
] as const;

type Split = Pick<Metrics, 'orders' | 'revenue' | 'attribution'>;

/** The card of the Analytics page: the split of the shop's orders and revenue. */
export function AttributionSplit({ metrics, currency, window }: { metrics: Split; currency: string; window: number }) {
  return (
    <Card>
      <BlockStack gap="300">
        <BlockStack gap="100">
          <Text as="h2" variant="headingMd">
            Direct and influenced sales
          </Text>
          <Text as="p" tone="subdued">
            An order counts when the shopper added one of its products from a video, or watched a video, in the{' '}
            {window === 1 ? 'day' : `${window} days`} before (your attribution window, in Settings).
          </Text>
        </BlockStack>
        <SplitParts metrics={metrics} currency={currency} level="h3" />
      </BlockStack>
    </Card>
  );
}

/** The two parts side by side, each with its share of all orders and of all revenue. */
export function SplitParts({ metrics, currency, level }: { metrics: Split; currency: string; level: 'h3' | 'h4' }) {
  const { orders, revenue, attribution } = metrics;
  const other = orders - attribution.direct.orders - attribution.influenced.orders;
  return (
    <BlockStack gap="200">
      <InlineGrid columns={{ xs: 1, sm: 2 }} gap="300">
        {PARTS.map(({ key, label, help }) => {
          const part = attribution[key];
          return (
            <Box key={key} padding="300" background="bg-surface-secondary" borderRadius="200">
              <BlockStack gap="200">
                <BlockStack gap="050">
                  <Text as={level} variant="headingSm">
                    {label}
                  </Text>
                  <Text as="p" variant="bodySm" tone="subdued">
                    {help}
                  </Text>
                </BlockStack>
                <dl className="vd-split">
                  <div>
                    <dt>Orders</dt>
                    <dd data-testid={`split-${key}-orders`} data-value={String(part.orders)}>
                      <Text as="span" variant="headingMd" numeric>
                        {formatCount(part.orders)}
                      </Text>
                      {orders > 0 && (
                        <Text as="span" tone="subdued" numeric>
                          {' '}
                          {formatShare(part.orders, orders)} of orders
                        </Text>
                      )}
                    </dd>
                  </div>
                  <div>
                    <dt>Revenue</dt>
                    <dd data-testid={`split-${key}-revenue`} data-value={String(part.revenue)}>
                      <Text as="span" variant="headingMd" numeric>
                        {formatMoney(part.revenue, currency)}
                      </Text>
                      {revenue > 0 && (
                        <Text as="span" tone="subdued" numeric>
                          {' '}
                          {formatShare(part.revenue, revenue)} of revenue
                        </Text>
                      )}
                    </dd>
                  </div>
                </dl>
              </BlockStack>
            </Box>
          );
        })}
      </InlineGrid>
      {other > 0 && (
        <Text as="p" tone="subdued">
          {other === 1 ? '1 order was' : `${formatCount(other)} orders were`} not credited to a video either way.
        </Text>
      )}
    </BlockStack>
  );
}
