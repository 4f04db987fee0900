// Each rail: its settings (saved with the rail's PUT route), whether its secrets are present
// and when they last worked (test connection), the webhook URL to copy, and its notifications
// (time, type, decision), paged. The App Store panel also says how Apple refund requests are
// answered and lists the latest ones (time, customer, deadline, state).
import { useState } from 'react';
import type { components } from '../api/operator';
import { api, call } from '../api/client';
import { DataTable } from '../components/DataTable';
import { Alert, Field, Loaded, MutationStatus, Select, Status, errorFor } from '../components/ui';
import { useLoad } from '../components/useLoad';
import { useMutation } from '../components/useMutation';
import { Pager, useCursorPages } from '../components/useCursorPages';
import { useEnv } from '../env';
import { date } from '../format';
import { href } from '../router';
import { usePageTitle } from '../components/page';

type RailPanel = components['schemas']['RailPanelView'];
type Notification = components['schemas']['RailNotificationEntryView'];
type RefundRequest = components['schemas']['RefundRequestView'];
type Consumption = components['schemas']['ConsumptionSettingsView'];
type Rail = 'ios_store' | 'card_payments' | 'android_store';

const NAMES: Record<Rail, string> = { ios_store: 'iOS App Store', card_payments: 'Card payments', android_store: 'Google Play' };
const NOTIFICATIONS_PER_PAGE = 20;

const CONSUMPTION_MODES = ['off', 'manual', 'auto'] as const;
const REFUND_PREFERENCES = ['no_preference', 'decline', 'grant_full', 'grant_prorated'] as const;
const NO_CONSUMPTION: Consumption = { mode: 'off', customerConsented: false, refundPreference: 'no_preference', sampleContentProvided: false };

const present = (value: boolean | null) => (value === null ? 'not needed' : value ? 'present' : 'missing');

function CopyUrl({ url, rail }: { url: string; rail: string }) {
  const [copied, setCopied] = useState<'copied' | 'failed' | undefined>();
  return (
    <div className="copy-url">
      <code id={`webhook-${rail}`}>{url}</code>{' '}
      <button
        type="button"
        aria-describedby={`webhook-${rail}`}
        onClick={() =>
          navigator.clipboard.writeText(url).then(
            () => setCopied('copied'),
            () => setCopied('failed'),
          )
        }
      >
        Copy webhook URL
      </button>
      <span role="status" className="muted">
        {copied === 'copied' ? ' Copied.' : copied === 'failed' ? ' Could not copy: select the URL and copy it.' : ''}
      </span>
    </div>
  );
}

