/**
 * The first-run checklist on the home page: turn on the app embed, add a video, make a widget,
 * see the first numbers. Each step ticks itself from what the service sees (it is asked again
 * every few seconds while a step is open), never from what the merchant clicked.
 */
import { Badge, BlockStack, Box, Button, Card, InlineStack, ProgressBar, Text } from '@shopify/polaris';
import { useEffect } from 'react';

import { useShop } from '../context';
import { useShopData } from '../hooks';
import { useNavigation } from '../navigation';
import { isEmbedded } from '../session';
import type { Onboarding, StepId } from '../types';

/** How often the open steps are read again. */
const POLL_MS = 5000;

const STEPS: Record<StepId, { title: string; help: string }> = {
  embed: {
    title: 'Turn on the videoapp app embed',
    help: 'In your theme editor, switch on "videoapp" under App embeds and save. It loads widgets on your store.',
  },
  video: {
    title: 'Add and publish your first video',
    help: 'Upload a video from your phone or computer; we prepare it for every screen. Publish it once it is ready.',
  },
  widget: {
    title: 'Make your first widget',
    help: 'Choose published videos and where they show: a carousel, stories, a product page grid or a floating bubble.',
  },
  numbers: {
    title: 'See your first numbers',
    help: 'Visit your store: impressions, views and sales appear here within a minute.',
  },
};

/** The theme editor, in the platform's admin (top level) or in the demo store's. */
export function themeEditorUrl(path: string): string {
  return isEmbedded() ? `shopify://admin${path}` : `/admin${path}`;
}

/** The store's pages: the shop's domain, or, outside the platform, the demo store the app runs in. */
function storeUrl(domain: string): string {
  return isEmbedded() ? `https://${domain}` : '/';
}

export function Checklist() {
  const { domain } = useShop();
  const { go } = useNavigation();
  const state = useShopData<Onboarding>(['onboarding']);
  const steps = state.data?.steps ?? [];
  const left = steps.filter((s) => !s.done).length;

  // Ticks itself: while a step is open, the state is read again.
  useEffect(() => {
    if (!state.data || left === 0) return;
    const timer = window.setTimeout(state.reload, POLL_MS);
    return () => window.clearTimeout(timer);
  }, [state.data, left, state.reload]);

  if (!state.data || left === 0) return null;
  const done = steps.length - left;
  const editor = state.data.themeEditorPath;
  const action = (id: StepId) => {
    switch (id) {
      case 'embed':
        return editor ? (
          <Button url={themeEditorUrl(editor)} target="_top" variant="primary">
            Open theme editor
          </Button>
        ) : null;
      case 'video':
        return <Button onClick={() => go({ page: 'videos', add: true })}>Add a video</Button>;
      case 'widget':
        return <Button onClick={() => go({ page: 'widgets', widget: 'new' })}>Make a widget</Button>;
      case 'numbers':
        return (
          <Button url={storeUrl(domain)} target="_blank">
            Visit your store
          </Button>
        );
    }
  };
  // The first open step is the one to do now; later ones wait their turn.
  const current = steps.find((s) => !s.done)?.id;

  return (
    <Card>
      <BlockStack gap="300">
        <InlineStack align="space-between" blockAlign="center">
          <Text as="h2" variant="headingMd">
            Get started
          </Text>
          <Text as="span" tone="subdued">
            {done} of {steps.length} done
          </Text>
        </InlineStack>
        <ProgressBar progress={(done / steps.length) * 100} size="small" tone="primary" />
        <BlockStack as="ol" gap="200">
          {steps.map((s) => (
            <Box as="li" key={s.id} data-checklist-step={s.id} data-done={String(s.done)}>
              <InlineStack gap="300" align="space-between" blockAlign="center" wrap>
                <BlockStack gap="100">
                  <InlineStack gap="200" blockAlign="center">
                    <Text as="h3" variant="headingSm" tone={s.done ? 'subdued' : undefined}>
                      {STEPS[s.id].title}
                    </Text>
                    {s.done && <Badge tone="success">Done</Badge>}
                  </InlineStack>
                  {s.id === current && (
                    <Text as="p" tone="subdued">
                      {STEPS[s.id].help}
                    </Text>
                  )}
                </BlockStack>
                {s.id === current && action(s.id)}
              </InlineStack>
            </Box>
          ))}
        </BlockStack>
      </BlockStack>
    </Card>
  );
}
