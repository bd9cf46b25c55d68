/**
 * Settings: the theme's app embed (a way back to the theme editor once the checklist is gone),
 * the attribution window, the holdout that measures what the videos sell, and API access: keys
 * for the merchant's own tools to read the analytics API.
 */
import {
  Badge,
  Banner,
  BlockStack,
  Button,
  Card,
  ChoiceList,
  Form,
  FormLayout,
  InlineStack,
  Layout,
  Page,
  Text,
  TextField,
} from '@shopify/polaris';
import { useRef, useState } from 'react';

import { del, patch, post, shopPath } from '../api';
import { copyText, selectText } from '../clipboard';
import { themeEditorUrl } from '../components/Checklist';
import { ConfirmModal } from '../components/ConfirmModal';
import { fieldError, namesAField } from '../components/fields';
import { ListCard, ListTable } from '../components/ListPage';
import { useShop, useToast } from '../context';
import { formatInstant } from '../dates';
import { formatCount } from '../format';
import { useShopData } from '../hooks';
import { MIN_ORDERS, MIN_VISITS } from '../lift';
import type { ApiKeyInfo, AttributionWindow, CreatedApiKey, MerchantSettings, Onboarding, Shop } from '../types';

const WINDOWS: { days: AttributionWindow; label: string }[] = [
  { days: 1, label: '1 day' },
  { days: 7, label: '7 days' },
  { days: 30, label: '30 days' },
];

/** The shop's attribution window: chosen, saved with a toast, and any refusal shown in its card. */
function AttributionWindowSection() {
  const { domain, shop, shopChanged } = useShop();
  const notify = useToast();
  const [days, setDays] = useState<AttributionWindow>(shop.attributionWindowDays);
  const [saving, setSaving] = useState(false);
  const [error, setError] = useState<unknown>(null);

  const save = async () => {
    setSaving(true);
    setError(null);
    try {
      const change: MerchantSettings = { attributionWindowDays: days };
      const saved = await patch<Shop>(shopPath(domain), change);
      shopChanged(saved);
      setDays(saved.attributionWindowDays);
      notify('Attribution window saved');
    } catch (e) {
      setError(e);
    } finally {
      setSaving(false);
    }
  };

  return (
    <Layout.AnnotatedSection
      id="attribution-window"
      title="Attribution window"
      description="An order is credited to a video when the shopper added to cart from it, or watched it, within this many days before buying."
    >
      <Card>
        <Form onSubmit={save} noValidate>
          <FormLayout>
            {error != null && !namesAField(error, ['attributionWindowDays']) && (
              <Banner tone="critical" title="The attribution window could not be saved">
                <p>{error instanceof Error ? error.message : String(error)}</p>
              </Banner>
            )}
            <ChoiceList
              title="Credit orders to a video for"
              choices={WINDOWS.map((w) => ({ label: w.label, value: String(w.days) }))}
              selected={[String(days)]}
              onChange={([v]) => setDays(WINDOWS.find((w) => String(w.days) === v)?.days ?? days)}
              error={fieldError(error, 'attributionWindowDays')}
            />
            <InlineStack>
              <Button
                submit
                variant="primary"
                loading={saving}
                disabled={days === shop.attributionWindowDays}
                accessibilityLabel="Save the attribution window"
              >
                Save
              </Button>
            </InlineStack>
          </FormLayout>
        </Form>
      </Card>
    </Layout.AnnotatedSection>
  );
}

const HOLDOUTS = [
  { value: '0', label: 'Off' },
  { value: '5', label: '5% of shoppers' },
  { value: '10', label: '10% of shoppers' },
  { value: '20', label: '20% of shoppers' },
];
const OTHER_SHARE = 'other';
const choiceOf = (percent: number) => (HOLDOUTS.some((h) => h.value === String(percent)) ? String(percent) : OTHER_SHARE);

/**
 * The share of shoppers held out from every widget: a few shares to choose from, or another one
 * typed. Any whole number is sent as typed: the service is the one judge of the range, and its
 * refusal shows beside the field. Text that is no whole number cannot be sent as one, so it is
 * refused here.
 */