function SettingsForm({ projectId, rail, onSaved }: { projectId: string; rail: RailPanel; onSaved: (note: string) => void }) {
  const saved = (rail.settings ?? {}) as Record<string, unknown>;
  const text = (name: string) => (saved[name] === undefined || saved[name] === null ? '' : String(saved[name]));
  const [values, setValues] = useState<Record<string, string>>({
    bundleId: text('bundleId'),
    appAppleId: text('appAppleId'),
    packageName: text('packageName'),
    accountId: text('accountId'),
    gracePeriodDays: text('gracePeriodDays'),
  });
  const set = (name: string) => (value: string) => setValues({ ...values, [name]: value });
  // The PUT replaces the iOS settings: the refund-request answers are sent with the bundle id, or a save would reset them.
  const [consumption, setConsumption] = useState<Consumption>({ ...NO_CONSUMPTION, ...(saved.consumption as Partial<Consumption> | undefined) });
  const name = rail.rail as Rail;
  const save = useMutation(async () => {
    const path = { projectId };
    if (name === 'ios_store') {
      const appAppleId = values.appAppleId.trim();
      const roots = saved.trustedRootCertificates as string[] | undefined;
      await call(
        api.PUT('/admin/v1/projects/{projectId}/rails/ios_store', {
          params: { path },
          body: {
            bundleId: values.bundleId.trim(),
            ...(appAppleId ? { appAppleId: Number(appAppleId) } : {}),
            ...(roots?.length ? { trustedRootCertificates: roots } : {}),
            consumption,
          },
        }),
      );
    } else if (name === 'android_store') {
      await call(api.PUT('/admin/v1/projects/{projectId}/rails/android_store', { params: { path }, body: { packageName: values.packageName.trim() } }));
    } else {
      const accountId = values.accountId.trim();
      const graceDays = values.gracePeriodDays.trim();
      // The PUT replaces the card settings: the grace days are sent with the account id, or a save would reset them.
      await call(
        api.PUT('/admin/v1/projects/{projectId}/rails/card_payments', {
          params: { path },
          body: { ...(accountId ? { accountId } : {}), ...(graceDays ? { gracePeriodDays: Number(graceDays) } : {}) },
        }),
      );
    }
    // The note lives in the panel: the reload re-creates this form with the saved values.
    onSaved(`${NAMES[name]} settings saved; the rail is enabled.`);
  });
  const fields =
    name === 'ios_store'
      ? ['bundleId', 'appAppleId', 'consumption.mode', 'consumption.refundPreference']
      : name === 'android_store'
        ? ['packageName']
        : ['accountId', 'gracePeriodDays'];
  return (
    <form
      aria-label={`${NAMES[name]} settings`}
      noValidate
      onSubmit={(event) => {
        event.preventDefault();
        void save.run();
      }}
    >
      {name === 'ios_store' && (
        <>
          <Field label="Bundle id" name="bundleId" required value={values.bundleId} onChange={set('bundleId')} error={errorFor(save.error, 'bundleId')} />
          <Field
            label="App Apple id"
            name="appAppleId"
            hint="Optional; production notifications must carry it when set"
            value={values.appAppleId}
            onChange={set('appAppleId')}
            error={errorFor(save.error, 'appAppleId')}
          />
          {Array.isArray(saved.trustedRootCertificates) && (
            <p className="muted">{saved.trustedRootCertificates.length} trusted root certificate(s) configured through the API are kept.</p>
          )}
          <Select
            label="Refund requests"
            name="consumption.mode"
            value={consumption.mode}
            options={CONSUMPTION_MODES}
            onChange={(mode) => setConsumption({ ...consumption, mode: mode as Consumption['mode'] })}
            error={errorFor(save.error, 'consumption.mode')}
          />
          <Select
            label="Refund preference"
            name="consumption.refundPreference"
            value={consumption.refundPreference}
            options={REFUND_PREFERENCES}
            onChange={(preference) => setConsumption({ ...consumption, refundPreference: preference as Consumption['refundPreference'] })}
            error={errorFor(save.error, 'consumption.refundPreference')}
          />
          <label className="check">
            <input
              type="checkbox"
              checked={consumption.customerConsented}
              onChange={(event) => setConsumption({ ...consumption, customerConsented: event.target.checked })}
            />{' '}
            Customers consented to share consumption data (nothing is sent without it)
          </label>
          <label className="check">
            <input
              type="checkbox"
              checked={consumption.sampleContentProvided}
              onChange={(event) => setConsumption({ ...consumption, sampleContentProvided: event.target.checked })}
            />{' '}
            A free sample or trial was provided before purchase
          </label>
        </>
      )}
      {name === 'android_store' && (
        <Field
          label="Package name"
          name="packageName"
          required
          value={values.packageName}
          onChange={set('packageName')}
          error={errorFor(save.error, 'packageName')}
        />
      )}
      {name === 'card_payments' && (
        <>
          <Field
            label="Account id"
            name="accountId"
            hint="Optional, informational (acct_…)"
            value={values.accountId}
            onChange={set('accountId')}
            error={errorFor(save.error, 'accountId')}
          />
          <Field
            label="Grace days"
            name="gracePeriodDays"
            type="number"
            hint="Days of access after a failed renewal while the processor retries (0 to 30; empty: 0)"
            value={values.gracePeriodDays}
            onChange={set('gracePeriodDays')}
            error={errorFor(save.error, 'gracePeriodDays')}
          />
        </>
      )}
      <MutationStatus mutation={save} fields={fields} />
      <div className="actions">
        <button type="submit" className="primary" disabled={save.pending}>
          {rail.configured ? `Save ${NAMES[name]} settings` : `Enable ${NAMES[name]}`}
        </button>
      </div>
    </form>
  );
}

function Connection({ projectId, rail, onTested }: { projectId: string; rail: RailPanel; onTested: () => void }) {
  const env = useEnv();
  const [result, setResult] = useState<RailPanel['connection']>(rail.connection);
  const test = useMutation(
    async () => {
      const answer = await call(
        api.POST('/admin/v1/projects/{projectId}/rails/{rail}/test', { params: { path: { projectId, rail: rail.rail as Rail }, query: { env } } }),
      );
      setResult(answer);
    },
    { reload: onTested },
  );
  const shown = result ?? rail.connection;
  return (
    <div className="connection">
      <p>
        Secrets in the rail secrets file: webhook verification {present(rail.secrets.webhook)} · store API credentials {present(rail.secrets.read)}
      </p>
      <div role="status" aria-live="polite">
        {shown ? (
          <p>
            <Status value={shown.ok ? 'connected' : 'failed'} /> {shown.ok ? 'Connection works' : 'Connection failed'}: {shown.message}. Tested{' '}
            {date(shown.checkedAt)}; last worked {shown.lastWorkedAt ? date(shown.lastWorkedAt) : 'never'}.
          </p>
        ) : (
          <p className="muted">Connection not tested yet.</p>
        )}
      </div>
      <MutationStatus mutation={test} failed="Could not run the test" />
      <button type="button" onClick={() => void test.run()} disabled={test.pending}>
        {test.pending ? 'Testing…' : `Test ${NAMES[rail.rail as Rail]} connection`}
      </button>
    </div>
  );
}

