import { sql } from 'drizzle-orm';
import { db } from '@/db/pool';
import { pendingOf, queueCounts, type QueueCounts } from './queues';

type Stats = { avg: number; median: number; min: number; max: number };

function stats(values: number[]): Stats {
  if (values.length === 0) return { avg: 0, median: 0, min: 0, max: 0 };
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return {
    avg: sorted.reduce((a, b) => a + b, 0) / sorted.length,
    median: sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2,
    min: sorted[0],
    max: sorted[sorted.length - 1],
  };
}

const sum = (queues: QueueCounts[], pick: (q: QueueCounts) => number) => queues.reduce((n, q) => n + pick(q), 0);

interface Sample {
  at: number;
  ingested: number;
  processed: number;
}
const WINDOW_MS = 60_000;
const store = globalThis as { __queenThroughputSamples?: Sample[] };

/**
 * Messages per second over the last minute, from the maintained totals sampled at each call on
 * this instance (nothing records when each message was pushed or consumed); 0 until two samples.
 */
function throughput(now: Sample) {
  const samples = (store.__queenThroughputSamples ??= []);
  while (samples.length > 1 && samples[1].at <= now.at - WINDOW_MS) samples.shift();
  const first = samples[0];
  samples.push(now);
  const seconds = first ? (now.at - first.at) / 1000 : 0;
  if (seconds <= 0) return { ingestedPerSecond: 0, processedPerSecond: 0 };
  return {
    ingestedPerSecond: Math.max(0, (now.ingested - first.ingested) / seconds),
    processedPerSecond: Math.max(0, (now.processed - first.processed) / seconds),
  };
}

/** The whole broker in one object: counts, lag across every (queue, group), throughput. */
export async function resourcesOverview() {
  const queues = await queueCounts();
  const { rows: groups } = await db().execute<{ lag: number; seconds: number; committed: number }>(sql`
    select g.lag::float8 as lag, coalesce(extract(epoch from now() - g.oldest_pending), 0)::float8 as seconds,
           g.committed::float8 as committed
    from queen.group_figures() g`);
  const total = sum(queues, (q) => q.total);
  return {
    queues: queues.length,
    partitions: sum(queues, (q) => q.partitions),
    namespaces: new Set(queues.map((q) => q.namespace)).size,
    tasks: new Set(queues.map((q) => q.task)).size,
    messages: {
      total,
      pending: sum(queues, pendingOf),
      processing: sum(queues, (q) => q.processing),
      completed: sum(queues, (q) => q.committed),
      failed: sum(queues, (q) => q.failures),
      deadLetter: sum(queues, (q) => q.deadLetters),
    },
    lag: { time: stats(groups.map((g) => g.seconds)), offset: stats(groups.map((g) => g.lag)) },
    throughput: throughput({
      at: Date.now(),
      ingested: sum(queues, (q) => q.pushed),
      processed: groups.reduce((n, g) => n + g.committed, 0),
    }),
    timestamp: new Date().toISOString(),
  };
}

/** Queues, partitions and message counts per namespace or per task. */
async function groupedBy(key: 'namespace' | 'task') {
  const groups = new Map<string, QueueCounts[]>();
  for (const q of await queueCounts()) groups.set(q[key], [...(groups.get(q[key]) ?? []), q]);
  return [...groups]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([name, queues]) => ({
      [key]: name,
      queues: queues.length,
      partitions: sum(queues, (q) => q.partitions),
      messages: { total: sum(queues, (q) => q.total), pending: sum(queues, pendingOf) },
    }));
}

export const listNamespaces = async () => ({ namespaces: await groupedBy('namespace') });
export const listTasks = async () => ({ tasks: await groupedBy('task') });
