// The project's figures (the read API's): MRR, paying customers, active subscriptions by rail,
// events today, open error issues, dead jobs, and a daily MRR chart. A null figure: "not measured".
import { api, call } from '../api/client';
import { Empty, Loaded } from '../components/ui';
import { useLoad } from '../components/useLoad';
import { useEnv } from '../env';
import { measured, money } from '../format';
import { MrrChart } from './MrrChart';
import { usePageTitle } from '../components/page';

function Figure({ label, value }: { label: string; value: string }) {
  return (
    <div className="figure">
      <dt>{label}</dt>
      <dd className={value === 'not measured' ? 'muted' : undefined}>{value}</dd>
    </div>
  );
}

export function Overview({ projectId }: { projectId: string }) {
  usePageTitle('Overview');
  const env = useEnv();
  const overview = useLoad(
    () => call(api.GET('/admin/v1/projects/{projectId}/overview', { params: { path: { projectId }, query: { env } } })),
    [projectId, env],
  );
  return (
    <>
      <h1>Overview</h1>
      <Loaded load={overview} label="the overview">
        {(data) => {
          const series = data.mrrSeries;
          const byRail = Object.entries(data.activeSubscriptionsByRail);
          return (
            <>
              <dl className="figures">
                <Figure label="MRR" value={money(data.mrrCents, data.currency)} />
                <Figure label="Paying customers" value={measured(data.payingCustomers)} />
                <Figure label="Events today" value={measured(data.eventsToday)} />
                <Figure label="Open error issues" value={measured(data.openErrorIssues)} />
                <Figure label="Dead jobs" value={measured(data.deadJobs)} />
                {byRail.map(([rail, count]) => (
                  <Figure key={rail} label={`Active subscriptions: ${rail}`} value={measured(count)} />
                ))}
                {byRail.length === 0 && <Figure label="Active subscriptions" value="not measured" />}
              </dl>
              <h2>Daily MRR</h2>
              {series.length === 0 ? <Empty>No MRR history yet.</Empty> : <MrrChart series={series} currency={data.currency} />}
            </>
          );
        }}
      </Loaded>
    </>
  );
}
