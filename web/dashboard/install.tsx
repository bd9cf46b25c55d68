/**
 * The dashboard's first call: the app installs itself on the shop (`POST /app/api/install`, which
 * changes nothing once installed) and the merchant sees what happens, in their words, until the
 * install's work (the checkout pixel, the collections, the products) is done.
 */
import { BlockStack, InlineStack, Spinner, Text } from '@shopify/polaris';

import { ApiError, post } from './api';
import type { Installed } from './types';

/** What the install is doing, as a merchant understands it. */
export type InstallStep = 'connecting' | 'importing';

export const STEP_TEXT: Record<InstallStep, string> = {
  connecting: 'Connecting to your store…',
  importing: 'Importing your products…',
};

/** How often the install is asked again while its work is under way. */
const POLL_MS = 750;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Installs the app for the session's shop and waits until its products are imported, telling
 * `onStep` each step. Resolves when there is nothing (more) to wait for: also when this instance
 * has no platform settings (404), where shops are provisioned through the admin API instead.
 * Whether this call installed the app (the shop was not there before).
 */
export async function installApp(onStep: (step: InstallStep) => void): Promise<boolean> {
  onStep('connecting');
  let answer: Installed;
  try {
    answer = await post<Installed>('/install', {});
  } catch (e) {
    if (e instanceof ApiError && e.status === 404) return false;
    throw e;
  }
  const installedNow = answer.installedNow;
  while (answer.importing) {
    onStep('importing');
    await sleep(POLL_MS);
    answer = await post<Installed>('/install', {});
  }
  return installedNow;
}

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
