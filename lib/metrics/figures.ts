import { sql } from 'drizzle-orm';
import { readDb } from '@/db/pool';
import { metrics } from './registry';

/** One row of queen.metric_figures(): a queue (consumerGroup null) or a (queue, group). */
export interface FigureRow {
  queue: string;
  consumerGroup: string | null;
  pushed: number;
  delivered: number;
  acked: number;
  failed: number;
  deadLettered: number;
  lagMessages: number;
  lagSeconds: number;
  liveLeases: number;
  expiredLeases: number;
  paused: number;
}

/**
 * Reads the message figures of every queue and group in one query and sets the metrics from them.
 * Series of deleted queues and groups go with the reset. The counters carry database totals, so
 * every instance reports the same values: aggregate them across instances with max, not sum.
 */
export async function refreshFigures(): Promise<FigureRow[]> {
  const { rows } = await readDb().execute<Record<string, string | number | null>>(sql`
    select queue, consumer_group as "consumerGroup", pushed, delivered, acked, failed, dead_lettered as "deadLettered",
           lag as "lagMessages", lag_seconds as "lagSeconds", live_leases as "liveLeases",
           expired_leases as "expiredLeases", paused
    from queen.metric_figures()`);
  const figures = rows.map((r) => {
    const out = {
      queue: String(r.queue),
      consumerGroup: r.consumerGroup === null ? null : String(r.consumerGroup),
    } as FigureRow;
    for (const key of NUMBERS) out[key] = Number(r[key] ?? 0);
    return out;
  });
  const m = metrics();
  dropFigures();
  for (const f of figures) {
    if (f.consumerGroup === null) {
      m.pushed.inc({ queue: f.queue }, f.pushed);
      continue;
    }
    const labels = { queue: f.queue, consumer_group: f.consumerGroup };
    m.delivered.inc(labels, f.delivered);
    m.acked.inc(labels, f.acked);
    m.failed.inc(labels, f.failed);
    m.deadLettered.inc(labels, f.deadLettered);
    m.lagMessages.set(labels, f.lagMessages);
    m.lagSeconds.set(labels, f.lagSeconds);
    m.leases.set({ ...labels, state: 'live' }, f.liveLeases);
    m.leases.set({ ...labels, state: 'expired' }, f.expiredLeases);
    m.paused.set(labels, f.paused);
  }
  const streams = await readDb().execute<{
    name: string;
    cycles: string;
    refused: string;
    state_keys: string;
    state_bytes: string;
  }>(sql`select name, cycles, refused, state_keys, state_bytes from queen_streams.figures()`);
  for (const q of streams.rows) {
    m.streamCycles.inc({ query: q.name, outcome: 'committed' }, Number(q.cycles));
    m.streamCycles.inc({ query: q.name, outcome: 'refused' }, Number(q.refused));
    m.streamStateRows.set({ query: q.name }, Number(q.state_keys));
    m.streamStateBytes.set({ query: q.name }, Number(q.state_bytes));
  }
  return figures;
}

/** Removes every series that comes from the database (the next refresh sets them again). */
export function dropFigures(): void {
  const m = metrics();
  for (const metric of [
    m.pushed,
    m.delivered,
    m.acked,
    m.failed,
    m.deadLettered,
    m.lagMessages,
    m.lagSeconds,
    m.leases,
    m.paused,
    m.streamCycles,
    m.streamStateRows,
    m.streamStateBytes,
  ])
    metric.reset();
}

const NUMBERS = [
  'pushed',
  'delivered',
  'acked',
  'failed',
  'deadLettered',
  'lagMessages',
  'lagSeconds',
  'liveLeases',
  'expiredLeases',
  'paused',
] as const;
