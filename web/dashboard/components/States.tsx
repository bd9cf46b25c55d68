import { Banner, BlockStack, Card, InlineStack, Spinner, Text } from '@shopify/polaris';

export function LoadingCard({ label }: { label: string }) {
  return (
    <Card>
      <InlineStack gap="300" blockAlign="center">
        <Spinner accessibilityLabel={label} size="small" />
        <Text as="p" tone="subdued">
          {label}
        </Text>
      </InlineStack>
    </Card>
  );
}

/** A failed load, with the service's own message and a way to try again. */
export function ErrorBanner({ title, error, onRetry }: { title: string; error: Error; onRetry?: () => void }) {
  return (
    <Banner tone="critical" title={title} action={onRetry ? { content: 'Try again', onAction: onRetry } : undefined}>
      <BlockStack gap="200">
        <Text as="p">{error.message}</Text>
      </BlockStack>
    </Banner>
  );
}
