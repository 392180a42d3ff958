import { pool } from '@/db/pool';
import { listenerConnected } from '@/lib/broker/listener';
import { waiters } from '@/lib/broker/waiters';
import { driverError } from '@/lib/broker/errors';
import { log } from '@/lib/log.mjs';
import { readSource, type ReadSource } from '@/lib/dashboard/replica';
import { dropFigures, refreshFigures, type FigureRow } from './figures';
import { metrics } from './registry';

/**
 * Reads the database's figures for this scrape. When the database cannot answer, its series are
 * dropped and queen_figures_up says 0, while this instance's own metrics (pool, parked pops,
 * listener, requests) still go out: they matter most during an outage.
 */
async function figuresOrNone(): Promise<FigureRow[] | undefined> {
  const m = metrics();
  try {
    const figures = await refreshFigures();
    m.figuresUp.set(1);
    return figures;
  } catch (err) {
    const e = driverError(err);
    log('metrics').warn({ code: e?.code, err: e?.message ?? String(err) }, 'cannot read the figures from the database');
    dropFigures();
    m.figuresUp.set(0);
    return undefined;
  }
}

/** The replica's lag beside the figures read from it; no series when reads go to the primary or it cannot be read. */
async function replicaLag(): Promise<ReadSource> {
  const source = await readSource();
  const m = metrics();
  m.replicaLagBytes.reset();
  m.replicaLagSeconds.reset();
  if (source.reads === 'replica' && !('error' in source)) {
    m.replicaLagBytes.set(source.lagBytes);
    if (source.lagSeconds !== null) m.replicaLagSeconds.set(source.lagSeconds);
  }
  return source;
}

/** GET /metrics/prometheus: every metric in the Prometheus text format, and how long the query and the rendering took (ms). */
export async function prometheusText(): Promise<{
  text: string;
  contentType: string;
  queryMs: number;
  renderMs: number;
}> {
  const started = performance.now();
  await Promise.all([figuresOrNone(), replicaLag()]);
  const queried = performance.now();
  const { registry } = metrics();
  const text = await registry.metrics();
  return { text, contentType: registry.contentType, queryMs: queried - started, renderMs: performance.now() - queried };
}

/** GET /metrics: the same figures as JSON, by queue and consumer group. */
export async function metricsSummary() {
  const [figures, replica] = await Promise.all([figuresOrNone(), replicaLag()]);
  const queues = new Map<string, { queue: string; pushed: number; consumerGroups: unknown[] }>();
  for (const f of figures ?? [])
    if (f.consumerGroup === null) queues.set(f.queue, { queue: f.queue, pushed: f.pushed, consumerGroups: [] });
  for (const g of figures ?? []) {
    if (g.consumerGroup === null) continue;
    queues.get(g.queue)?.consumerGroups.push({
      consumerGroup: g.consumerGroup,
      delivered: g.delivered,
      acked: g.acked,
      failed: g.failed,
      deadLettered: g.deadLettered,
      lagMessages: g.lagMessages,
      lagSeconds: g.lagSeconds,
      leases: { live: g.liveLeases, expired: g.expiredLeases },
      pausedCursors: g.paused,
    });
  }
  return {
    figuresUp: figures !== undefined,
    queues: [...queues.values()],
    requests: await requestFigures(),
    pool: { total: pool().totalCount, idle: pool().idleCount, waiting: pool().waitingCount },
    parkedPops: waiters.size,
    listener: { connected: listenerConnected() },
    replica,
  };
}

/** Count and total seconds of the requests, per route pattern, method and status. */
async function requestFigures() {
  const requests = new Map<string, { route: string; method: string; status: number; count: number; seconds: number }>();
  for (const v of (await metrics().requestDuration.get()).values) {
    const kind = v.metricName?.endsWith('_count') ? 'count' : v.metricName?.endsWith('_sum') ? 'seconds' : undefined;
    if (!kind) continue;
    const { route, method, status } = v.labels as { route: string; method: string; status: string };
    const key = `${method} ${route} ${status}`;
    const entry = requests.get(key) ?? { route, method, status: Number(status), count: 0, seconds: 0 };
    entry[kind] = v.value;
    requests.set(key, entry);
  }
  return [...requests.values()];
}
