import client from 'prom-client';
import { pool, readsFromReplica } from '@/db/pool';
import { listenerConnected } from '@/lib/broker/listener';
import { waiters } from '@/lib/broker/waiters';

const GROUP = ['queue', 'consumer_group'] as const;

/**
 * Every metric of /metrics/prometheus, in one registry of this process. Message counters and the
 * per-group gauges are set from the database at each scrape (lib/metrics/figures.ts); the rest is
 * this instance's own.
 */
function create() {
  const registry = new client.Registry();
  const registers = [registry];
  // without a replica these series would say a lag of 0 of nothing: they are left out
  const replicaRegisters = readsFromReplica() ? registers : [];
  const counter = (name: string, help: string) => new client.Counter({ name, help, labelNames: GROUP, registers });
  const gauge = (name: string, help: string, labelNames: readonly string[] = GROUP) =>
    new client.Gauge({ name, help, labelNames, registers });
  const metrics = {
    registry,
    pushed: new client.Counter({
      name: 'queen_messages_pushed_total',
      help: 'Messages accepted by pushes, all instances, since the queue was created',
      labelNames: ['queue'],
      registers,
    }),
    delivered: counter(
      'queen_messages_delivered_total',
      'Messages handed out by pops to the group, redeliveries included, all instances',
    ),
    acked: counter(
      'queen_messages_acked_total',
      'Messages the group completed (ack completed, or autoAck), all instances',
    ),
    failed: counter('queen_messages_failed_total', 'Failed acks counted against retryLimit, all instances'),
    deadLettered: counter(
      'queen_messages_dead_lettered_total',
      'Messages moved to the dead letters after their last retry, all instances',
    ),
    lagMessages: gauge('queen_consumer_lag_messages', 'Messages pushed and not yet consumed by the group'),
    lagSeconds: gauge(
      'queen_consumer_lag_seconds',
      'Age of the oldest message the group has not consumed (0 when none)',
    ),
    leases: gauge('queen_leases', 'Leases held: live, or expired and not yet reclaimed', [...GROUP, 'state']),
    paused: gauge('queen_paused_cursors', 'Partitions paused for the group'),
    streamCycles: new client.Counter({
      name: 'queen_stream_cycles_total',
      help: 'Streaming-query cycles per query and outcome (committed, refused), all instances',
      labelNames: ['query', 'outcome'],
      registers,
    }),
    streamStateRows: new client.Gauge({
      name: 'queen_stream_state_rows',
      help: 'State rows a streaming query holds, all partitions',
      labelNames: ['query'],
      registers,
    }),
    streamStateBytes: new client.Gauge({
      name: 'queen_stream_state_bytes',
      help: 'Bytes of state (key and value text) a streaming query holds, all partitions',
      labelNames: ['query'],
      registers,
    }),
    streamCycleDuration: new client.Histogram({
      name: 'queen_stream_cycle_duration_seconds',
      help: 'Time this instance took to commit or refuse a streaming cycle, by outcome',
      labelNames: ['outcome'],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers,
    }),
    lifecycleRuns: new client.Counter({
      name: 'queen_lifecycle_runs_total',
      help: 'Runs of the storage lifecycle job on this instance',
      registers,
    }),
    lifecycleSeconds: new client.Counter({
      name: 'queen_lifecycle_run_seconds_total',
      help: 'Time spent in lifecycle runs on this instance (database time and round trips)',
      registers,
    }),
    lifecycleLastRun: new client.Gauge({
      name: 'queen_lifecycle_last_run_seconds',
      help: "Duration of this instance's last lifecycle run",
      registers,
    }),
    lifecycleRemoved: new client.Counter({
      name: 'queen_lifecycle_removed_messages_total',
      help: 'Messages the lifecycle job removed on this instance, by the queue option that removed them',
      labelNames: ['option'],
      registers,
    }),
    figuresUp: new client.Gauge({
      name: 'queen_figures_up',
      help: '1 when this scrape read the message figures from the database, else 0',
      registers,
    }),
    replicaLagBytes: new client.Gauge({
      name: 'queen_replica_lag_bytes',
      help: 'WAL the primary wrote that the replica the figures are read from (DATABASE_READ_URL) has not replayed',
      registers: replicaRegisters,
    }),
    replicaLagSeconds: new client.Gauge({
      name: 'queen_replica_lag_seconds',
      help: 'How stale the figures read from the replica may be: 0 when it has replayed all the primary wrote, else the age of its last replayed transaction',
      registers: replicaRegisters,
    }),
    requestDuration: new client.Histogram({
      name: 'queen_http_request_duration_seconds',
      help: "Time to answer an API request (a long poll's wait included), by route pattern, method and status",
      labelNames: ['route', 'method', 'status'],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
      registers,
    }),
  };
  new client.Gauge({
    name: 'queen_db_pool_connections',
    help: "Connections open in this instance's pool",
    registers,
    collect() {
      this.set(pool().totalCount);
    },
  });
  new client.Gauge({
    name: 'queen_db_pool_idle_connections',
    help: 'Open pool connections not in use',
    registers,
    collect() {
      this.set(pool().idleCount);
    },
  });
  new client.Gauge({
    name: 'queen_db_pool_waiting_requests',
    help: 'Queries waiting for a pool connection',
    registers,
    collect() {
      this.set(pool().waitingCount);
    },
  });
  new client.Gauge({
    name: 'queen_parked_pops',
    help: 'Long-poll pops parked on this instance, waiting for messages',
    registers,
    collect() {
      this.set(waiters.size);
    },
  });
  new client.Gauge({
    name: 'queen_parked_pops_by_scope',
    help: 'Long-poll pops parked on this instance per scope (queue or discovery filter, partition, group), the 50 largest',
    labelNames: ['queue', 'partition', 'namespace', 'task', 'consumer_group'],
    registers,
    collect() {
      this.reset();
      for (const { scope, parked } of waiters.scopeSizes(50)) {
        this.set(
          {
            queue: scope.queue ?? '',
            partition: scope.partition ?? '',
            namespace: scope.namespace,
            task: scope.task,
            consumer_group: scope.group,
          },
          parked,
        );
      }
    },
  });
  new client.Gauge({
    name: 'queen_parked_scopes',
    help: 'Scopes with long-poll pops parked on this instance',
    registers,
    collect() {
      this.set(waiters.scopeCount);
    },
  });
  new client.Counter({
    name: 'queen_parked_wakeups_total',
    help: 'Wake-ups of a scope of parked pops, by cause (entry, push, timer: something became claimable by time, recheck, hold, all)',
    labelNames: ['reason'],
    registers,
    collect() {
      this.reset();
      for (const [reason, n] of Object.entries(waiters.stats.wakeUps)) this.inc({ reason }, n);
    },
  });
  new client.Counter({
    name: 'queen_parked_claims_total',
    help: 'Claim statements run for parked pops (each for several of a scope)',
    registers,
    collect() {
      this.reset();
      this.inc(waiters.stats.claims);
    },
  });
  new client.Counter({
    name: 'queen_parked_served_total',
    help: 'Parked pops answered with messages',
    registers,
    collect() {
      this.reset();
      this.inc(waiters.stats.served);
    },
  });
  new client.Gauge({
    name: 'queen_parked_served_per_wakeup',
    help: 'Parked pops served per wake-up, averaged over the recent wake-ups',
    registers,
    collect() {
      const r = waiters.stats.servedPerWakeUp;
      this.set(r.length ? r.reduce((a, b) => a + b, 0) / r.length : 0);
    },
  });
  new client.Counter({
    name: 'queen_parked_rechecks_total',
    help: 'Instance-wide re-check statements of dry scopes',
    registers,
    collect() {
      this.reset();
      this.inc(waiters.stats.rechecks);
    },
  });
  new client.Gauge({
    name: 'queen_listener_connected',
    help: "1 while this instance's LISTEN connection is up, else 0",
    registers,
    collect() {
      this.set(listenerConnected() ? 1 : 0);
    },
  });
  client.collectDefaultMetrics({ register: registry, prefix: 'queen_' });
  return metrics;
}

export type Metrics = ReturnType<typeof create>;

// One registry per process; the globalThis slot survives `next dev` reloads, where registering a
// metric name twice throws.
const slot = globalThis as unknown as { __queenMetrics?: Metrics };
export const metrics = (): Metrics => (slot.__queenMetrics ??= create());