function HoldoutSection() {
  const { domain, shop, shopChanged } = useShop();
  const notify = useToast();
  const [choice, setChoice] = useState(() => choiceOf(shop.holdoutPercent));
  const [other, setOther] = useState(() => (choiceOf(shop.holdoutPercent) === OTHER_SHARE ? String(shop.holdoutPercent) : ''));
  const [notWhole, setNotWhole] = useState(false);
  const [saving, setSaving] = useState(false);
  const [error, setError] = useState<unknown>(null);

  const typed = other.trim();
  const percent = choice === OTHER_SHARE ? (/^\d+$/.test(typed) ? Number(typed) : null) : Number(choice);

  const save = async () => {
    setError(null);
    if (percent === null) {
      setNotWhole(true);
      return;
    }
    setSaving(true);
    try {
      const change: MerchantSettings = { holdoutPercent: percent };
      const saved = await patch<Shop>(shopPath(domain), change);
      shopChanged(saved);
      setChoice(choiceOf(saved.holdoutPercent));
      setOther(choiceOf(saved.holdoutPercent) === OTHER_SHARE ? String(saved.holdoutPercent) : '');
      notify(saved.holdoutPercent ? `${saved.holdoutPercent}% of shoppers are held out from videos` : 'Holdout turned off');
    } catch (e) {
      setError(e);
    } finally {
      setSaving(false);
    }
  };

  const refused = fieldError(error, 'holdoutPercent');
  const otherError = notWhole ? 'Enter a whole number of percent, such as 15.' : refused;

  return (
    <Layout.AnnotatedSection
      id="holdout"
      title="Measure what your videos sell"
      description="Hold out a share of shoppers from your videos: they see no video widget, and Analytics compares how they buy with everyone else. The difference is what your videos sell."
    >
      <Card>
        <Form onSubmit={save} noValidate>
          <FormLayout>
            {error != null && !namesAField(error, ['holdoutPercent']) && (
              <Banner tone="critical" title="The holdout could not be saved">
                <p>{error instanceof Error ? error.message : String(error)}</p>
              </Banner>
            )}
            <ChoiceList
              title="Shoppers held out from your videos"
              choices={[
                ...HOLDOUTS,
                {
                  value: OTHER_SHARE,
                  label: 'Another share',
                  renderChildren: (selected: boolean) =>
                    selected && (
                      <TextField
                        label="Percent of shoppers held out"
                        type="number"
                        inputMode="numeric"
                        min={0}
                        max={50}
                        step={1}
                        suffix="%"
                        value={other}
                        onChange={(v) => {
                          setOther(v);
                          setNotWhole(false);
                        }}
                        autoComplete="off"
                        helpText="A whole number, up to 50."
                        error={otherError}
                      />
                    ),
                },
              ]}
              selected={[choice]}
              onChange={([v]) => {
                setChoice(v ?? choice);
                setNotWhole(false);
              }}
              error={choice === OTHER_SHARE ? undefined : refused}
            />
            <BlockStack gap="200">
              <Text as="p" tone="subdued">
                A shopper stays in their group for 90 days. The cost: for that time, held-out shoppers see none of your videos. A larger
                share gives an answer sooner, but hides your videos from more shoppers.
              </Text>
              <Text as="p" tone="subdued">
                The answer shows on Analytics once each group has at least {formatCount(MIN_VISITS)} visits and {MIN_ORDERS} orders.
              </Text>
            </BlockStack>
            <InlineStack>
              <Button
                submit
                variant="primary"
                loading={saving}
                disabled={percent === shop.holdoutPercent}
                accessibilityLabel="Save the holdout"
              >
                Save
              </Button>
            </InlineStack>
          </FormLayout>
        </Form>
      </Card>
    </Layout.AnnotatedSection>
  );
}

