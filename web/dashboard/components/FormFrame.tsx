/**
 * The frame of a form that creates or edits one thing: the title bar with its way back, the
 * service's error on top (or "correct the field marked below" when it names a field, shown
 * beside it), Cancel and Save, and a question before leaving with unsaved changes.
 */
import { Banner, BlockStack, Button, Card, Form, InlineStack, Layout, Page, Select, Text, TextField } from '@shopify/polaris';
import type { SelectProps, TextFieldProps } from '@shopify/polaris';
import { createContext, useContext, useState, type ReactNode } from 'react';

import { useUnsavedChanges } from '../navigation';
import { fieldError, namesAField } from './fields';
import { ErrorBanner, LoadingCard } from './States';

const errorText = (e: unknown) => (e instanceof Error ? e.message : String(e));

/** The error of the last save, for the fields of the form to show the part that names them. */
const SaveError = createContext<unknown>(null);

/**
 * A text field of a form in a {@link FormFrame}: the service's message for `name` shows beside
 * it, and the browser offers none of its remembered entries (these are the shop's, not the
 * merchant's).
 */
export function FormTextField({ name, ...field }: Omit<TextFieldProps, 'autoComplete' | 'error'> & { name: string }) {
  const error = useContext(SaveError);
  return <TextField {...field} autoComplete="off" error={fieldError(error, name)} />;
}

/** A select of a form in a {@link FormFrame}; the service's message for `name` comes before `error`. */
export function FormSelect({ name, error, ...field }: Omit<SelectProps, 'error'> & { name: string; error?: string }) {
  const saveError = useContext(SaveError);
  return <Select {...field} error={fieldError(saveError, name) ?? error} />;
}

/** What a form edits, in the words of its title bar, its button and its error. */
export interface FormKind {
  /** "video": "Edit …", "Save video", "The video could not be saved". */
  noun: string;
  /** The page the back arrow and Cancel return to. */
  back: string;
  /** The verb for a new one: "Add a video", "Add video". */
  create: string;
  /** The fields shown in the form: an error naming one of them is shown beside it. */
  fields: string[];
}

export interface FormState<T> {
  saving: boolean;
  error: unknown;
  /** Reports a check made before sending, shown like the service's own error. */
  fail: (error: unknown) => void;
  /** Sends the save; its answer goes to `onSaved`, its error to the form. */
  send: (request: () => Promise<T>) => Promise<void>;
  cancel: () => void;
}

/**
 * A form's save in progress and its error, and the question before leaving with unsaved
 * changes: `values` (anything that serializes to JSON) differ from what they were when the
 * form opened.
 */
export function useForm<T>({
  values,
  onSaved,
  onCancel,
}: {
  values: unknown;
  onSaved: (saved: T) => void;
  onCancel: () => void;
}): FormState<T> {
  const [saving, setSaving] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [opened] = useState(() => JSON.stringify(values));
  useUnsavedChanges(JSON.stringify(values) !== opened);
  const send = async (request: () => Promise<T>) => {
    setSaving(true);
    setError(null);
    try {
      onSaved(await request());
    } catch (e) {
      setError(e);
      setSaving(false);
    }
  };
  return { saving, error, fail: setError, send, cancel: onCancel };
}

export function FormFrame({
  kind: { noun, back, create, fields },
  editing,
  form: { saving, error, cancel },
  onSubmit,
  children,
  after,
}: {
  kind: FormKind;
  /** What is edited; absent while creating one. */
  editing?: { title: string };
  form: Pick<FormState<unknown>, 'saving' | 'error' | 'cancel'>;
  onSubmit: () => void;
  /** The form's sections, each a `Layout.Section`. */
  children: ReactNode;
  /** Sections below Cancel and Save. */
  after?: ReactNode;
}) {
  return (
    <Page title={editing ? `Edit ${editing.title || noun}` : `${create} a ${noun}`} backAction={{ content: back, onAction: cancel }}>
      <Form onSubmit={onSubmit} noValidate>
        <Layout>
          {error != null && (
            <Layout.Section>
              <Banner tone="critical" title={`The ${noun} could not be saved`}>
                <p>{namesAField(error, fields) ? 'Correct the field marked below, then save again.' : errorText(error)}</p>
              </Banner>
            </Layout.Section>
          )}
          <SaveError.Provider value={error}>{children}</SaveError.Provider>
          <Layout.Section>
            <InlineStack gap="200" align="end">
              <Button onClick={cancel} disabled={saving}>
                Cancel
              </Button>
              <Button submit variant="primary" loading={saving}>
                {editing ? `Save ${noun}` : `${create} ${noun}`}
              </Button>
            </InlineStack>
          </Layout.Section>
          {after}
        </Layout>
      </Form>
    </Page>
  );
}

/** A form's page while what it edits is loading, or failed to load. */
export function FormLoading({
  title,
  back,
  onBack,
  error,
  errorTitle,
  loadingLabel,
  onRetry,
}: {
  title: string;
  back: string;
  onBack: () => void;
  error: Error | null;
  errorTitle: string;
  loadingLabel: string;
  onRetry: () => void;
}) {
  return (
    <Page title={title} backAction={{ content: back, onAction: onBack }}>
      {error ? <ErrorBanner title={errorTitle} error={error} onRetry={onRetry} /> : <LoadingCard label={loadingLabel} />}
    </Page>
  );
}

/** One card of a form in a {@link FormFrame}, under its heading (and a line that explains it). */
export function FormSection({
  title,
  note,
  gap = '400',
  children,
}: {
  title: string;
  note?: string;
  gap?: '300' | '400';
  children: ReactNode;
}) {
  const heading = (
    <Text as="h2" variant="headingMd">
      {title}
    </Text>
  );
  return (
    <Layout.Section>
      <Card>
        <BlockStack gap={gap}>
          {note ? (
            <BlockStack gap="100">
              {heading}
              <Text as="p" tone="subdued">
                {note}
              </Text>
            </BlockStack>
          ) : (
            heading
          )}
          {children}
        </BlockStack>
      </Card>
    </Layout.Section>
  );
}
