'use client';
import { useMemo } from 'react';
import type uPlot from 'uplot';
import type { Trends } from '@/lib/dashboard/trends';
import { useLiveQuery } from '../providers';
import { MEASURE_STYLE, alignedOf, perSecond, useXRange } from './rate-chart';
import { useUPlot, utcDate } from './use-uplot';
import { statsPath } from '../client/stats';

/** A young system has a point or two: drawn as dots, since a line needs two points and says little with three. */
const fewPoints = { show: (u: uPlot) => u.data[0].length < 4, size: 4 };

const options = (xRange: { current: [number, number] }): uPlot.Options => ({
  width: 120,
  height: 40,
  tzDate: utcDate,
  legend: { show: false },
  cursor: { show: false },
  scales: { x: { time: true, range: () => xRange.current }, rate: { range: (_u, _min, max) => [0, Math.max(max, 1)] } },
  axes: [{ show: false }, { show: false, scale: 'rate' }],
  series: [
    {},
    { stroke: MEASURE_STYLE.pushed.color, width: 1.5, scale: 'rate', points: fewPoints },
    { show: false, scale: 'rate' },
    { stroke: MEASURE_STYLE.acked.color, width: 1.5, scale: 'rate', points: fewPoints },
    { show: false, scale: 'rate' },
    { show: false, scale: 'rate' },
  ],
});

/**
 * A queue's pushed and acked per second over the last hour, one point a minute, small enough for an Overview row. Every
 * sparkline of the page shares one request (the same query key) for every queue. Narrow screens
 * drop it: the queue's status and figures need the row's width more.
 */
export function QueueSparkline({ queue }: { queue: string }) {
  const { data } = useLiveQuery<Trends>(['stats', 'every queue'], statsPath('minutes=60&points=60'));
  const series = data?.series.find((s) => s.queue === queue);
  const aligned = useMemo(() => alignedOf(series), [series]);
  const xRange = useXRange(data);
  const element = useUPlot(() => options(xRange), aligned, []);
  // the figures are the last point's: the rate of its one-minute bucket, not of the hour drawn
  const lastAt = series?.at.at(-1);
  const summary =
    series && lastAt !== undefined
      ? `pushed ${perSecond(series.pushed.at(-1))}, acked ${perSecond(series.acked.at(-1))} in the minute to ${new Date(lastAt * 1000).toISOString().slice(11, 19)} UTC (drawn: the last hour)`
      : 'no rates yet';
  return (
    <div
      ref={element}
      role="img"
      aria-label={`${queue}: ${summary}`}
      title={summary}
      className="hidden h-10 w-[120px] md:block"
      data-testid={`sparkline-${queue}`}
    />
  );
}
