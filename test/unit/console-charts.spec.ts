import {
  CHART_SPECS,
  type ChartAnswer,
  drawnSeries,
  formatTick,
  formatValue,
  keyTarget,
  periodLabel,
  presetOf,
  presetRange,
  rangeError,
  rowsOf,
} from '../../apps/console/src/charts.js';

const spec = (chart: string) => CHART_SPECS.find((s) => s.chart === chart)!;

describe('operator console charts', () => {
  it('presets are the N days ending today; a typed range is checked and names its field', () => {
    expect(presetRange(7, '2026-12-07')).toEqual({ from: '2026-12-01', to: '2026-12-07' });
    expect(presetRange(365, '2026-12-07').from).toBe('2025-12-08');
    expect(presetOf({ from: '2026-11-08', to: '2026-12-07' }, '2026-12-07')).toBe(30);
    expect(presetOf({ from: '2026-11-09', to: '2026-12-07' }, '2026-12-07')).toBeUndefined();
    expect(rangeError({ from: '2026-12-01', to: '2026-12-07' })).toBeUndefined();
    expect(rangeError({ from: '2026-12-08', to: '2026-12-07' })).toEqual({ field: 'from', message: 'From must be on or before To' });
    expect(rangeError({ from: '', to: '2026-12-07' })?.field).toBe('from');
    expect(rangeError({ from: '2026-12-01', to: '2026-13-01' })?.field).toBe('to');
    expect(rangeError({ from: '2024-12-06', to: '2026-12-07' })?.message).toMatch(/731/);
  });

  it('null stays null (not measured), never 0; movements that lower MRR are drawn below the axis', () => {
    const answer: ChartAnswer = {
      chart: 'mrr',
      currency: 'USD',
      granularity: 'day',
      segment: 'none',
      series: [
        {
          period: '2026-12-06',
          values: { mrrCents: null, newCents: null, expansionCents: null, contractionCents: null, churnedCents: null, reactivationCents: null },
        },
        { period: '2026-12-07', values: { mrrCents: 1500, newCents: 2000, expansionCents: 0, contractionCents: 0, churnedCents: 500, reactivationCents: 0 } },
      ],
      summary: {},
    };
    const drawn = drawnSeries(spec('mrr'), answer);
    const rows = rowsOf(answer, drawn);
    expect(rows[0].mrrCents).toBeNull();
    expect(rows[0]['plot:mrrCents']).toBeNull();
    expect(rows[1].churnedCents).toBe(500);
    expect(rows[1]['plot:churnedCents']).toBe(-500);
    expect(rows[1]['plot:expansionCents']).toBe(0);
    expect(formatValue(null, 'money')).toBe('not measured');
    expect(formatValue(0, 'money')).toBe('$0.00');
  });

  it('a split draws the split value per rail or product; charts that do not split keep their series', () => {
    const answer: ChartAnswer = {
      chart: 'revenue',
      currency: 'EUR',
      granularity: 'month',
      segment: 'rail',
      series: [{ period: '2026-12-01', values: { grossCents: 900 }, segments: { ios_store: { grossCents: 0 }, card_payments: { grossCents: 900 } } }],
      summary: {},
    };
    const drawn = drawnSeries(spec('revenue'), answer);
    expect(drawn.map((s) => s.label)).toEqual(['Gross: App Store', 'Gross: Card payments']);
    expect(rowsOf(answer, drawn)[0]).toEqual(expect.objectContaining({ 'seg:ios_store': 0, 'seg:card_payments': 900 }));
    expect(drawnSeries(spec('events'), { ...answer, chart: 'events' }).map((s) => s.key)).toEqual(['events', 'errors', 'uniqueUsers']);
  });

  it('units: money from cents in the currency, rates as percentages, periods named for their granularity', () => {
    expect(formatValue(123456, 'money', 'EUR')).toBe('€1,234.56');
    expect(formatValue(0.125, 'percent')).toBe('12.5%');
    expect(formatValue(1234, 'count')).toBe('1,234');
    expect(formatTick(250_000_00, 'money')).toBe('$250K');
    expect(formatTick(0.5, 'percent')).toBe('50%');
    expect(periodLabel('2026-12-07', 'day')).toBe('Dec 7');
    expect(periodLabel('2026-12-01', 'month')).toBe('Dec 2026');
  });

  it('keys step a chart’s reading one period at a time, stopping at the ends; Home and End jump', () => {
    expect(keyTarget('ArrowLeft', 5, 30)).toBe(4);
    expect(keyTarget('ArrowRight', 5, 30)).toBe(6);
    expect(keyTarget('ArrowDown', 5, 30)).toBe(4);
    expect(keyTarget('ArrowUp', 5, 30)).toBe(6);
    expect(keyTarget('ArrowLeft', 0, 30)).toBe(0);
    expect(keyTarget('ArrowRight', 29, 30)).toBe(29);
    expect(keyTarget('Home', 17, 30)).toBe(0);
    expect(keyTarget('End', 3, 30)).toBe(29);
    expect(keyTarget('Enter', 3, 30)).toBeUndefined();
    expect(keyTarget('a', 3, 30)).toBeUndefined();
  });
});
