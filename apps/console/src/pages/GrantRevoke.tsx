// Manual grant and revoke in the console's environment, with the reason the audit entry keeps.
// The API's rules are checked as you type: key in snake_case, a grant's reason 20 to 500
// characters, a revoke's 1 to 500; the service's own answer is shown next to its field. A revoke
// ends the entitlement at once: it is confirmed first.
import { useState } from 'react';
import { ApiFailure, api, call } from '../api/client';
import { ConfirmDialog } from '../components/dialogs';
import { Field, MutationStatus, Select, errorFor } from '../components/ui';
import { useMutation } from '../components/useMutation';
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
  const write = useMutation(
    async () => {
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
      setReason('');
      return action === 'grant' ? `Granted ${entitlementKey} in ${env}.` : `Revoked ${entitlementKey} in ${env}.`;
    },
    { reload: onDone },
  );
  const error = write.error;
  const [confirming, setConfirming] = useState(false);
  const submit = () => {
    const invalid = check(action, entitlementKey, reason);
    if (invalid) return write.fail(invalid);
    if (action === 'revoke') return setConfirming(true);
    void write.run();
  };
  return (
    <>
      <form
        aria-labelledby="grant-revoke"
        noValidate
        onSubmit={(event) => {
          event.preventDefault();
          submit();
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
        <MutationStatus mutation={write} fields={['entitlementKey', 'reason', 'duration', 'env']} />
        <button type="submit" className="primary" disabled={write.pending}>
          {action === 'grant' ? 'Grant' : 'Revoke'}
        </button>
      </form>
      {confirming && (
        <ConfirmDialog
          title={`Revoke ${entitlementKey} from ${customerId} in ${env}?`}
          action="Revoke entitlement"
          onConfirm={() => write.run()}
          onClose={() => setConfirming(false)}
        >
          <p>The customer loses {entitlementKey} at once; the reason is kept in the audit log. A new grant is the only way back.</p>
        </ConfirmDialog>
      )}
    </>
  );
}
