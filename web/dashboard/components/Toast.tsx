import { useEffect } from 'react';

export interface ToastMessage {
  message: string;
  error: boolean;
  key: number;
}

/**
 * A short confirmation at the bottom of the screen. The live region stays in the page so that
 * every new message is announced; the message itself goes away after a few seconds.
 */
export function Toasts({ toast, onDismiss }: { toast: ToastMessage | null; onDismiss: () => void }) {
  useEffect(() => {
    if (!toast) return undefined;
    const timer = setTimeout(onDismiss, toast.error ? 10_000 : 5_000);
    return () => clearTimeout(timer);
  }, [toast, onDismiss]);

  return (
    <div className="vd-toasts" role="status" aria-live="polite">
      {toast && (
        <div key={toast.key} className={toast.error ? 'vd-toast vd-toast--error' : 'vd-toast'}>
          <span>
            {toast.error && <span className="vd-visually-hidden">Error: </span>}
            {toast.message}
          </span>
          <button type="button" className="vd-toast__close" onClick={onDismiss}>
            Dismiss
          </button>
        </div>
      )}
    </div>
  );
}
