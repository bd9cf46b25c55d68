import { BlockStack, Card, InlineStack, Text } from '@shopify/polaris';

import { change, formatMetric, type MetricKind } from '../format';

const ARROWS = { up: '\u25b2', down: '\u25bc', flat: '', none: '' };

export interface MetricProps {
  id: string;
  label: string;
  help: string;
  value: number;
  previous: number | null | undefined;
  kind: MetricKind;
  currency: string;
}

/** One summary number in a card of its own. */
export function MetricCard(props: MetricProps) {
  return (
    <Card>
      <Metric {...props} />
    </Card>
  );
}

/**
 * One summary number and its change against the previous period. The change is written out
 * ("+12.5%", with an arrow and a spoken label); its colour only repeats what the text says.
 */
export function Metric({ id, label, help, value, previous, kind, currency, level = 'h3' }: MetricProps & { level?: 'h3' | 'h4' }) {
  const c = change(value, previous);
  const tone = c.direction === 'up' ? 'success' : c.direction === 'down' ? 'critical' : 'subdued';
  return (
    <BlockStack gap="100">
      <Text as={level} variant="headingSm">
        {label}
      </Text>
      <Text as="p" variant="headingLg" numeric>
        <span data-testid={`metric-${id}`} data-value={String(value)}>
          {formatMetric(value, kind, currency)}
        </span>
      </Text>
      <InlineStack gap="100" blockAlign="center" wrap={false}>
        <Text as="span" variant="bodySm" tone={tone} numeric>
          <span data-testid={`metric-${id}-change`} aria-hidden="true">
            {ARROWS[c.direction] && `${ARROWS[c.direction]} `}
            {c.text}
          </span>
        </Text>
        <Text as="span" variant="bodySm" tone="subdued">
          <span aria-hidden="true">{c.direction === 'none' ? 'no previous data' : 'vs previous period'}</span>
        </Text>
        <Text as="span" visuallyHidden>
          {c.label}
        </Text>
      </InlineStack>
      <Text as="p" variant="bodySm" tone="subdued">
        {help}
      </Text>
    </BlockStack>
  );
}
