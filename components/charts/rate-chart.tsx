'use client';
import { useMemo, useRef, useState } from 'react';
import type uPlot from 'uplot';
import { count, utc } from '@/lib/dashboard/format';
import type { TrendSeries, Trends } from '@/lib/dashboard/trends';
import { useLiveQuery } from '../providers';
import { RangePicker, rangeLabel } from '../range-picker';
import { themeOf, useUPlot, utcDate } from './use-uplot';
import { statsPath } from '../client/stats';

export const MEASURE_STYLE = {
  pushed: { label: 'Pushed', color: '#0284c7' },
  delivered: { label: 'Delivered', color: '#7c3aed' },
  acked: { label: 'Acked', color: '#059669' },
  failed: { label: 'Failed', color: '#dc2626' },
  lag: { label: 'Lag', color: '#d97706' },
} as const;

const RATES = ['pushed', 'delivered', 'acked', 'failed'] as const;

/** "0.35/s", "12.4/s", "1,250/s" */
export function perSecond(n: number | null | undefined): string {
  if (n === null || n === undefined) return '—';
  return `${n >= 100 ? count(Math.round(n)) : n >= 10 ? n.toFixed(1) : n.toFixed(2)}/s`;
}

/** The x range: the window asked for, ending at the server's time, however few samples it holds. */
export function useXRange(data: Trends | undefined) {
  const xRange = useRef<[number, number]>([0, 1]);
  const end = (data ? Date.parse(data.now) : Date.now()) / 1000;
  xRange.current = [end - (data?.minutes ?? 60) * 60, end];
  return xRange;
}

/** The columns of one series in uPlot's order: time, the four rates, lag. */
export function alignedOf(series: TrendSeries | undefined): uPlot.AlignedData {
  if (!series) return [[], [], [], [], [], []];
  return [series.at, series.pushed, series.delivered, series.acked, series.failed, series.lag];
}

function options(
  width: number,
  dark: boolean,
  xRange: { current: [number, number] },
  onCursor: (idx: number | null) => void,
): uPlot.Options {
  const theme = themeOf(dark);
  const axis = { stroke: theme.text, grid: { stroke: theme.grid, width: 1 }, ticks: { stroke: theme.grid, width: 1 } };
  return {
    width,
    height: width < 640 ? 160 : 240, // on a phone the table below stays within reach
    tzDate: utcDate,
    legend: { show: false },
    scales: {
      x: { time: true, range: () => xRange.current },
      rate: { range: (_u, _min, max) => [0, Math.max(max, 1)] },
      lag: { range: (_u, _min, max) => [0, Math.max(max, 1)] },
    },
    series: [
      {},
      ...RATES.map((m) => ({ label: MEASURE_STYLE[m].label, stroke: MEASURE_STYLE[m].color, width: 2, scale: 'rate' })),
      { label: MEASURE_STYLE.lag.label, stroke: MEASURE_STYLE.lag.color, width: 2, dash: [6, 4], scale: 'lag' },
    ],
    axes: [
      {
        ...axis,
        label: 'UTC',
        values: (_u, ticks) => ticks.map((t) => new Date(t * 1000).toISOString().slice(11, 16)),
      },
      { ...axis, scale: 'rate', label: 'per second' },
      {
        ...axis,
        scale: 'lag',
        side: 1,
        label: 'lag (messages)',
        grid: { show: false },
        values: (_u, ticks) => ticks.map((t) => (Number.isInteger(t) ? count(t) : '')),
      },
    ],
    hooks: { setCursor: [(u) => onCursor(u.cursor.idx ?? null)] },
  };
}

/**
 * Pushed, delivered, acked and failed per second and lag over the last hour, for a queue as a
 * whole (its groups summed, lag the largest of any group) or for one group. The legend shows the
 * values under the cursor, else the latest.
 */
export function RateChart({ queue, group }: { queue: string; group?: string | null }) {
  const [minutes, setMinutes] = useState(60);
  const qs = new URLSearchParams(group ? { queue, group } : { queue });
  if (minutes !== 60) qs.set('minutes', String(minutes));
  // past an hour, a point per bucket: 24 h of 15 s samples would be 5,760 points
  if (minutes > 60) qs.set('points', '240');
  const { data, error } = useLiveQuery<Trends>(['stats', queue, group ?? null, minutes], statsPath(qs));
  const series = data?.series.find((s) => s.group === (group ?? null));
  const aligned = useMemo(() => alignedOf(series), [series]);
  const [cursor, setCursor] = useState<number | null>(null);
  const xRange = useXRange(data);
  const element = useUPlot((width, dark) => options(width, dark, xRange, setCursor), aligned, []);
  const idx = cursor ?? (series ? series.at.length - 1 : -1);
  const at = series?.at[idx];
  return (
    <section
      aria-label={`Rates over the last ${rangeLabel(minutes)}`}
      className="space-y-2 rounded border border-zinc-200 p-3 dark:border-zinc-800"
    >
      <div className="flex flex-wrap items-baseline justify-between gap-2">
        <h2 className="text-sm font-semibold">
          Rates, last {rangeLabel(minutes)} ·{' '}
          {group ? (
            <>
              group <span className="font-mono">{group}</span>
            </>
          ) : (
            'all groups (lag: the largest)'
          )}
        </h2>
        <RangePicker minutes={minutes} onChange={setMinutes} label="Rate chart range" />
        <span className="text-xs text-muted">
          {at === undefined
            ? 'no samples yet'
            : `${cursor === null ? 'latest' : 'at'} ${utc(new Date(at * 1000).toISOString())}`}
          {data ? ` · sampled every ${data.sampleSeconds} s` : ''}
        </span>
      </div>
      <ul className="flex flex-wrap gap-x-4 gap-y-1 text-sm" data-testid="rate-legend">
        {([...RATES, 'lag'] as const).map((m) => {
          const value = series?.[m][idx];
          return (
            <li key={m} className="flex items-center gap-1.5" data-testid={`legend-${m}`} data-value={value ?? ''}>
              <span
                aria-hidden
                className="inline-block h-0.5 w-4"
                style={{ backgroundColor: MEASURE_STYLE[m].color }}
              />
              <span className="text-muted">{MEASURE_STYLE[m].label}</span>
              <span className="font-medium tabular-nums">{m === 'lag' ? count(value) : perSecond(value)}</span>
            </li>
          );
        })}
      </ul>
      <div ref={element} className="w-full overflow-hidden" data-testid="rate-chart" />
      {error && (
        <p role="alert" className="text-sm text-red-600 dark:text-red-400">
          Rates failed to load: {(error as Error).message}
        </p>
      )}
      {data && !series && <p className="text-sm text-muted">No rates yet: they need two samples of this queue.</p>}
    </section>
  );
}
