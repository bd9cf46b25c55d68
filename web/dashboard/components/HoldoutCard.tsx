/**
 * The Analytics page's card on the holdout: what the shoppers who could see the videos did beside
 * those held out, said in sentences (`lift.ts`), with each group's figures under them.
 *
 * With no holdout the card asks the service nothing, so the page opens with no request more than
 * before; a merchant who has since turned the holdout off asks for its figures with a button.
 */
import { Badge, BlockStack, Button, Card, InlineStack, SkeletonBodyText, Text } from '@shopify/polaris';
import { useState } from 'react';

import { get } from '../api';
import type { DateRange } from '../dates';
import { formatCount, formatMetric, formatMoney } from '../format';
import { useLoad } from '../hooks';
import { HOLDOUT_OFF, liftStory } from '../lift';
import type { GroupMetrics, LiftData, LiftResponse } from '../types';
import { RouteLink } from './RouteLink';
import { ErrorBanner } from './States';

const GROUPS = [
  { key: 'exposed', label: 'Could see videos' },
  { key: 'holdout', label: 'Held out' },
] as const;

const FIGURES: { key: keyof GroupMetrics; label: string; format: (g: GroupMetrics, currency: string) => string }[] = [
  { key: 'sessions', label: 'Visits', format: (g) => formatCount(g.sessions) },
  { key: 'orders', label: 'Orders', format: (g) => formatCount(g.orders) },
  { key: 'conversion_rate', label: 'Conversion rate', format: (g, c) => formatMetric(g.conversion_rate, 'rate', c) },
  { key: 'revenue_per_session', label: 'Revenue per visit', format: (g, c) => formatMoney(g.revenue_per_session, c) },
];

export function HoldoutCard({ range, holdoutPercent, currency }: { range: DateRange; holdoutPercent: number; currency: string }) {
  const [askedEarlier, setAskedEarlier] = useState(false);
  const wanted = holdoutPercent > 0 || askedEarlier;
  const answer = useLoad(
    () => (wanted ? get<LiftResponse>('/analytics/lift', { start_date: range.start, end_date: range.end }) : Promise.resolve(null)),
    [wanted, range.start, range.end],
  );
  // While a new range loads, the figures of the old one are not shown.
  const data = wanted && !answer.loading ? (answer.data?.data ?? null) : null;
  const story = data ? liftStory(data, holdoutPercent) : HOLDOUT_OFF;
  const waiting = wanted && !data && !answer.error;

  return (
    <Card>
      <BlockStack gap="300">
        <BlockStack gap="100">
          <InlineStack gap="200" blockAlign="center">
            <Text as="h2" variant="headingMd">
              Sales with and without videos
            </Text>
            {holdoutPercent > 0 ? <Badge tone="info">{`${holdoutPercent}% held out`}</Badge> : <Badge>Off</Badge>}
          </InlineStack>
          {holdoutPercent > 0 && (
            <Text as="p" tone="subdued">
              {holdoutPercent}% of your shoppers are held out: they see no video widget, so their orders show how your store sells without
              videos.
            </Text>
          )}
        </BlockStack>

        {answer.error && <ErrorBanner title="The holdout's figures could not be loaded" error={answer.error} onRetry={answer.reload} />}
        {waiting && <SkeletonBodyText lines={3} />}

        {!waiting && !answer.error && story.state === 'off' && (
          <BlockStack gap="200">
            {story.sentences.map((s) => (
              <Text key={s} as="p">
                {s}
              </Text>
            ))}
            {askedEarlier && (
              <Text as="p" tone="subdued">
                No shopper was held out in these dates.
              </Text>
            )}
            <InlineStack gap="400" blockAlign="center" wrap>
              <RouteLink to={{ page: 'settings' }}>Turn on a holdout in Settings</RouteLink>
              {!askedEarlier && (
                <Button variant="plain" onClick={() => setAskedEarlier(true)}>
                  Show an earlier holdout's figures for these dates
                </Button>
              )}
            </InlineStack>
          </BlockStack>
        )}

        {data && story.state !== 'off' && (
          <BlockStack gap="300">
            <BlockStack gap="200">
              {story.note && (
                <Text as="p" tone="subdued">
                  {story.note}
                </Text>
              )}
              <div data-testid="lift-sentences" data-state={story.state}>
                <BlockStack gap="200">
                  {story.sentences.map((s) => (
                    <Text key={s} as="p" variant={story.state === 'measured' ? 'bodyLg' : 'bodyMd'}>
                      {s}
                    </Text>
                  ))}
                  {story.estimate && (
                    <Text as="p" tone="subdued">
                      {story.estimate}
                    </Text>
                  )}
                </BlockStack>
              </div>
            </BlockStack>
            <GroupTable data={data} currency={currency} />
          </BlockStack>
        )}
      </BlockStack>
    </Card>
  );
}

/** The two groups side by side, one row per figure: the numbers the sentences are made of. */
function GroupTable({ data, currency }: { data: LiftData; currency: string }) {
  return (
    <div className="vd-groups">
      <table>
        <caption className="vd-visually-hidden">Each group's figures in these dates</caption>
        <thead>
          <tr>
            <td />
            {GROUPS.map((g) => (
              <th key={g.key} scope="col" className="vd-groups__value">
                {g.label}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {FIGURES.map((f) => (
            <tr key={f.key}>
              <th scope="row">{f.label}</th>
              {GROUPS.map((g) => (
                <td key={g.key} className="vd-groups__value">
                  <Text as="span" numeric>
                    <span data-testid={`lift-${g.key}-${f.key}`} data-value={String(data[g.key][f.key])}>
                      {f.format(data[g.key], currency)}
                    </span>
                  </Text>
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
