/** The install's progress as the merchant sees it, in their words, until the dashboard opens. */
import { BlockStack, InlineStack, Spinner, Text } from '@shopify/polaris';

import type { InstallStep } from './boot';

export const STEP_TEXT: Record<InstallStep, string> = {
  connecting: 'Connecting to your store…',
  importing: 'Importing your products…',
};

/** The install's progress, where the dashboard will be. */
export function InstallProgress({ step }: { step: InstallStep }) {
  return (
    <BlockStack gap="300">
      <div role="status">
        <InlineStack gap="300" blockAlign="center">
          <Spinner accessibilityLabel={STEP_TEXT[step]} size="small" />
          <Text as="p" variant="bodyLg">
            {STEP_TEXT[step]}
          </Text>
        </InlineStack>
      </div>
      <Text as="p" tone="subdued">
        This takes a moment the first time you open videoapp.
      </Text>
    </BlockStack>
  );
}
