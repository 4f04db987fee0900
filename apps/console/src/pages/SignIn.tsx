// Sign-in with the operator token; the service sets the signed session cookie.
import { useState } from 'react';
import { nextAfterSignIn, signIn } from '../api/session';
import { Field, FormAlert, errorFor } from '../components/ui';

export function SignIn({ onSignedIn }: { onSignedIn: () => void }) {
  const [token, setToken] = useState('');
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);
  const submit = async () => {
    if (!token) return setError(new Error('token is required.'));
    setBusy(true);
    try {
      await signIn(token);
      setToken('');
      const next = nextAfterSignIn(window.location.search);
      if (next) return window.location.assign(next);
      onSignedIn();
    } catch (failure) {
      setError(failure);
    } finally {
      setBusy(false);
    }
  };
  const fieldError = errorFor(error, 'token') ?? (error instanceof Error && error.message.startsWith('token') ? error.message : undefined);
  return (
    <main id="main" className="signin">
      <h1>Operator console</h1>
      <form
        noValidate
        onSubmit={(event) => {
          event.preventDefault();
          void submit();
        }}
      >
        <Field label="Operator token" name="token" type="password" autoComplete="current-password" value={token} onChange={setToken} error={fieldError} />
        {!fieldError && <FormAlert error={error} fields={['token']} />}
        <button type="submit" className="primary" disabled={busy}>
          Sign in
        </button>
      </form>
    </main>
  );
}
