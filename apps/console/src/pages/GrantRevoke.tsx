// Manual grant and revoke in the console's environment, with the reason the audit entry keeps.
// The API's rules are checked as you type: key in snake_case, a grant's reason 20 to 500
// characters, a revoke's 1 to 500; the service's own answer is shown next to its field.
import { useState } from 'react';
import { ApiFailure, api, call } from '../api/client';
import { Alert, Field, FormAlert, Select, errorFor } from '../components/ui';
import { useEnv } from '../env';

const DURATIONS = ['P30D', 'P90D', 'P1Y', 'lifetime'] as const;
const KEY_PATTERN = /^[a-z][a-z0-9_]*$/;

function check(action: 'grant' | 'revoke', entitlementKey: string, reason: string): ApiFailure | undefined {
  if (!KEY_PATTERN.test(entitlementKey))
    return new ApiFailure(400, 'invalid_param_value', 'entitlementKey must be snake_case (lowercase letters, digits, underscores).', 'entitlementKey');
  const min = action === 'grant' ? 20 : 1;
  if (reason.trim().length < min || reason.length > 500)
    return new ApiFailure(400, 'invalid_param_value', `reason must be ${min} to 500 characters (it is kept in the audit log).`, 'reason');
  return undefined;
}

export function GrantRevoke({ projectId, customerId, onDone }: { projectId: string; customerId: string; onDone: () => void }) {
  const env = useEnv();
  const [action, setAction] = useState<'grant' | 'revoke'>('grant');
  const [entitlementKey, setKey] = useState('');
  const [duration, setDuration] = useState<(typeof DURATIONS)[number]>('P30D');
  const [reason, setReason] = useState('');
  const [error, setError] = useState<unknown>();
  const [done, setDone] = useState<string>();
  const submit = async () => {
    setDone(undefined);
    const invalid = check(action, entitlementKey, reason);
    setError(invalid);
    if (invalid) return;
    try {
      if (action === 'grant')
        await call(
          api.POST('/admin/v1/projects/{projectId}/customers/{customerId}/grant', {
            params: { path: { projectId, customerId } },
            body: { entitlementKey, duration, reason, env },
          }),
        );
      else
        await call(
          api.POST('/admin/v1/projects/{projectId}/customers/{customerId}/revoke', {
            params: { path: { projectId, customerId } },
            body: { entitlementKey, reason, env },
          }),
        );
      setDone(action === 'grant' ? `Granted ${entitlementKey} in ${env}.` : `Revoked ${entitlementKey} in ${env}.`);
      setReason('');
      onDone();
    } catch (failure) {
      setError(failure);
    }
  };
  return (
    <form
      aria-labelledby="grant-revoke"
      noValidate
      onSubmit={(event) => {
        event.preventDefault();
        void submit();
      }}
    >
      <h2 id="grant-revoke">Grant or revoke ({env})</h2>
      <Select label="Action" name="action" value={action} options={['grant', 'revoke']} onChange={(value) => setAction(value as 'grant' | 'revoke')} />
      <Field label="Entitlement key" name="entitlementKey" value={entitlementKey} onChange={setKey} error={errorFor(error, 'entitlementKey')} />
      {action === 'grant' && (
        <Select label="Duration" name="duration" value={duration} options={DURATIONS} onChange={(value) => setDuration(value as typeof duration)} />
      )}
      <Field
        label="Reason"
        name="reason"
        hint={action === 'grant' ? '20 to 500 characters, kept in the audit log' : '1 to 500 characters, kept in the audit log'}
        value={reason}
        onChange={setReason}
        error={errorFor(error, 'reason')}
      />
      <FormAlert error={error} fields={['entitlementKey', 'reason', 'duration', 'env']} />
      {done && <Alert kind="info">{done}</Alert>}
      <button type="submit" className="primary">
        {action === 'grant' ? 'Grant' : 'Revoke'}
      </button>
    </form>
  );
}
