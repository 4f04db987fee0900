// Small shared pieces: alerts, loading / empty / error states, form fields with inline errors.
import { type ReactNode, useId } from 'react';
import { ApiFailure } from '../api/client';
import { fieldOfError } from '../rules';
import type { Load } from './useLoad';
import type { Mutation } from './useMutation';

export function Alert({ children, kind = 'error' }: { children: ReactNode; kind?: 'error' | 'info' }) {
  return (
    <div className={`alert alert-${kind}`} role={kind === 'error' ? 'alert' : 'status'}>
      {children}
    </div>
  );
}

/** A load's states: loading, its error with a retry (or `missing` when the API answers 404), its data. */
export function Loaded<T>({ load, label, missing, children }: { load: Load<T>; label: string; missing?: ReactNode; children: (data: T) => ReactNode }) {
  if (missing !== undefined && load.state === 'error' && load.error instanceof ApiFailure && load.error.status === 404) return <>{missing}</>;
  if (load.state === 'loading')
    return (
      <p className="muted" role="status">
        Loading {label}…
      </p>
    );
  if (load.state === 'error')
    return (
      <Alert>
        Could not load {label}: {load.error.message}{' '}
        <button type="button" className="link" onClick={load.reload}>
          Try again
        </button>
      </Alert>
    );
  return <>{children(load.data)}</>;
}

export function Empty({ children }: { children: ReactNode }) {
  return <p className="empty">{children}</p>;
}

/** The field an error names: `param` when the API gives it, else the message's first word. */
export function errorFor(error: unknown, field: string): string | undefined {
  if (!(error instanceof ApiFailure)) return undefined;
  return fieldOfError(error.message, error.param, [field]) ? error.message : undefined;
}

/** An error no field claims: shown as a page-level alert. */
export function FormAlert({ error, fields }: { error: unknown; fields: string[] }) {
  if (!error) return null;
  if (fields.some((field) => errorFor(error, field))) return null;
  return <Alert>{error instanceof Error ? error.message : String(error)}</Alert>;
}

/** A write's outcome: its error (unless a field claims it) announced as an alert, its success note as a status. */
export function MutationStatus<A extends unknown[]>({ mutation, fields = [], failed }: { mutation: Mutation<A>; fields?: string[]; failed?: string }) {
  const error = mutation.error;
  return (
    <>
      {failed && error !== undefined ? (
        <Alert>
          {failed}: {error instanceof Error ? error.message : String(error)}
        </Alert>
      ) : (
        <FormAlert error={error} fields={fields} />
      )}
      {mutation.done && <Alert kind="info">{mutation.done}</Alert>}
    </>
  );
}

interface FieldProps {
  label: string;
  name: string;
  value: string;
  onChange: (value: string) => void;
  error?: string;
  hint?: string;
  type?: string;
  required?: boolean;
  placeholder?: string;
  autoComplete?: string;
}

export function Field({ label, name, value, onChange, error, hint, type = 'text', required, placeholder, autoComplete }: FieldProps) {
  const id = useId();
  const described = [hint ? id + '-hint' : '', error ? id + '-error' : ''].filter(Boolean).join(' ') || undefined;
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <input
        id={id}
        name={name}
        type={type}
        value={value}
        required={required}
        placeholder={placeholder}
        autoComplete={autoComplete ?? 'off'}
        aria-invalid={error ? true : undefined}
        aria-describedby={described}
        onChange={(event) => onChange(event.target.value)}
      />
      {hint && (
        <small id={id + '-hint'} className="hint">
          {hint}
        </small>
      )}
      {error && (
        <span id={id + '-error'} className="field-error" role="alert">
          {error}
        </span>
      )}
    </div>
  );
}

interface SelectProps {
  label: string;
  name: string;
  value: string;
  options: readonly string[];
  onChange: (value: string) => void;
  error?: string;
}

export function Select({ label, name, value, options, onChange, error }: SelectProps) {
  const id = useId();
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <select
        id={id}
        name={name}
        value={value}
        aria-invalid={error ? true : undefined}
        aria-describedby={error ? id + '-error' : undefined}
        onChange={(event) => onChange(event.target.value)}
      >
        {options.map((option) => (
          <option key={option} value={option}>
            {option}
          </option>
        ))}
      </select>
      {error && (
        <span id={id + '-error'} className="field-error" role="alert">
          {error}
        </span>
      )}
    </div>
  );
}

export function Status({ value }: { value: string }) {
  return <span className={`badge badge-${value.replace(/[^a-z_]/g, '')}`}>{value}</span>;
}
