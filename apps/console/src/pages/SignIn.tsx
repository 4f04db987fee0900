// Sign-in with the operator token; the service sets the signed session cookie.
import { useState } from 'react';
import { nextAfterSignIn, signIn } from '../api/session';
import { Field, FormAlert, errorFor } from '../components/ui';
import { useMutation } from '../components/useMutation';
import { usePageTitle } from '../components/page';

export function SignIn({ onSignedIn }: { onSignedIn: () => void }) {
  usePageTitle('Sign in');
  const [token, setToken] = useState('');
  const attempt = useMutation(async () => {
    await signIn(token);
    setToken('');
    const next = nextAfterSignIn(window.location.search);
    if (next) return window.location.assign(next);
    onSignedIn();
  });
  const error = attempt.error;
  const submit = () => {
    if (!token) return attempt.fail(new Error('token is required.'));
    void attempt.run();
  };
  const fieldError = errorFor(error, 'token') ?? (error instanceof Error && error.message.startsWith('token') ? error.message : undefined);
  return (
    <main id="main" className="signin">
      <h1>Operator console</h1>
      <form
        noValidate
        onSubmit={(event) => {
          event.preventDefault();
          submit();
        }}
      >
        <Field label="Operator token" name="token" type="password" autoComplete="current-password" value={token} onChange={setToken} error={fieldError} />
        {!fieldError && <FormAlert error={error} fields={['token']} />}
        <button type="submit" className="primary" disabled={attempt.pending}>
          Sign in
        </button>
      </form>
    </main>
  );
}
