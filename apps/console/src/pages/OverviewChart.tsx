// One overview chart (recharts): axes with units, values on hover, and the same values as a table
// with a caption for screen readers, keyboards and reading. Null periods are gaps in the drawing and "not measured" in the table, never 0.
// The plot is one tab stop: arrow keys, Home and End step through the periods, showing the hover
// tooltip at the period and announcing its values (a polite live region).
import { type KeyboardEvent, type ReactNode, useId, useRef, useState } from 'react';
import { createPortal } from 'react-dom';
import {
  Bar,
  CartesianGrid,
  ComposedChart,
  Legend,
  Line,
  ReferenceLine,
  ResponsiveContainer,
  Tooltip,
  XAxis,
  YAxis,
  usePlotArea,
  useXAxisScale,
} from 'recharts';
import {
  type ChartAnswer,
  type ChartSpec,
  type Drawn,
  type Row,
  type Unit,
  drawnSeries,
  formatTick,
  formatValue,
  keyTarget,
  periodLabel,
  periodName,
  rowsOf,
  unitLabel,
} from '../charts';

/** Series colours: the stylesheet's chart roles, light and dark. */
const COLOURS = ['var(--chart-1)', 'var(--chart-2)', 'var(--chart-3)', 'var(--chart-4)', 'var(--chart-5)', 'var(--chart-6)'];
const colourOf = (index: number) => COLOURS[index % COLOURS.length];
const unitOf = (spec: ChartSpec, s: Drawn): Unit => (s.right && spec.rightUnit ? spec.rightUnit : spec.unit);
/** Rates are 0–1: their axis ends at the largest rate drawn (100% at most), counts and money where recharts rounds to. */
const domainOf = (unit: Unit): [number, number | ((max: number) => number)] | undefined =>
  unit === 'percent' ? [0, (max: number) => (max > 0 ? Math.min(1, max) : 1)] : undefined;

interface TooltipProps {
  active?: boolean;
  label?: string | number;
  spec: ChartSpec;
  drawn: Drawn[];
  rows: Row[];
  currency?: string;
  granularity: string;
}

/** A period's values as one sentence (what the live region announces). */
function pointSentence(row: Row, spec: ChartSpec, drawn: Drawn[], granularity: string, currency?: string): string {
  const values = drawn.map((s) => `${s.label} ${formatValue(row[s.dataKey] as number | null, unitOf(spec, s), currency)}`).join(', ');
  return `${periodName(row.period, granularity)}: ${values}`;
}

/**
 * Inside the chart: the keyboard's period as the hover shows it, a cursor over the period and
 * the tooltip beside it (in the plot's box, where recharts puts its own).
 */
function KeyboardPoint({ row, host, tooltip }: { row: Row; host: HTMLElement; tooltip: ReactNode }) {
  const scale = useXAxisScale();
  const plot = usePlotArea();
  if (!scale || !plot) return null;
  const x = scale(row.period, { position: 'middle' });
  if (x === undefined) return null;
  const leftHalf = x - plot.x < plot.width / 2;
  return (
    <>
      <line
        className="chart-key-cursor"
        x1={x}
        x2={x}
        y1={plot.y}
        y2={plot.y + plot.height}
        stroke="var(--focus)"
        strokeWidth={2}
        strokeDasharray="4 3"
        pointerEvents="none"
      />
      {createPortal(
        <div
          className="chart-key-tooltip"
          style={{ left: leftHalf ? x + 12 : undefined, right: leftHalf ? undefined : host.clientWidth - x + 12, top: plot.y }}
        >
          {tooltip}
        </div>,
        host,
      )}
    </>
  );
}

/** The hovered period's values, every series named, null as "not measured". */
function ChartTooltip({ active, label, spec, drawn, rows, currency, granularity }: TooltipProps) {
  if (!active || label === undefined) return null;
  const row = rows.find((r) => r.period === label);
  if (!row) return null;
  return (
    <div className="chart-tooltip">
      <p className="chart-tooltip-period">{periodName(String(label), granularity)}</p>
      <ul>
        {drawn.map((s, i) => {
          const value = row[s.dataKey] as number | null;
          return (
            <li key={s.dataKey}>
              <svg width="10" height="10" aria-hidden="true" focusable="false">
                <rect width="10" height="10" fill={colourOf(i)} />
              </svg>{' '}
              {s.label}: <strong className={value === null ? 'muted' : undefined}>{formatValue(value, unitOf(spec, s), currency)}</strong>
            </li>
          );
        })}
      </ul>
    </div>
  );
}

