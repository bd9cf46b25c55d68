/**
 * A widget's id, which the theme's "Video widget" block asks for: shown as text a merchant can
 * select, with a button that copies it.
 */
import { BlockStack, Button, InlineStack, Text } from '@shopify/polaris';
import { useRef } from 'react';

import { copyText, selectText } from '../clipboard';
import { useToast } from '../context';

export const THEME_BLOCK_HINT = 'Paste it into the “Widget id” setting of the “Video widget” block in your theme editor.';

export function CopyWidgetId({ id, title }: { id: string; title: string }) {
  const notify = useToast();
  const shown = useRef<HTMLElement>(null);
  const copy = async () => {
    if (await copyText(id)) notify('Widget ID copied');
    else {
      selectText(shown.current);
      notify('Could not copy automatically. The ID is selected: copy it with your keyboard.', { error: true });
    }
  };
  return (
    <InlineStack gap="200" blockAlign="center" wrap={false}>
      <code className="vd-code vd-widget-id" ref={shown} data-testid="widget-id">
        {id}
      </code>
      <Button size="slim" onClick={copy} accessibilityLabel={`Copy the widget ID of ${title}`}>
        Copy
      </Button>
    </InlineStack>
  );
}

/** The id with the line that says where it goes, for the widget's form. */
export function WidgetIdSection({ id, title }: { id: string; title: string }) {
  return (
    <BlockStack gap="200">
      <Text as="h2" variant="headingMd">
        Widget ID
      </Text>
      <CopyWidgetId id={id} title={title} />
      <Text as="p" tone="subdued">
        {THEME_BLOCK_HINT}
      </Text>
    </BlockStack>
  );
}
