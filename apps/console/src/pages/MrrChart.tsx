// A small SVG bar chart (presentation attributes only: the CSP forbids inline styles).
import { money } from '../format';

export function MrrChart({ series, currency }: { series: { date: string; mrrCents: number | null }[]; currency?: string }) {
  const width = 600;
  const height = 160;
  const max = Math.max(1, ...series.map((point) => point.mrrCents ?? 0));
  const step = width / series.length;
  const last = series[series.length - 1];
  return (
    <figure className="chart">
      <svg viewBox={`0 0 ${width} ${height}`} role="img" aria-label={`Daily MRR over ${series.length} days, latest ${money(last?.mrrCents, currency)}`}>
        {series.map((point, index) => {
          const barHeight = ((point.mrrCents ?? 0) / max) * (height - 10);
          return (
            <rect key={point.date} x={index * step + 1} y={height - barHeight} width={Math.max(1, step - 2)} height={barHeight} className="bar">
              <title>
                {point.date}: {money(point.mrrCents, currency)}
              </title>
            </rect>
          );
        })}
      </svg>
      <figcaption>
        {series[0]?.date} to {last?.date}
      </figcaption>
    </figure>
  );
}
