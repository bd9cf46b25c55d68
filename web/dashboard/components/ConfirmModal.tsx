import { Banner, BlockStack, Modal } from '@shopify/polaris';
import { useState, type ReactNode } from 'react';

/**
 * "Are you sure?" before something that cannot be undone. The modal stays open while the
 * request runs and shows the service's message if it fails.
 */
export function ConfirmModal({
  open,
  title,
  confirmLabel,
  children,
  onConfirm,
  onClose,
}: {
  open: boolean;
  title: string;
  confirmLabel: string;
  children: ReactNode;
  onConfirm: () => Promise<void>;
  onClose: () => void;
}) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);

  const close = () => {
    if (busy) return;
    setError(null);
    onClose();
  };

  const confirm = async () => {
    setBusy(true);
    setError(null);
    try {
      await onConfirm();
      setBusy(false);
      onClose();
    } catch (e) {
      setBusy(false);
      setError(e instanceof Error ? e.message : String(e));
    }
  };

  return (
    <Modal
      open={open}
      onClose={close}
      title={title}
      primaryAction={{ content: confirmLabel, destructive: true, loading: busy, onAction: confirm }}
      secondaryActions={[{ content: 'Cancel', onAction: close, disabled: busy }]}
    >
      <Modal.Section>
        <BlockStack gap="300">
          {error && (
            <Banner tone="critical" title="That did not work">
              <p>{error}</p>
            </Banner>
          )}
          {children}
        </BlockStack>
      </Modal.Section>
    </Modal>
  );
}
