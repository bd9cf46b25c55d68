/**
 * A video's captions: one WebVTT file per language, attached and removed at once (not with the
 * form's Save). The store's player shows them, on by default while the video plays muted.
 */
import { BlockStack, Button, DropZone, InlineStack, Select, Text } from '@shopify/polaris';
import { useState } from 'react';

import { ApiError, delJSON, putFile, shopPath } from '../api';
import { useShop, useToast } from '../context';
import type { Video } from '../types';

/** The languages offered first; any other tag is the service's to accept. */
const LANGUAGES = ['en', 'es', 'fr', 'de', 'it', 'pt', 'pt-BR', 'nl', 'sv', 'pl', 'tr', 'ja', 'ko', 'zh-Hans', 'zh-Hant', 'ar', 'hi'];

const names = (() => {
  try {
    return new Intl.DisplayNames(undefined, { type: 'language' });
  } catch {
    return null;
  }
})();
const languageName = (tag: string): string => names?.of(tag) ?? tag;

export function Captions({ video, onChange }: { video: Video; onChange: (video: Video) => void }) {
  const { domain } = useShop();
  const notify = useToast();
  const captions = video.captions ?? [];
  const [language, setLanguage] = useState(() => LANGUAGES.find((l) => !captions.some((c) => c.language === l)) ?? 'en');
  const [busy, setBusy] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const path = (tag: string) => shopPath(domain, 'videos', video.id, 'captions', tag);

  const run = async (tag: string, request: () => Promise<Video>, done: string) => {
    setBusy(tag);
    setError(null);
    try {
      onChange(await request());
      notify(done);
    } catch (e) {
      setError(e instanceof ApiError ? e.message : String(e));
    } finally {
      setBusy(null);
    }
  };
  const attach = (files: File[]) => {
    const file = files[0];
    if (!file) return;
    void run(language, () => putFile<Video>(path(language), file, 'text/vtt'), `${languageName(language)} captions added`);
  };

  return (
    <BlockStack gap="300">
      <Text as="h2" variant="headingMd">
        Captions
      </Text>
      <Text as="p" tone="subdued">
        Most shoppers watch without sound: captions show while the video plays muted. Add a WebVTT (.vtt) file per language.
      </Text>
      {captions.length > 0 && (
        <BlockStack as="ul" gap="200">
          {captions.map((c) => (
            <InlineStack as="li" key={c.language} align="space-between" blockAlign="center" gap="200">
              <Text as="span">{languageName(c.language)}</Text>
              <InlineStack gap="200">
                <Button url={c.url} target="_blank" variant="plain">
                  View file
                </Button>
                <Button
                  tone="critical"
                  variant="plain"
                  loading={busy === c.language}
                  accessibilityLabel={`Remove ${languageName(c.language)} captions`}
                  onClick={() =>
                    void run(c.language, () => delJSON<Video>(path(c.language)), `${languageName(c.language)} captions removed`)
                  }
                >
                  Remove
                </Button>
              </InlineStack>
            </InlineStack>
          ))}
        </BlockStack>
      )}
      <Select
        label="Language of the captions to add"
        options={LANGUAGES.map((tag) => ({ value: tag, label: `${languageName(tag)} (${tag})` }))}
        value={language}
        onChange={setLanguage}
      />
      <DropZone
        label="WebVTT file"
        accept=".vtt,text/vtt"
        type="file"
        allowMultiple={false}
        disabled={busy !== null}
        onDropAccepted={attach}
        errorOverlayText="Choose a .vtt file"
      >
        <DropZone.FileUpload actionTitle="Add captions" actionHint="A .vtt file; it replaces captions in the same language" />
      </DropZone>
      <div role="alert">
        {error && (
          <Text as="p" tone="critical">
            {error}
          </Text>
        )}
      </div>
    </BlockStack>
  );
}