export function OverviewChart({ spec, answer }: { spec: ChartSpec; answer: ChartAnswer }) {
  const id = useId();
  const drawn = drawnSeries(spec, answer);
  const rows = rowsOf(answer, drawn);
  const currency = answer.currency;
  const granularity = answer.granularity;
  const right = drawn.some((s) => s.right);
  const hasNull = rows.some((row) => drawn.some((s) => row[s.dataKey] === null));
  const noneMeasured = rows.every((row) => drawn.every((s) => row[s.dataKey] === null));
  const titleId = `${id}-title`;
  const range = rows.length ? `${periodName(rows[0].period, granularity)} to ${periodName(rows[rows.length - 1].period, granularity)}` : '';
  const plotRef = useRef<HTMLDivElement>(null);
  // The keyboard's period (an index of rows) and whether its tooltip shows (hidden by Escape, the mouse or leaving).
  const [point, setPoint] = useState<number | null>(null);
  const [shown, setShown] = useState(false);
  const [announced, setAnnounced] = useState('');
  const at = point !== null && point < rows.length ? point : null;
  const moveTo = (index: number) => {
    setPoint(index);
    setShown(true);
    setAnnounced(pointSentence(rows[index], spec, drawn, granularity, currency));
  };
  const onKeyDown = (event: KeyboardEvent<HTMLDivElement>) => {
    if (event.altKey || event.ctrlKey || event.metaKey || rows.length === 0) return;
    if (event.key === 'Escape') {
      if (shown) event.preventDefault();
      setShown(false);
      return;
    }
    const target = keyTarget(event.key, at ?? rows.length - 1, rows.length);
    if (target === undefined) return;
    event.preventDefault();
    moveTo(target);
  };
  const tooltipOf = (row: Row) => (
    <ChartTooltip active label={row.period} spec={spec} drawn={drawn} rows={rows} currency={currency} granularity={granularity} />
  );
  return (
    <section className="chart-card" aria-labelledby={titleId} data-chart={spec.chart}>
      <h2 id={titleId}>{spec.title}</h2>
      {drawn.length === 0 ? (
        <p className="muted">Nothing to split yet: no {answer.segment === 'rail' ? 'rail' : 'product'} has figures in this range.</p>
      ) : (
        <div
          className="chart-plot"
          ref={plotRef}
          tabIndex={0}
          role="application"
          aria-roledescription="chart"
          aria-label={`${spec.title}, ${range}`}
          aria-describedby={`${id}-keys`}
          onKeyDown={onKeyDown}
          // Focus shows the latest period (the one operators read first); the mouse takes over from the keyboard.
          onFocus={(event) => event.target === event.currentTarget && rows.length > 0 && moveTo(at ?? rows.length - 1)}
          onBlur={() => setShown(false)}
          onMouseMove={() => shown && setShown(false)}
        >
          <ResponsiveContainer width="100%" height={260}>
            <ComposedChart
              accessibilityLayer={false}
              data={rows}
              margin={{ top: 8, right: right ? 8 : 16, bottom: 0, left: 8 }}
              stackOffset="sign"
              title={`${spec.title}, ${range}`}
              desc="The table below the chart lists every value."
            >
              <CartesianGrid stroke="var(--line)" strokeDasharray="3 3" vertical={false} />
              <XAxis
                dataKey="period"
                tickFormatter={(period: string) => periodLabel(period, granularity)}
                stroke="var(--muted)"
                tick={{ fill: 'var(--muted)', fontSize: 12 }}
                minTickGap={16}
              />
              <YAxis
                yAxisId="left"
                tickFormatter={(value: number) => formatTick(value, spec.unit, currency)}
                stroke="var(--muted)"
                tick={{ fill: 'var(--muted)', fontSize: 12 }}
                width={64}
                allowDecimals={spec.unit !== 'count'}
                domain={domainOf(spec.unit)}
                label={{ value: unitLabel(spec.unit, currency), angle: -90, position: 'insideLeft', fill: 'var(--muted)', fontSize: 12 }}
              />
              {right && spec.rightUnit && (
                <YAxis
                  yAxisId="right"
                  orientation="right"
                  tickFormatter={(value: number) => formatTick(value, spec.rightUnit!, currency)}
                  stroke="var(--muted)"
                  tick={{ fill: 'var(--muted)', fontSize: 12 }}
                  width={64}
                  allowDecimals={spec.rightUnit !== 'count'}
                  domain={domainOf(spec.rightUnit)}
                  label={{ value: unitLabel(spec.rightUnit, currency), angle: 90, position: 'insideRight', fill: 'var(--muted)', fontSize: 12 }}
                />
              )}
              {spec.chart === 'mrr' && answer.segment === 'none' && <ReferenceLine yAxisId="left" y={0} stroke="var(--muted)" />}
              <Tooltip
                // While the keyboard's tooltip shows, the hover's stays hidden (one tooltip at a time).
                active={shown && at !== null ? false : undefined}
                content={<ChartTooltip spec={spec} drawn={drawn} rows={rows} currency={currency} granularity={granularity} />}
                cursor={{ fill: 'var(--bg)', stroke: 'var(--line)' }}
              />
              <Legend itemSorter={null} />
              {drawn.map((s, i) =>
                s.kind === 'bar' ? (
                  <Bar
                    key={s.dataKey}
                    yAxisId={s.right ? 'right' : 'left'}
                    dataKey={`plot:${s.dataKey}`}
                    name={s.label}
                    fill={colourOf(i)}
                    stackId={s.stack}
                    isAnimationActive={false}
                  />
                ) : (
                  <Line
                    key={s.dataKey}
                    yAxisId={s.right ? 'right' : 'left'}
                    dataKey={`plot:${s.dataKey}`}
                    name={s.label}
                    stroke={colourOf(i)}
                    strokeWidth={2}
                    dot={rows.length <= 31 ? { r: 2, fill: colourOf(i) } : false}
                    connectNulls={false}
                    type="linear"
                    isAnimationActive={false}
                  />
                ),
              )}
              {shown && at !== null && plotRef.current && <KeyboardPoint row={rows[at]} host={plotRef.current} tooltip={tooltipOf(rows[at])} />}
            </ComposedChart>
          </ResponsiveContainer>
          <p id={`${id}-keys`} className="visually-hidden">
            Left and right arrow keys step through the {granularity}s, Home and End go to the first and the last; Escape hides the values.
          </p>
        </div>
      )}
      <p className="visually-hidden" role="status" aria-live="polite">
        {announced}
      </p>
      {noneMeasured ? (
        <p className="chart-note muted">Not measured in this range: nothing is drawn, and nothing is zero.</p>
      ) : (
        hasNull && <p className="chart-note muted">Gaps are periods not measured (not zero).</p>
      )}
      <details className="chart-table">
        <summary>Table: {spec.title}</summary>
        <table tabIndex={0}>
          <caption>
            {spec.title} per {granularity}, {range}
            {spec.unit === 'money' && currency ? ` (${currency})` : ''}
          </caption>
          <thead>
            <tr>
              <th scope="col">Period</th>
              {drawn.map((s) => (
                <th scope="col" key={s.dataKey}>
                  {s.label}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {rows.map((row) => (
              <tr key={row.period}>
                <th scope="row">{periodName(row.period, granularity)}</th>
                {drawn.map((s) => {
                  const value = row[s.dataKey] as number | null;
                  return (
                    <td key={s.dataKey} className={value === null ? 'not-measured' : 'num'}>
                      {value === null ? (
                        <>
                          <span aria-hidden="true">—</span>
                          <span className="visually-hidden">not measured</span>
                        </>
                      ) : (
                        formatValue(value, unitOf(spec, s), currency)
                      )}
                    </td>
                  );
                })}
              </tr>
            ))}
          </tbody>
        </table>
      </details>
    </section>
  );
}