function Notifications({ projectId, rail }: { projectId: string; rail: RailPanel }) {
  const env = useEnv();
  const first = { data: rail.notifications, nextCursor: rail.notificationsHasMore ? (rail.notifications[rail.notifications.length - 1]?.id ?? null) : null };
  const pages = useCursorPages(
    async (before) => {
      if (before === undefined) return first;
      const page = await call(
        api.GET('/admin/v1/projects/{projectId}/rails/{rail}/notifications', {
          params: { path: { projectId, rail: rail.rail as Rail }, query: { env, before, limit: String(NOTIFICATIONS_PER_PAGE) } },
        }),
      );
      return { data: page.data, nextCursor: page.hasMore ? (page.data[page.data.length - 1]?.id ?? null) : null };
    },
    [projectId, rail.rail, env, rail.notifications],
  );
  return (
    <Loaded load={pages.page} label="notifications">
      {(page) => (
        <>
          <DataTable<Notification>
            rows={page.data}
            rowKey={(n) => n.id}
            caption={`Notifications of ${NAMES[rail.rail as Rail]} in ${env}, newest first`}
            captionHidden
            stackNarrow
            empty="No notifications received in this environment yet."
            columns={[
              { header: 'Received', cell: (n) => date(n.receivedAt) },
              { header: 'Type', cell: (n) => <code>{n.type}</code> },
              { header: 'Decision', cell: (n) => <Status value={n.decision} /> },
              { header: 'Notification', cell: (n) => <code className="break">{n.id}</code> },
              {
                header: 'Customer',
                cell: (n) => (n.customerId ? <a href={href(`/p/${projectId}/customers/${encodeURIComponent(n.customerId)}`)}>{n.customerId}</a> : '—'),
              },
            ]}
          />
          <Pager
            label={`${NAMES[rail.rail as Rail]} notifications`}
            index={pages.index}
            nextCursor={page.nextCursor}
            onNext={pages.next}
            onPrevious={pages.previous}
          />
        </>
      )}
    </Loaded>
  );
}

function RefundRequests({ projectId }: { projectId: string }) {
  const env = useEnv();
  const requests = useLoad(
    () => call(api.GET('/admin/v1/projects/{projectId}/refund-requests', { params: { path: { projectId }, query: { env } } })),
    [projectId, env],
  );
  return (
    <Loaded load={requests} label="refund requests">
      {(list) => (
        <DataTable<RefundRequest>
          rows={list.data}
          rowKey={(r) => r.id}
          caption={`Apple refund requests in ${env}, newest first`}
          captionHidden
          stackNarrow
          empty="No refund requests in this environment."
          columns={[
            { header: 'Received', cell: (r) => date(r.receivedAt) },
            {
              header: 'Customer',
              cell: (r) => <a href={href(`/p/${projectId}/customers/${encodeURIComponent(r.serviceCustomerId)}`)}>{r.serviceCustomerId}</a>,
            },
            { header: 'Deadline', cell: (r) => date(r.deadline) },
            { header: 'State', cell: (r) => <Status value={r.state} /> },
          ]}
        />
      )}
    </Loaded>
  );
}

function Panel({ projectId, rail, reload }: { projectId: string; rail: RailPanel; reload: () => void }) {
  const name = NAMES[rail.rail as Rail] ?? rail.rail;
  const [savedNote, setSavedNote] = useState<string | undefined>(undefined);
  return (
    <section aria-labelledby={`rail-${rail.rail}`} className="card">
      <h2 id={`rail-${rail.rail}`}>
        {name} <Status value={rail.configured ? 'enabled' : 'disabled'} />
      </h2>
      <h3>Settings</h3>
      <SettingsForm
        key={JSON.stringify(rail.settings)}
        projectId={projectId}
        rail={rail}
        onSaved={(note) => {
          setSavedNote(note);
          reload();
        }}
      />
      {savedNote && <Alert kind="info">{savedNote}</Alert>}
      <h3>Webhook URL</h3>
      <p className="muted">Paste it into the store's console.</p>
      <CopyUrl url={rail.webhookUrl} rail={rail.rail} />
      <h3>Credentials</h3>
      <Connection projectId={projectId} rail={rail} onTested={() => undefined} />
      <h3>Notifications</h3>
      <Notifications projectId={projectId} rail={rail} />
      {rail.rail === 'ios_store' && (
        <>
          <h3>Refund requests</h3>
          <RefundRequests projectId={projectId} />
        </>
      )}
    </section>
  );
}

export function Rails({ projectId }: { projectId: string }) {
  usePageTitle('Rails');
  const env = useEnv();
  const rails = useLoad(() => call(api.GET('/admin/v1/projects/{projectId}/rails', { params: { path: { projectId }, query: { env } } })), [projectId, env]);
  return (
    <>
      <h1>Rails</h1>
      <Loaded load={rails} label="rails">
        {(list) =>
          list.rails.length === 0 ? (
            <Alert kind="info">No rails.</Alert>
          ) : (
            list.rails.map((rail) => <Panel key={rail.rail} projectId={projectId} rail={rail} reload={rails.reload} />)
          )
        }
      </Loaded>
    </>
  );
}
