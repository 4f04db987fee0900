// The project's overview: revenue today, this month and last month and the current figures (one
// call), then the read API's charts of a range, granularity and split (one call for all of them).
// A null figure or period is "not measured", never 0.
import { Suspense, lazy, useState } from 'react';
import { api, call } from '../api/client';
import { CHART_SPECS, type ChartAnswer, type Granularity, OVERVIEW_CHARTS, PRESETS, type Segment, presetOf, presetRange, rangeError, today } from '../charts';
import { Field, Loaded } from '../components/ui';
import { useLoad } from '../components/useLoad';
import { usePageTitle } from '../components/page';
import { useEnv } from '../env';
import { measured, money } from '../format';

// The charting library is loaded with the overview only (its own chunk), not with every page.
const OverviewChart = lazy(() => import('./OverviewChart').then((module) => ({ default: module.OverviewChart })));

function Figure({ label, value, detail }: { label: string; value: string; detail?: string }) {
  return (
    <div className="figure">
      <dt>{label}</dt>
      <dd className={value === 'not measured' ? 'muted' : undefined}>{value}</dd>
      {detail && <dd className="figure-detail">{detail}</dd>}
    </div>
  );
}

interface RevenueFigures {
  grossCents: number | null;
  refundsCents: number | null;
  netCents: number | null;
}

function RevenueFigure({ label, figures, currency }: { label: string; figures: RevenueFigures; currency: string }) {
  return (
    <Figure
      label={label}
      value={money(figures.grossCents, currency)}
      detail={`Refunds ${money(figures.refundsCents, currency)} · Net ${money(figures.netCents, currency)}`}
    />
  );
}

const GRANULARITIES: Granularity[] = ['day', 'week', 'month'];
const SEGMENTS: { value: Segment; label: string }[] = [
  { value: 'none', label: 'Not split' },
  { value: 'rail', label: 'By rail' },
  { value: 'product', label: 'By product' },
];

export function Overview({ projectId }: { projectId: string }) {
  usePageTitle('Overview');
  const env = useEnv();
  const day = today(Date.now());
  const [range, setRange] = useState(() => presetRange(30, day));
  const [draft, setDraft] = useState(range);
  const [granularity, setGranularity] = useState<Granularity>('day');
  const [segment, setSegment] = useState<Segment>('none');
  const error = rangeError(draft);

  const overview = useLoad(
    () => call(api.GET('/admin/v1/projects/{projectId}/overview', { params: { path: { projectId }, query: { env } } })),
    [projectId, env],
  );
  const charts = useLoad(
    () =>
      call(
        api.GET('/admin/v1/projects/{projectId}/charts', {
          params: { path: { projectId }, query: { env, charts: OVERVIEW_CHARTS.join(','), from: range.from, to: range.to, granularity, segment } },
        }),
      ),
    [projectId, env, range.from, range.to, granularity, segment],
  );

  const choose = (next: { from: string; to: string }) => {
    setDraft(next);
    if (!rangeError(next)) setRange(next);
  };
  const preset = presetOf(range, day);

  return (
    <>
      <h1>Overview</h1>
      <Loaded load={overview} label="the overview">
        {(data) => (
          <dl className="figures" aria-label="Figures">
            <RevenueFigure label="Revenue today" figures={data.revenue.today} currency={data.revenue.currency} />
            <RevenueFigure label="Revenue this month" figures={data.revenue.thisMonth} currency={data.revenue.currency} />
            <RevenueFigure label="Revenue last month" figures={data.revenue.lastMonth} currency={data.revenue.currency} />
            <Figure label="MRR" value={money(data.mrrCents, data.currency)} />
            <Figure label="Paying customers" value={measured(data.payingCustomers)} />
            <Figure label="Open error issues" value={measured(data.openErrorIssues)} />
            <Figure label="Dead jobs" value={measured(data.deadJobs)} />
          </dl>
        )}
      </Loaded>

      <h2 className="charts-heading">Charts</h2>
      <form className="chart-controls" aria-label="Chart range" onSubmit={(event) => event.preventDefault()}>
        <fieldset className="presets">
          <legend>Range</legend>
          {PRESETS.map((days) => (
            <button key={days} type="button" aria-pressed={preset === days} onClick={() => choose(presetRange(days, day))}>
              {days} days
            </button>
          ))}
        </fieldset>
        <Field
          label="From"
          name="from"
          type="date"
          value={draft.from}
          onChange={(from) => choose({ ...draft, from })}
          error={error?.field === 'from' ? error.message : undefined}
        />
        <Field
          label="To"
          name="to"
          type="date"
          value={draft.to}
          onChange={(to) => choose({ ...draft, to })}
          error={error?.field === 'to' ? error.message : undefined}
        />
        <fieldset className="segmented">
          <legend>Per</legend>
          {GRANULARITIES.map((g) => (
            <label key={g}>
              <input type="radio" name="granularity" value={g} checked={granularity === g} onChange={() => setGranularity(g)} /> {g}
            </label>
          ))}
        </fieldset>
        <div className="field">
          <label htmlFor="chart-segment">Split</label>
          <select id="chart-segment" name="segment" value={segment} onChange={(event) => setSegment(event.target.value as Segment)}>
            {SEGMENTS.map((s) => (
              <option key={s.value} value={s.value}>
                {s.label}
              </option>
            ))}
          </select>
        </div>
      </form>
      {segment !== 'none' && <p className="muted">MRR, revenue and active subscriptions split; the other charts show the whole.</p>}
      <Loaded load={charts} label="the charts">
        {(answer) => {
          const byChart = answer.data as Record<string, ChartAnswer | undefined>;
          return (
            <Suspense
              fallback={
                <p className="muted" role="status">
                  Loading the charts…
                </p>
              }
            >
              <div className="chart-grid">
                {CHART_SPECS.map((spec) => {
                  const chart = byChart[spec.chart];
                  return chart ? <OverviewChart key={spec.chart} spec={spec} answer={chart} /> : null;
                })}
              </div>
            </Suspense>
          );
        }}
      </Loaded>
    </>
  );
}
