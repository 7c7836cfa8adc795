/**
 * A modal dialog on the native <dialog> element: `showModal()` gives the focus trap, Escape and an
 * inert page behind it, which a hand-made overlay would have to imitate. Rendered only while open.
 */
import { useEffect, useId, useRef, type ReactNode } from 'react';

export interface DialogProps {
  title: string;
  onClose: () => void;
  children: ReactNode;
  /** Buttons, right-aligned under the content. */
  actions?: ReactNode;
  /** `alertdialog` for confirmations of something that cannot be undone. */
  role?: 'dialog' | 'alertdialog';
}

export function Dialog({ title, onClose, children, actions, role = 'dialog' }: DialogProps) {
  const ref = useRef<HTMLDialogElement>(null);
  const titleId = useId();
  useEffect(() => {
    const dialog = ref.current;
    const opener = document.activeElement instanceof HTMLElement ? document.activeElement : null;
    if (dialog && !dialog.open) dialog.showModal();
    return () => {
      if (dialog?.open) dialog.close();
      opener?.focus();
    };
  }, []);
  return (
    <dialog
      ref={ref}
      className="dialog"
      role={role === 'alertdialog' ? 'alertdialog' : undefined}
      aria-labelledby={titleId}
      onCancel={(event) => {
        event.preventDefault();
        onClose();
      }}
    >
      <h2 id={titleId} className="dialog-title">
        {title}
      </h2>
      <div className="dialog-body">{children}</div>
      {actions ? <div className="dialog-actions">{actions}</div> : null}
    </dialog>
  );
}

export interface ConfirmProps {
  title: string;
  children: ReactNode;
  confirm: string;
  cancel?: string;
  busy?: boolean;
  danger?: boolean;
  onConfirm: () => void;
  onCancel: () => void;
  /** An error from the confirmed action, shown inside the dialog. */
  error?: ReactNode;
}

/** "Revoke the key?" and the like: the confirming button names the action. */
export function ConfirmDialog({
  title,
  children,
  confirm,
  cancel = 'Cancel',
  busy = false,
  danger = true,
  onConfirm,
  onCancel,
  error,
}: ConfirmProps) {
  return (
    <Dialog
      title={title}
      role="alertdialog"
      onClose={onCancel}
      actions={
        <>
          <button type="button" className="button" onClick={onCancel} disabled={busy}>
            {cancel}
          </button>
          <button
            type="button"
            className={danger ? 'button button-danger' : 'button button-primary'}
            onClick={onConfirm}
            disabled={busy}
            aria-busy={busy}
          >
            {confirm}
          </button>
        </>
      }
    >
      {children}
      {error}
    </Dialog>
  );
}
