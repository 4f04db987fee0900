// A small SVG bar chart (presentation attributes only: the CSP forbids inline styles).
import { money } from '../format';

export function MrrChart({ series, currency }: { series: { day: string; mrr: number | null }[]; currency?: string }) {
  const width = 600;
  const height = 160;
  const max = Math.max(1, ...series.map((point) => point.mrr ?? 0));
  const step = width / series.length;
  const last = series[series.length - 1];
  return (
    <figure className="chart">
      <svg viewBox={`0 0 ${width} ${height}`} role="img" aria-label={`Daily MRR over ${series.length} days, latest ${money(last?.mrr, currency)}`}>
        {series.map((point, index) => {
          const barHeight = ((point.mrr ?? 0) / max) * (height - 10);
          return (
            <rect key={point.day} x={index * step + 1} y={height - barHeight} width={Math.max(1, step - 2)} height={barHeight} className="bar">
              <title>
                {point.day}: {money(point.mrr, currency)}
              </title>
            </rect>
          );
        })}
      </svg>
      <figcaption>
        {series[0]?.day} to {last?.day}
      </figcaption>
    </figure>
  );
}
