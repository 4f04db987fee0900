// Modal dialogs on the native <dialog>: the rest of the page is inert (focus stays in the dialog),
// Escape closes them, and focus returns to the control that opened them.
import { type ReactNode, useEffect, useId, useRef, useState } from 'react';
import { useMutation } from './useMutation';
import { Alert, Field } from './ui';

const FOCUSABLE = 'button, input, select, textarea, a[href], [tabindex]:not([tabindex="-1"])';

function Modal({ title, onClose, children }: { title: string; onClose: () => void; children: ReactNode }) {
  const ref = useRef<HTMLDialogElement>(null);
  const titleId = useId();
  useEffect(() => {
    const dialog = ref.current;
    // Focus goes back where it was when the dialog closes (the dialog is gone from the page by then).
    const opener = document.activeElement instanceof HTMLElement ? document.activeElement : null;
    if (dialog && !dialog.open) dialog.showModal();
    return () => {
      dialog?.close();
      if (opener?.isConnected) opener.focus();
    };
  }, []);
  return (
    <dialog
      ref={ref}
      aria-labelledby={titleId}
      onCancel={(event) => {
        event.preventDefault();
        onClose();
      }}
      onKeyDown={(event) => {
        // A modal dialog makes the page inert, but Tab past its last control would leave for the
        // browser's own controls: it wraps around inside the dialog instead.
        if (event.key !== 'Tab' || !ref.current) return;
        const controls = [...ref.current.querySelectorAll<HTMLElement>(FOCUSABLE)].filter((node) => !node.hasAttribute('disabled'));
        if (controls.length === 0) return;
        const [first, last] = [controls[0], controls[controls.length - 1]];
        if (event.shiftKey && document.activeElement === first) {
          event.preventDefault();
          last.focus();
        } else if (!event.shiftKey && document.activeElement === last) {
          event.preventDefault();
          first.focus();
        }
      }}
    >
      <h2 id={titleId}>{title}</h2>
      {children}
    </dialog>
  );
}

interface ConfirmProps {
  /** The dialog's heading: names the action and its target ("Revoke the key …a1b2?"). */
  title: string;
  /** The confirming button ("Revoke key"). */
  action: string;
  /** When set, the person types it (a name or an id) to enable the action. */
  expected?: string;
  tone?: 'danger' | 'primary';
  /** What happens, shown above the buttons. */
  children?: ReactNode;
  /** The write; a failure is shown in the dialog, which stays open. */
  onConfirm: () => Promise<unknown>;
  onClose: () => void;
}

/** Asks before an action that cannot be undone: Cancel or Escape closes, the action runs once confirmed. */
export function ConfirmDialog({ title, action, expected, tone = 'danger', children, onConfirm, onClose }: ConfirmProps) {
  const [typed, setTyped] = useState('');
  const confirm = useMutation(async () => {
    await onConfirm();
    onClose();
  });
  const ready = expected === undefined || typed === expected;
  return (
    <Modal title={title} onClose={onClose}>
      {children}
      <form
        onSubmit={(event) => {
          event.preventDefault();
          // Never reaches a form around the button that opened the dialog.
          event.stopPropagation();
          if (ready) void confirm.run();
        }}
      >
        {expected !== undefined && <Field label={`Type ${expected} to confirm`} name="confirmation" value={typed} onChange={setTyped} />}
        {confirm.error !== undefined && <Alert>{confirm.error instanceof Error ? confirm.error.message : String(confirm.error)}</Alert>}
        <div className="actions">
          <button type="button" onClick={onClose}>
            Cancel
          </button>
          <button type="submit" className={tone} disabled={!ready || confirm.pending}>
            {action}
          </button>
        </div>
      </form>
    </Modal>
  );
}

/** A button that opens a ConfirmDialog; `name` is the button's accessible name when its text alone does not name the target. */
export function ConfirmAction({
  label,
  name,
  className,
  disabled,
  ...dialog
}: Omit<ConfirmProps, 'onClose'> & { label: string; name?: string; className?: string; disabled?: boolean }) {
  const [open, setOpen] = useState(false);
  return (
    <>
      <button
        type="button"
        className={className ?? (dialog.tone === 'primary' ? 'primary' : 'danger')}
        aria-label={name}
        disabled={disabled}
        onClick={() => setOpen(true)}
      >
        {label}
      </button>
      {open && <ConfirmDialog {...dialog} onClose={() => setOpen(false)} />}
    </>
  );
}

/** Secrets shown once: copied from here, never written to browser storage. */
export function SecretDialog({
  title,
  secrets,
  note,
  onClose,
}: {
  title: string;
  secrets: { label: string; value: string }[];
  note?: string;
  onClose: () => void;
}) {
  return (
    <Modal title={title} onClose={onClose}>
      <p>{note ?? 'Shown only once. Copy it now and keep it somewhere safe.'}</p>
      {secrets.map((secret) => (
        <SecretRow key={secret.value} {...secret} />
      ))}
      <div className="actions">
        <button type="button" className="primary" onClick={onClose}>
          Done
        </button>
      </div>
    </Modal>
  );
}

function SecretRow({ label, value }: { label: string; value: string }) {
  const [copied, setCopied] = useState<'no' | 'yes' | 'failed'>('no');
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(value);
      setCopied('yes');
    } catch {
      setCopied('failed');
    }
  };
  return (
    <div className="secret-row">
      <span className="secret-label">{label}</span>
      <code className="secret" data-testid="secret">
        {value}
      </code>
      <button type="button" onClick={() => void copy()} aria-label={`Copy ${label}`}>
        Copy
      </button>
      <span role="status" className="muted">
        {copied === 'yes' ? 'Copied.' : copied === 'failed' ? 'Copy failed: select the text and copy it by hand.' : ''}
      </span>
    </div>
  );
}
