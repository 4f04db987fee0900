// Modal dialogs on the native <dialog>: focus is trapped and Escape closes them.
import { type ReactNode, useEffect, useRef, useState } from 'react';
import { Alert, Field } from './ui';

function Modal({ title, onClose, children }: { title: string; onClose: () => void; children: ReactNode }) {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const dialog = ref.current;
    if (dialog && !dialog.open) dialog.showModal();
    return () => dialog?.close();
  }, []);
  return (
    <dialog
      ref={ref}
      aria-labelledby="dialog-title"
      onCancel={(event) => {
        event.preventDefault();
        onClose();
      }}
    >
      <h2 id="dialog-title">{title}</h2>
      {children}
    </dialog>
  );
}

/** A destructive action: the person types `expected` (a name or an id) to enable it. */
export function ConfirmDialog(props: {
  title: string;
  expected: string;
  action: string;
  children?: ReactNode;
  onConfirm: () => Promise<void>;
  onClose: () => void;
}) {
  const [typed, setTyped] = useState('');
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const confirm = async () => {
    setBusy(true);
    try {
      await props.onConfirm();
      props.onClose();
    } catch (failure) {
      setError((failure as Error).message);
      setBusy(false);
    }
  };
  return (
    <Modal title={props.title} onClose={props.onClose}>
      {props.children}
      <form
        onSubmit={(event) => {
          event.preventDefault();
          if (typed === props.expected) void confirm();
        }}
      >
        <Field label={`Type ${props.expected} to confirm`} name="confirmation" value={typed} onChange={setTyped} />
        {error && <Alert>{error}</Alert>}
        <div className="actions">
          <button type="button" onClick={props.onClose}>
            Cancel
          </button>
          <button type="submit" className="danger" disabled={typed !== props.expected || busy}>
            {props.action}
          </button>
        </div>
      </form>
    </Modal>
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

/** A non-destructive form in a dialog. */
export function FormDialog({ title, children, onClose }: { title: string; children: ReactNode; onClose: () => void }) {
  return (
    <Modal title={title} onClose={onClose}>
      {children}
    </Modal>
  );
}