export function SettingsPage() {
  const { domain, shop } = useShop();
  const notify = useToast();
  const keys = useShopData<{ apiKeys: ApiKeyInfo[] }>(['api-keys']);
  const onboarding = useShopData<Onboarding>(['onboarding']);
  const editor = onboarding.data?.themeEditorPath;
  const embedOn = onboarding.data?.steps.find((s) => s.id === 'embed')?.done;
  const [name, setName] = useState('');
  const [creating, setCreating] = useState(false);
  const [createError, setCreateError] = useState<unknown>(null);
  const [created, setCreated] = useState<CreatedApiKey | null>(null);
  const [revoking, setRevoking] = useState<ApiKeyInfo | null>(null);
  const keyRef = useRef<HTMLElement>(null);

  const when = (iso: string) => formatInstant(iso, shop.timezone);

  const create = async () => {
    setCreating(true);
    setCreateError(null);
    try {
      const key = await post<CreatedApiKey>(shopPath(domain, 'api-keys'), { name: name.trim() });
      setCreated(key);
      setName('');
      keys.reload();
    } catch (e) {
      setCreateError(e);
    } finally {
      setCreating(false);
    }
  };

  const copy = async () => {
    if (!created) return;
    if (await copyText(created.key)) notify('API key copied');
    else {
      selectText(keyRef.current);
      notify('Could not copy automatically. The key is selected: copy it with your keyboard.', { error: true });
    }
  };

  const revoke = async () => {
    if (!revoking) return;
    await del(shopPath(domain, 'api-keys', revoking.id));
    notify(`Revoked ${revoking.name}`);
    keys.reload();
  };

  const list = keys.data?.apiKeys ?? [];
  // A key's state is a line under its name, not a column of its own: the table fits the card.
  const keyStatus = (k: ApiKeyInfo) =>
    k.revokedAt ? (
      <Text as="span" variant="bodySm" tone="subdued">
        {`Revoked ${when(k.revokedAt)}`}
      </Text>
    ) : (
      <InlineStack>
        <Badge tone="success">Active</Badge>
      </InlineStack>
    );
  const revokeButton = (k: ApiKeyInfo) =>
    !k.revokedAt && (
      <span className="vd-inline" data-testid="revoke-key">
        <Button tone="critical" variant="plain" onClick={() => setRevoking(k)} accessibilityLabel={`Revoke ${k.name}`}>
          Revoke
        </Button>
      </span>
    );

  return (
    <Page title="Settings">
      <Layout>
        {editor && (
          <Layout.AnnotatedSection
            id="app-embed"
            title="Your store's theme"
            description="The videoapp app embed loads widgets on your store's pages. Switch it on or off in the theme editor."
          >
            <Card>
              <InlineStack gap="300" blockAlign="center" align="space-between">
                {embedOn ? (
                  <Badge tone="success">Your store's pages load videoapp</Badge>
                ) : (
                  <Badge tone="attention">Not seen on your store's pages yet</Badge>
                )}
                <Button url={themeEditorUrl(editor)} target="_top">
                  Open theme editor
                </Button>
              </InlineStack>
            </Card>
          </Layout.AnnotatedSection>
        )}
        <AttributionWindowSection />
        <HoldoutSection />
        <Layout.AnnotatedSection
          id="api-access"
          title="API access"
          description="API keys let your own tools and reports read this store's video analytics. A key works until you revoke it."
        >
          <BlockStack gap="400">
            {created && (
              <Banner tone="success" title={`API key “${created.name}” created`} onDismiss={() => setCreated(null)}>
                <BlockStack gap="200">
                  <Text as="p">Copy this key now and keep it somewhere safe. It will not be shown again.</Text>
                  <InlineStack gap="200" blockAlign="center" wrap>
                    <code className="vd-key" data-testid="api-key-value" ref={keyRef}>
                      {created.key}
                    </code>
                    <Button onClick={copy} accessibilityLabel="Copy the API key">
                      Copy
                    </Button>
                  </InlineStack>
                </BlockStack>
              </Banner>
            )}

            <Card>
              <Form onSubmit={create} noValidate>
                <FormLayout>
                  <Text as="h3" variant="headingSm">
                    Create a key
                  </Text>
                  {createError != null && !namesAField(createError, ['name']) && (
                    <Banner tone="critical" title="The key could not be created">
                      <p>{createError instanceof Error ? createError.message : String(createError)}</p>
                    </Banner>
                  )}
                  <TextField
                    label="Key name"
                    value={name}
                    onChange={setName}
                    autoComplete="off"
                    maxLength={256}
                    helpText="A name to recognise the key by, such as the tool that will use it."
                    error={fieldError(createError, 'name')}
                  />
                  <Button submit variant="primary" loading={creating} disabled={!name.trim()}>
                    Create key
                  </Button>
                </FormLayout>
              </Form>
            </Card>

            <ListCard
              loaded={keys}
              errorTitle="Your keys could not be loaded"
              loadingLabel="Loading your API keys"
              head={
                <Text as="h3" variant="headingSm">
                  Your keys
                </Text>
              }
            >
              <ListTable
                label="Your keys"
                noun={{ singular: 'API key', plural: 'API keys' }}
                items={list}
                name={(k) => k.name}
                nameHeading="Name"
                nameExtra={keyStatus}
                nameLevel="h4"
                columns={[
                  { title: 'Key starts with', cell: (k) => <code className="vd-code">{k.prefix}</code> },
                  { title: 'Created', cell: (k) => formatInstant(k.createdAt, shop.timezone, { time: false }) },
                  { title: 'Last used', cell: (k) => (k.lastUsedAt ? when(k.lastUsedAt) : 'Never') },
                ]}
                actions={revokeButton}
                emptyState={
                  <div className="vd-empty">
                    <Text as="p" tone="subdued">
                      No API keys yet. Create one above when a tool needs to read your analytics.
                    </Text>
                  </div>
                }
              />
            </ListCard>
          </BlockStack>
        </Layout.AnnotatedSection>
      </Layout>

      <ConfirmModal
        open={revoking != null}
        title={`Revoke ${revoking?.name ?? 'this key'}?`}
        confirmLabel="Revoke key"
        onConfirm={revoke}
        onClose={() => setRevoking(null)}
      >
        <Text as="p">
          Any tool using this key stops getting analytics at once. This cannot be undone: to give a tool access again, create a new key.
        </Text>
      </ConfirmModal>
    </Page>
  );
}
