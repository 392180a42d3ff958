// The randomized model checker of issue 17: producers, consumers in several groups, late joiners
// and an operator run against the real app over HTTP while its lifecycle job runs every second;
// then everything drains, and model-check.ts judges what was recorded (model-events.ts).
// Decisions come from a seeded generator per actor, so a seed replays the same choices; the
// interleaving is the machine's, which is why every check allows every order the timings permit.
import type { TestApp } from './app';
import { pop } from './broker';
import { parsePrometheus } from './prometheus';
import type { client } from './http';
import { checkModel, type EndState } from './model-check';
import {
  clock,
  isoMs,
  rawDeadLetterData,
  rawMessageData,
  type AckItemRec,
  type Delivered,
  type ModelEvent,
  type Observed,
  type PartitionInfo,
  type PopRec,
  type OverAge,
  type PushItemRec,
  type QueueSpec,
  type Violation,
} from './model-events';

type Api = ReturnType<typeof client>;

export interface ModelOptions {
  seed: number;
  /** how long the actors run before the drain */
  seconds: number;
  log?: (line: string) => void;
  /** a second app instance on the same database: part of the actors use it (tests/model.test.ts starts one) */
  second?: Api;
}

export interface ModelResult {
  seed: number;
  seconds: number;
  violations: Violation[];
  counts: Record<string, number>;
  report: string;
  events?: ModelEvent[];
}

/** mulberry32: small, fast, and the same sequence for the same seed everywhere. */
export function rng(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    next,
    int: (lo: number, hi: number) => lo + Math.floor(next() * (hi - lo + 1)),
    chance: (p: number) => next() < p,
    pick: <T>(xs: readonly T[]): T => xs[Math.floor(next() * xs.length)],
    weighted: <T extends string>(w: Record<T, number>): T => {
      const entries = Object.entries(w) as [T, number][];
      let r = next() * entries.reduce((s, [, n]) => s + n, 0);
      for (const [k, n] of entries) if ((r -= n) < 0) return k;
      return entries[entries.length - 1][0];
    },
  };
}
type Rng = ReturnType<typeof rng>;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const QUEUE_MODE = '__QUEUE_MODE__';
const LEASE_SECONDS = 2;
/** RETENTION_INTERVAL_MS the app must run with (tests/model.test.ts) */
export const JOB_SECONDS = 1;

/**
 * Three queues, one per family of rules. Seed 1701 (the run in `npm test`) keeps the ages below;
 * any other seed draws them (1-5 s) and the partition counts, so that runs cover more shapes.
 */
function queueSpecs(prefix: string, seed: number, r: Rng): QueueSpec[] {
  const fixed = seed === 1701;
  const age = (n: number) => (fixed ? n : r.pick([1, 2, 3, 5]));
  const parts = (n: number) => Array.from({ length: fixed ? n : r.int(1, 3) }, (_, i) => `p${i}`);
  const base = { leaseTime: LEASE_SECONDS, retryLimit: 1, retryDelay: 100 };
  const done = age(2);
  const retain = age(3);
  const wait = age(3);
  const waitTtl = age(2);
  return [
    // completed messages go after a few seconds: trimmed heads, late groups, dead letters after the cut
    // (retryLimit 0: every failed ack dead-letters, so that requeues have something to act on)
    {
      name: `${prefix}.done`,
      options: { ...base, retryLimit: 0, completedRetentionSeconds: done },
      partitions: parts(3),
      retention: null,
      maxWait: null,
      done,
      retryLimit: 0,
    },
    // anything older than that goes, consumed or not (and, with the default ttl, nothing earlier)
    {
      name: `${prefix}.retain`,
      options: { ...base, retentionEnabled: true, retentionSeconds: retain },
      partitions: parts(2),
      retention: retain,
      maxWait: null,
      done: 3600,
      retryLimit: 1,
    },
    // what a group has not committed goes after maxWaitTimeSeconds, what every group has after ttl
    {
      name: `${prefix}.wait`,
      options: { ...base, maxWaitTimeSeconds: wait, ttl: waitTtl },
      partitions: parts(2),
      retention: null,
      maxWait: wait,
      done: waitTtl,
      retryLimit: 1,
    },
  ];
}

/**
 * The long-poll queue: autoAck consumers parked with short timeouts while a producer pushes just
 * before their deadlines (issue 30, item 1: a deadline that passed while a claim for the waiter ran
 * answered 204 and the claim committed for nobody). No operator acts on it and nothing removes its
 * messages, so every message must reach exactly one client of each group.
 */
function pollSpec(prefix: string): QueueSpec {
  return {
    name: `${prefix}.poll`,
    options: { leaseTime: LEASE_SECONDS, retryLimit: 3, retryDelay: 100 },
    partitions: ['p0', 'p1'],
    retention: null,
    maxWait: null,
    done: 3600,
    retryLimit: 3,
  };
}

/** Numbers JavaScript cannot hold, or cannot write back as written, beside ordinary ones (issue 30, item 2). */
const EXACT_NUMBERS = [
  '12345678901234567891',
  '-98765432109876543210',
  '123456789012345678901234567890.123456789',
  '9007199254740993',
  '1e400',
  '1E-400',
  '2.5e+3',
  '1.0',
  '0.1000',
  '-0.0',
  '19.990',
  '7',
] as const;

/** A payload as raw JSON text, its numbers drawn from EXACT_NUMBERS, its spacing and key order varied. */
function payloadText(r: Rng, tx: string): string {
  const n = () => r.pick(EXACT_NUMBERS);
  const parts = [`"tx":${JSON.stringify(tx)}`, `"pad": "${'x'.repeat(r.int(0, 40))}"`];
  if (r.chance(0.8)) parts.push(`"n":${n()}`);
  if (r.chance(0.4)) parts.push(`"list" : [${n()}, {"amount":${n()}}, ${n()}]`);
  if (r.chance(0.5)) parts.reverse();
  return `{${parts.join(r.chance(0.5) ? ',' : ' ,\n  ')}}`;
}

class Model {
  events: ModelEvent[] = [];
  observed = new Map<string, Observed>();
  partitions = new Map<string, PartitionInfo>();
  /** (queue, group) pairs whose first pop has come back, so that operator actions have somewhere to act */
  joined = new Map<string, Set<string>>();
  stopping = false;
  popSeq = 0;
  pushed: { queue: string; partition: string; tx: string; payload: string }[] = [];
  leaseSamples = 0;
  doubleLeases: string[] = [];
  lastSnapshot = 0;
  overAged = new Map<string, OverAge>();
  outsideSince = new Map<string, number>();
  observerErrors = 0;
  /** the long pollers parked now: actor -> its deadline on the client's clock */
  parked = new Map<string, number>();
  deadlinePushes = 0;

  constructor(
    readonly app: TestApp,
    readonly specs: QueueSpec[],
    readonly prefix: string,
    readonly log: (l: string) => void,
    /** the app instances on the one database: [0] is `app` */
    readonly apis: Api[],
    /** queues no producer, consumer or operator of the main families acts on (the long-poll queue) */
    readonly others: QueueSpec[] = [],
  ) {}

  spec(queue: string) {
    return [...this.specs, ...this.others].find((s) => s.name === queue)!;
  }

  async push(queue: string, items: PushItemRec[], instance = 0) {
    // the body as text: payloads go as written, numbers JavaScript cannot hold included
    const body = `{"items":[${items
      .map(
        (i) =>
          `{"queue":${JSON.stringify(queue)},"partition":${JSON.stringify(i.partition)},"transactionId":${JSON.stringify(i.tx)},"payload":${i.payload}}`,
      )
      .join(',')}]}`;
    const start = clock();
    const res = await this.apis[instance].post('/api/v1/push', body);
    const end = clock();
    if (res.status === 201 && Array.isArray(res.body)) {
      res.body.forEach((r: any, k: number) => {
        items[k].status = r.status;
        items[k].id = r.message_id;
        items[k].partitionId = r.partition_id;
      });
    }
    this.events.push({ kind: 'push', queue, instance, start, end, httpStatus: res.status, items });
    for (const i of items)
      if (i.status === 'queued' && !i.retry)
        this.pushed.push({ queue, partition: i.partition, tx: i.tx, payload: i.payload });
  }

  async pop(
    queue: string,
    group: string,
    actor: string,
    params: Record<string, string | number | boolean>,
    partition?: string,
    instance = 0,
  ): Promise<PopRec> {
    const seq = ++this.popSeq;
    const leaseSeconds = Number(params.leaseSeconds ?? LEASE_SECONDS);
    const full = { ...params, ...(group === QUEUE_MODE ? {} : { consumerGroup: group }) };
    const path = `/queue/${encodeURIComponent(queue)}${partition ? `/partition/${encodeURIComponent(partition)}` : ''}`;
    const start = clock();
    const res = await pop(this.apis[instance], path, full);
    const end = clock();
    // `data` from the response text, never through JSON.parse: numbers as the broker wrote them
    const data = res.status === 200 ? rawMessageData(res.text) : [];
    const messages: Delivered[] =
      res.status === 200
        ? res.body.messages.map((m: any, k: number) => ({
            id: m.id,
            tx: m.transactionId,
            partitionId: m.partitionId,
            createdAt: m.createdAt,
            data: data[k] ?? '',
          }))
        : [];
    const rec: PopRec = {
      kind: 'pop',
      seq,
      queue,
      group,
      actor,
      start,
      end,
      status: res.status,
      leaseId: res.body?.leaseId ?? '',
      leaseSeconds,
      messages,
      instance,
      autoAck: params.autoAck === true,
      ...(params.wait === true ? { waitMs: Number(params.timeout) } : {}),
    };
    this.events.push(rec);
    return rec;
  }

  async ack(group: string, actor: string, items: AckItemRec[], instance = 0) {
    if (!items.length) return;
    const start = clock();
    const res = await this.apis[instance].post('/api/v1/ack/batch', {
      consumerGroup: group === QUEUE_MODE ? null : group,
      acknowledgments: items.map((i) => ({
        transactionId: i.tx,
        partitionId: i.partitionId,
        leaseId: i.leaseId || null,
        status: i.status,
        error: i.status === 'failed' ? 'model: failed' : null,
      })),
    });
    const end = clock();
    if (res.status === 200 && Array.isArray(res.body)) {
      res.body.forEach((r: any, k: number) => {
        items[k].success = r.success;
        items[k].error = r.error;
        items[k].released = r.leaseReleased;
        items[k].dlq = r.dlq;
      });
    }
    this.events.push({ kind: 'ack', group, actor, start, end, httpStatus: res.status, items });
  }

  markJoined(queue: string, group: string) {
    if (!this.joined.has(queue)) this.joined.set(queue, new Set());
    this.joined.get(queue)!.add(group);
  }

  // ---- the database, looked at -----------------------------------------------------------

  async snapshot() {
    const start = clock();
    const rows = await this.app.db.query<{
      id: string;
      partitionId: string;
      offset: number;
      tx: string;
      createdAt: string | null;
      queue: string;
      leased: boolean;
    }>(
      `select m.id::text as id, m.partition_id::text as "partitionId", m."offset"::int as "offset", m.transaction_id as tx,
              queen.iso(s.created_at) as "createdAt", q.name as queue,
              exists (select 1 from queen.cursors c where c.partition_id = m.partition_id and c.lease_id is not null
                        and c.lease_expires_at > now() and m."offset" > c.committed_offset and m."offset" <= c.lease_end_offset) as leased
       from queen.messages m
       join queen.partitions p on p.id = m.partition_id
       join queen.queues q on q.id = p.queue_id
       left join queen.segments s on s.partition_id = m.partition_id and s.first_offset = m.segment_offset
       where q.name like $1`,
      [`${this.prefix}.%`],
    );
    const end = clock();
    const seen = new Set<string>();
    for (const r of rows) {
      seen.add(r.id);
      const spec = this.spec(r.queue);
      const rule = spec.retention ?? spec.maxWait;
      if (rule !== null && r.createdAt && !this.overAged.has(r.id)) {
        // The issue's target: nothing older than the option + the lease + two job intervals outside a
        // live lease. A message can sit in several leases one after another (redelivered after an
        // expiry), so what is held is the time it has been of age and outside every live lease:
        // at most two job intervals (and two seconds for a loaded machine).
        const age = (start - isoMs(r.createdAt)) / 1000;
        if (age <= rule || r.leased) this.outsideSince.delete(r.id);
        else if (!this.outsideSince.has(r.id)) this.outsideSince.set(r.id, start);
        const since = this.outsideSince.get(r.id);
        const bound = 2 * JOB_SECONDS + 2;
        // and in runs of the job, so that a loaded machine's slow runs are not counted against it:
        // the back-off may let a partition wait up to its shortest rule's age, then two more runs
        const runs = since === undefined ? 0 : [...this.jobRuns.keys()].filter((at) => isoMs(at) > since).length;
        if (since !== undefined && (start - since) / 1000 > bound && runs >= Math.ceil(rule / JOB_SECONDS) + 2) {
          this.overAged.set(r.id, {
            id: r.id,
            queue: r.queue,
            offset: r.offset,
            partitionId: r.partitionId,
            ageSeconds: age,
            boundSeconds: bound,
            at: start,
            outsideSeconds: (start - since) / 1000,
          });
        }
      }
      const o = this.observed.get(r.id);
      if (o) {
        o.lastSeen = start;
        if (o.goneSeen !== undefined) o.goneSeen = undefined; // gone and back: recorded as a finding by the checks
      } else {
        const createdAt = r.createdAt ?? new Date(start).toISOString();
        this.observed.set(r.id, {
          id: r.id,
          partitionId: r.partitionId,
          offset: r.offset,
          tx: r.tx,
          createdAt,
          createdMs: isoMs(createdAt),
          firstSeen: start,
          lastSeen: start,
        });
      }
    }
    for (const o of this.observed.values()) if (!seen.has(o.id) && o.goneSeen === undefined) o.goneSeen = end;
    this.lastSnapshot = end;
  }

  async readPartitions() {
    const rows = await this.app.db.query<PartitionInfo>(
      `select p.id::text as id, q.name as queue, p.name as name from queen.partitions p join queen.queues q on q.id = p.queue_id where q.name like $1`,
      [`${this.prefix}.%`],
    );
    for (const r of rows) this.partitions.set(r.id, r);
  }

  /** The cursors table can hold one lease per (partition, group) by its key; asked all the same, so a schema change that allowed two would show. */
  async sampleLeases() {
    const rows = await this.app.db.query<{ partition_id: string; consumer_group: string; n: number }>(
      `select c.partition_id::text, c.consumer_group, count(*)::int as n from queen.cursors c
       join queen.queues q on q.id = c.queue_id
       where q.name like $1 and c.lease_id is not null and c.lease_expires_at > now()
       group by 1, 2 having count(*) > 1`,
      [`${this.prefix}.%`],
    );
    this.leaseSamples++;
    for (const r of rows) this.doubleLeases.push(`${r.partition_id}/${r.consumer_group}: ${r.n} live leases`);
  }

  /** The job's own summary of each run it made (system_state 'lifecycle'), as far as the looks caught them. */
  jobRuns = new Map<string, any>();
  async sampleJob() {
    const rows = await this.app.db.query<{ value: any }>(
      `select value from queen.system_state where key = 'lifecycle'`,
    );
    const v = rows[0]?.value;
    if (v?.at) this.jobRuns.set(v.at, v);
  }

  observing = true;
  async observer() {
    let n = 0;
    while (this.observing) {
      try {
        await this.snapshot();
        await this.sampleJob();
        if (n++ % 5 === 0) {
          await this.readPartitions();
          await this.sampleLeases();
        }
      } catch (err) {
        this.observerErrors++;
        this.log(`[model] observer: ${(err as Error).message}`);
      }
      await sleep(120);
    }
  }

  storedOf(queue: string): Observed[] {
    return [...this.observed.values()].filter(
      (o) => o.goneSeen === undefined && this.partitions.get(o.partitionId)?.queue === queue,
    );
  }

  // ---- actors -----------------------------------------------------------------------------

  async producer(r: Rng, name: string, instance = 0) {
    let n = 0;
    while (!this.stopping) {
      const spec = r.pick(this.specs);
      const fresh = (): PushItemRec => {
        const tx = `${name}-${n++}`;
        return { tx, partition: r.pick(spec.partitions), payload: payloadText(r, tx), retry: false };
      };
      const items: PushItemRec[] = Array.from({ length: r.int(1, 5) }, fresh);
      const earlier = this.pushed.filter((p) => p.queue === spec.name);
      if (earlier.length && r.chance(0.2)) {
        // a producer that did not get its answer pushes the same transaction again, maybe long after
        const p = r.chance(0.5)
          ? r.pick(earlier)
          : earlier[earlier.length - 1 - r.int(0, Math.min(5, earlier.length - 1))];
        items.push({ tx: p.tx, partition: p.partition, payload: p.payload, retry: true });
      }
      try {
        if (r.chance(0.07)) {
          // two attempts of one push racing each other
          const one = fresh();
          await Promise.all([
            this.push(spec.name, [{ ...one }], instance),
            this.push(spec.name, [{ ...one, retry: true }], (instance + 1) % this.apis.length),
          ]);
        } else {
          await this.push(spec.name, items, instance);
        }
      } catch (err) {
        this.log(`[model] ${name}: ${(err as Error).message}`);
      }
      await sleep(r.int(15, 90));
    }
  }

  async consumer(
    r: Rng,
    queue: string,
    group: string,
    actor: string,
    join?: { mode: 'all' | 'new' | 'from'; from?: string },
    instance = 0,
  ) {
    let first = true;
    const spec = this.spec(queue);
    while (!this.stopping) {
      const action = r.weighted({ ack: 56, fail: 8, mixed: 6, die: 8, expire: 4, slow: 8, one: 6, extend: 4, auto: 3 });
      const leaseSeconds = action === 'expire' ? 1 : LEASE_SECONDS;
      const params: Record<string, string | number | boolean> = {
        batch: r.int(1, 12),
        partitions: r.int(1, 3),
        leaseSeconds,
      };
      if (action === 'auto') params.autoAck = true;
      if (first && join?.mode === 'new') params.subscriptionMode = 'new';
      if (first && join?.mode === 'from') params.subscriptionFrom = join.from!;
      let rec: PopRec;
      try {
        rec =
          action === 'one'
            ? await this.pop(queue, group, actor, params, r.pick(spec.partitions), instance)
            : await this.pop(queue, group, actor, params, undefined, instance);
        if (first) {
          first = false;
          if (join)
            this.events.push({
              kind: 'join',
              queue,
              group,
              mode: join.mode,
              from: join.from,
              start: rec.start,
              end: rec.end,
            });
        }
        this.markJoined(queue, group);
        if (rec.status !== 200) {
          await sleep(r.int(20, 120));
          continue;
        }
        const items = (status: (i: number) => 'completed' | 'failed') =>
          rec.messages.map(
            (m, i): AckItemRec => ({
              id: m.id,
              tx: m.tx,
              partitionId: m.partitionId,
              leaseId: rec.leaseId,
              status: status(i),
            }),
          );
        switch (action) {
          case 'fail':
            await this.ack(
              group,
              actor,
              items(() => 'failed'),
              instance,
            );
            break;
          case 'mixed':
            await this.ack(
              group,
              actor,
              items(() => (r.chance(0.3) ? 'failed' : 'completed')),
              instance,
            );
            break;
          case 'die': {
            // acks part of its batch and is gone: the rest waits for its lease to end
            const k = r.int(0, rec.messages.length - 1);
            await this.ack(group, actor, items(() => 'completed').slice(0, k), instance);
            await sleep(leaseSeconds * 1000 + r.int(0, 400));
            break;
          }
          case 'expire':
            await sleep(leaseSeconds * 1000 + r.int(100, 500));
            await this.ack(
              group,
              actor,
              items(() => 'completed'),
              instance,
            );
            break;
          case 'auto':
            break; // committed by the pop itself
          case 'extend': {
            // a slow handler that extends its lease once, then acks after the lease it first had
            await sleep(r.int(900, 1500));
            const seconds = r.int(2, 4);
            const start = clock();
            const res = await this.apis[instance].post(`/api/v1/lease/${rec.leaseId}/extend`, { seconds });
            this.events.push({
              kind: 'extend',
              leaseId: rec.leaseId,
              seconds,
              start,
              end: clock(),
              httpStatus: res.status,
              success: res.status === 200 && res.body?.[0]?.success === true,
            });
            await sleep(r.int(600, 1200));
            await this.ack(
              group,
              actor,
              items(() => 'completed'),
              instance,
            );
            break;
          }
          case 'slow':
            await sleep(r.int(200, 1500));
            await this.ack(
              group,
              actor,
              items(() => 'completed'),
              instance,
            );
            break;
          default:
            await this.ack(
              group,
              actor,
              items(() => 'completed'),
              instance,
            );
        }
      } catch (err) {
        this.log(`[model] ${actor}: ${(err as Error).message}`);
      }
      await sleep(r.int(5, 60));
    }
  }

  /** An autoAck consumer that long-polls with a short timeout, again and again (issue 30, item 1). */
  async poller(r: Rng, queue: string, group: string, actor: string, instance: number) {
    while (!this.stopping) {
      const waitMs = r.pick([300, 500, 800, 1000, 1200, 1500]);
      const batch = r.chance(0.7) ? 1 : r.int(2, 4);
      this.parked.set(actor, clock() + waitMs);
      try {
        await this.pop(queue, group, actor, { batch, wait: true, timeout: waitMs, autoAck: true }, undefined, instance);
      } catch (err) {
        this.log(`[model] ${actor}: ${(err as Error).message}`);
      } finally {
        this.parked.delete(actor);
      }
      await sleep(r.int(0, 15));
    }
  }

  /** Pushes to the long-poll queue 0-40 ms before the earliest deadline of the parked pollers, through either instance. */
  async deadlineProducer(r: Rng, spec: QueueSpec, name: string) {
    let n = 0;
    while (!this.stopping) {
      const now = clock();
      const next = Math.min(...[...this.parked.values()].filter((d) => d > now + 45));
      if (!Number.isFinite(next)) {
        await sleep(5);
        continue;
      }
      await sleep(Math.max(0, next - r.int(0, 40) - clock()));
      if (this.stopping) break;
      const items = Array.from({ length: r.int(1, Math.max(1, Math.min(4, this.parked.size))) }, (): PushItemRec => {
        const tx = `${name}-${n++}`;
        return { tx, partition: r.pick(spec.partitions), payload: payloadText(r, tx), retry: false };
      });
      try {
        await this.push(spec.name, items, r.int(0, this.apis.length - 1));
        this.deadlinePushes++;
      } catch (err) {
        this.log(`[model] ${name}: ${(err as Error).message}`);
      }
      await sleep(r.int(0, 30));
    }
  }

  async operator(r: Rng, late: (queue: string, mode: 'all' | 'new' | 'from', from?: string) => void, until: number) {
    const lateAt = [0.25, 0.5, 0.7].map((f) => clock() + f * (until - clock()));
    let lateN = 0;
    while (!this.stopping) {
      await sleep(r.int(250, 900));
      if (this.stopping) break;
      try {
        if (lateAt.length && clock() >= lateAt[0]) {
          lateAt.shift();
          for (const mode of ['all', 'new', 'from'] as const) {
            const spec = r.pick(this.specs);
            const stored = this.storedOf(spec.name);
            const from =
              mode === 'from'
                ? stored.length
                  ? r.pick(stored).createdAt
                  : new Date(clock() - 2000).toISOString()
                : undefined;
            lateN++;
            late(spec.name, mode, from);
          }
          continue;
        }
        const spec = r.pick(this.specs);
        const groups = [...(this.joined.get(spec.name) ?? [])];
        if (!groups.length) continue;
        const group = r.pick(groups);
        const op = r.weighted({
          seekBack: 25,
          seekForward: 12,
          seekEnd: 4,
          seekPartition: 10,
          delete: 25,
          pause: 16,
          requeue: 14,
          release: 8,
          drop: 5,
        });
        if (op === 'drop') {
          // a late group deleted from the queue; its consumer's next pop joins it again, at the low-water mark
          const late = groups.filter((g) => g.startsWith('late-'));
          if (!late.length) continue;
          const g = r.pick(late);
          const start = clock();
          const res = await this.app.api.del(
            `/api/v1/consumer-groups/${encodeURIComponent(g)}/queues/${encodeURIComponent(spec.name)}?deleteMetadata=true`,
          );
          this.events.push({ kind: 'drop', queue: spec.name, group: g, start, end: clock(), httpStatus: res.status });
          // no seek or pause of it until a pop has joined it again (a seek would join it itself)
          if (res.status === 200) this.joined.get(spec.name)?.delete(g);
        } else if (op === 'release') {
          // a lease taken in the last second, ended by force
          const recent = this.events.filter(
            (e): e is PopRec => e.kind === 'pop' && !!e.leaseId && e.messages.length > 0 && e.end > clock() - 1000,
          );
          if (!recent.length) continue;
          const p = r.pick(recent);
          const start = clock();
          const res = await this.app.api.post(`/api/v1/leases/${p.leaseId}/release`, { reason: 'model' });
          this.events.push({ kind: 'release', leaseId: p.leaseId, start, end: clock(), httpStatus: res.status });
        } else if (op === 'requeue') {
          // mostly the queue whose every failure dead-letters
          const where = r.chance(0.7) ? this.specs[0] : spec;
          const listed =
            (await this.app.api.get(`/api/v1/dlq?queue=${encodeURIComponent(where.name)}&limit=50`)).body?.messages ??
            [];
          if (!listed.length) continue;
          const d = r.pick(listed as any[]);
          const start = clock();
          const res = await this.app.api.post('/api/v1/dlq/requeue', {
            items: [{ partitionId: d.partitionId, consumerGroup: d.consumerGroup, offset: d.offset }],
            reason: 'model',
          });
          const out = res.body?.results?.[0];
          this.events.push({
            kind: 'requeue',
            queue: where.name,
            partitionId: d.partitionId,
            group: d.consumerGroup,
            tx: d.transactionId,
            offset: d.offset,
            start,
            end: clock(),
            httpStatus: res.status,
            success: out?.success === true,
            newTx: out?.newTransactionId,
            newId: out?.newMessageId,
            newOffset: out?.newOffset,
            doneFor: out?.doneFor ?? undefined,
          });
        } else if (op === 'delete') {
          const stored = this.storedOf(spec.name);
          if (!stored.length) continue;
          const m = r.pick(stored);
          const start = clock();
          const res = await this.app.api.del(`/api/v1/messages/${m.partitionId}/${encodeURIComponent(m.tx)}`);
          this.events.push({
            kind: 'delete',
            id: m.id,
            tx: m.tx,
            partitionId: m.partitionId,
            start,
            end: clock(),
            httpStatus: res.status,
          });
        } else if (op === 'pause') {
          const parts = [...this.partitions.values()].filter((p) => p.queue === spec.name);
          if (!parts.length) continue;
          const p = r.pick(parts);
          const until = new Date(clock() + r.int(300, 1500)).toISOString();
          const start = clock();
          const res = await this.app.api.post(`/api/v1/cursors/${p.id}/${encodeURIComponent(group)}/pause`, {
            paused: true,
            reason: 'model',
            until,
          });
          this.events.push({
            kind: 'pause',
            partitionId: p.id,
            group,
            paused: true,
            until,
            start,
            end: clock(),
            httpStatus: res.status,
          });
        } else {
          const stored = this.storedOf(spec.name);
          let timestamp: string | undefined;
          if (op === 'seekBack')
            timestamp =
              stored.length && r.chance(0.7)
                ? r.pick(stored).createdAt
                : new Date(clock() - r.int(500, 6000)).toISOString();
          if (op === 'seekForward' || op === 'seekPartition')
            timestamp = new Date(clock() - r.int(0, 1500)).toISOString();
          const toEnd = op === 'seekEnd';
          const partition = op === 'seekPartition' ? r.pick(spec.partitions) : undefined;
          const path =
            `/api/v1/consumer-groups/${encodeURIComponent(group)}/queues/${encodeURIComponent(spec.name)}` +
            (partition ? `/partitions/${encodeURIComponent(partition)}` : '') +
            '/seek';
          const start = clock();
          const res = await this.app.api.post(
            path,
            toEnd ? { toEnd: true, reason: 'model' } : { timestamp, reason: 'model' },
          );
          this.events.push({
            kind: 'seek',
            queue: spec.name,
            group,
            partition,
            toEnd,
            timestamp,
            start,
            end: clock(),
            httpStatus: res.status,
          });
        }
      } catch (err) {
        this.log(`[model] operator: ${(err as Error).message}`);
      }
    }
    return lateN;
  }

  // ---- the end ---------------------------------------------------------------------------

  /** Every group pops and acks everything until a whole round finds nothing, twice. */
  async drain(groups: { queue: string; group: string }[], ms: number): Promise<boolean> {
    const deadline = clock() + ms;
    let quiet = 0;
    while (clock() < deadline) {
      const got = await Promise.all(
        groups.map(async ({ queue, group }, k) => {
          const instance = k % this.apis.length;
          const rec = await this.pop(
            queue,
            group,
            'drain',
            { batch: 50, partitions: 0, leaseSeconds: 10 },
            undefined,
            instance,
          );
          if (rec.status !== 200) return 0;
          await this.ack(
            group,
            'drain',
            rec.messages.map((m) => ({
              id: m.id,
              tx: m.tx,
              partitionId: m.partitionId,
              leaseId: rec.leaseId,
              status: 'completed' as const,
            })),
            instance,
          );
          return rec.messages.length;
        }),
      );
      quiet = got.some((n) => n > 0) ? 0 : quiet + 1;
      if (quiet >= 2) return true;
    }
    return false;
  }
}

export async function runModel(
  app: TestApp,
  { seed, seconds, log = () => {}, second }: ModelOptions,
): Promise<ModelResult> {
  const prefix = `m${seed}`;
  const root = rng(seed);
  const specs = queueSpecs(prefix, seed, rng(root.int(1, 2 ** 31)));
  const poll = pollSpec(prefix);
  const apis = second ? [app.api, second] : [app.api];
  const model = new Model(app, specs, prefix, log, apis, [poll]);
  const child = () => rng(root.int(1, 2 ** 31));
  const B = apis.length - 1; // the second instance, else the first

  for (const s of [...specs, poll]) {
    const res = await app.api.post('/api/v1/configure', { queue: s.name, options: s.options });
    if (res.status !== 200) throw new Error(`configure ${s.name}: ${res.status} ${res.text}`);
  }
  const until = clock() + seconds * 1000;
  const observer = model.observer();
  const actors: Promise<unknown>[] = [];
  const groups: { queue: string; group: string }[] = [];
  const spawn = (
    queue: string,
    group: string,
    count: number,
    join?: { mode: 'all' | 'new' | 'from'; from?: string },
    instance = 0,
  ) => {
    groups.push({ queue, group });
    for (let i = 0; i < count; i++)
      actors.push(model.consumer(child(), queue, group, `${group}@${queue}#${i}`, join, instance));
  };
  for (const s of specs) {
    // queue mode first used late on the retention queue: it never seeds, so it starts at the low-water mark
    if (s !== specs[1]) spawn(s.name, QUEUE_MODE, 1);
    spawn(s.name, 'g1', 2);
    spawn(s.name, 'g2', 1, undefined, B); // g2 through the second instance
  }
  // the long pollers: two groups (one of them queue mode), half of each on either instance
  for (const [group, count] of [
    ['lp', 5],
    [QUEUE_MODE, 3],
  ] as const) {
    groups.push({ queue: poll.name, group });
    for (let i = 0; i < count; i++)
      actors.push(model.poller(child(), poll.name, group, `${group}@${poll.name}#${i}`, i % apis.length));
  }
  const lateQueueMode = setTimeout(() => {
    if (!model.stopping) spawn(specs[1].name, QUEUE_MODE, 1, { mode: 'all' });
  }, seconds * 400);
  actors.push(
    model.producer(child(), 'a'),
    model.producer(child(), 'b', B),
    model.deadlineProducer(child(), poll, 'lp'),
  );
  let late = 0;
  const operator = model.operator(
    child(),
    (queue, mode, from) => spawn(queue, `late-${mode}-${++late}`, 1, { mode, from }),
    until,
  );

  while (clock() < until) await sleep(200);
  model.stopping = true;
  clearTimeout(lateQueueMode);
  await operator;
  await Promise.all(actors);
  // what the operator paused resumes by itself within 1.5 s; the consumers' leases end within 2 s
  await sleep(LEASE_SECONDS * 1000 + 600);
  // quiet (only the job runs): every counter against a recount, each in one statement
  const before = await recount(app, prefix, 'before the drain');
  const previews = await previewSeeks(app, model, groups, rng(root.int(1, 2 ** 31)));
  const drained = await model.drain(groups, 20_000 + seconds * 500);
  model.observing = false;
  await observer;
  await model.snapshot();
  await model.readPartitions();

  const end = await endState(app, prefix, groups, apis);
  end.counters.unshift(...before, ...previews);
  // what PostgreSQL's jsonb makes of every payload pushed: what each delivery's `data` must read
  const jsonb = await jsonbTexts(app, model);
  const ignored = (process.env.MODEL_IGNORE ?? '')
    .split(',')
    .map((k) => k.trim())
    .filter(Boolean);
  const violations = checkModel({
    events: model.events,
    observed: model.observed,
    partitions: model.partitions,
    specs: [...specs, poll],
    autoAckQueues: [poll.name],
    jsonb,
    groups,
    end,
    drained,
    doubleLeases: model.doubleLeases,
    overAged: [...model.overAged.values()],
  }).filter((v) => !ignored.includes(v.kind));
  const counts: Record<string, number> = {
    pushes: model.events.filter((e) => e.kind === 'push').length,
    messages: model.observed.size,
    removed: [...model.observed.values()].filter((o) => o.goneSeen !== undefined).length,
    pops: model.events.filter((e) => e.kind === 'pop').length,
    deliveries: model.events.reduce((n, e) => n + (e.kind === 'pop' ? e.messages.length : 0), 0),
    acks: model.events.reduce((n, e) => n + (e.kind === 'ack' ? e.items.length : 0), 0),
    acksRefused: model.events.reduce(
      (n, e) => n + (e.kind === 'ack' ? e.items.filter((i) => i.success === false).length : 0),
      0,
    ),
    seeks: model.events.filter((e) => e.kind === 'seek').length,
    deletes: model.events.filter((e) => e.kind === 'delete').length,
    pauses: model.events.filter((e) => e.kind === 'pause').length,
    requeues: model.events.filter((e) => e.kind === 'requeue').length,
    releases: model.events.filter((e) => e.kind === 'release' && e.httpStatus === 200).length,
    groupsDeleted: model.events.filter((e) => e.kind === 'drop' && e.httpStatus === 200).length,
    groups: groups.length,
    lateGroups: late,
    leaseSamples: model.leaseSamples,
    observerErrors: model.observerErrors,
    countersRecounted: end.counters.length,
    seekPreviewsChecked: previews.filter((c) => c.name.endsWith('replayed')).length,
    instances: apis.length,
    requestsToSecond: model.events.filter((e) => (e.kind === 'pop' || e.kind === 'push') && e.instance === 1).length,
    longPolls: model.events.filter((e) => e.kind === 'pop' && e.waitMs !== undefined).length,
    longPollsWith200: model.events.filter((e) => e.kind === 'pop' && e.waitMs !== undefined && e.status === 200).length,
    deadlinePushes: model.deadlinePushes,
    payloadsExact: jsonb.size,
    figuresSeries: end.metrics.length,
    jobRunsSeen: model.jobRuns.size,
    jobPartitionsSkipped: [...model.jobRuns.values()].reduce((n, v) => n + Number(v.partitionsSkipped ?? 0), 0),
  };
  const byKind = new Map<string, Violation[]>();
  for (const v of violations) byKind.set(v.kind, [...(byKind.get(v.kind) ?? []), v]);
  const lines = [
    `model seed=${seed} seconds=${seconds}: ${Object.entries(counts)
      .map(([k, v]) => `${k}=${v}`)
      .join(' ')}`,
    `queues: ${specs.map((s) => `${s.name} ${JSON.stringify(s.options)} partitions ${s.partitions.length}`).join('; ')}`,
    drained ? 'drained' : 'NOT drained within the time bound',
    violations.length ? `${violations.length} violations:` : 'no violations',
  ];
  for (const [kind, vs] of byKind) {
    lines.push(`  ${kind}: ${vs.length}`);
    for (const v of vs.slice(0, 4)) lines.push(`    ${v.detail}`);
  }
  // the whole log too when a report file is asked for (tests/model.test.ts), to read a finding's surroundings
  return {
    seed,
    seconds,
    violations,
    counts,
    report: lines.join('\n'),
    ...(process.env.MODEL_REPORT ? { events: model.events } : {}),
  };
}

/** PostgreSQL's jsonb text of every distinct payload pushed, in one statement. */
async function jsonbTexts(app: TestApp, model: Model): Promise<Map<string, string>> {
  const texts = new Set<string>();
  for (const e of model.events) if (e.kind === 'push') for (const i of e.items) texts.add(i.payload);
  const rows = await app.db.query<{ t: string; j: string }>('select t, t::jsonb::text as j from unnest($1::text[]) t', [
    [...texts],
  ]);
  return new Map(rows.map((r) => [r.t, r.j]));
}

/** What the broker says once everything has drained, and a recount of it from the tables. */
async function endState(
  app: TestApp,
  prefix: string,
  groups: { queue: string; group: string }[],
  apis: Api[],
): Promise<EndState> {
  const like = `${prefix}.%`;
  const cursors = await app.db.query(
    `select c.partition_id::text as "partitionId", c.consumer_group as "group", q.name as queue, c.committed_offset::int as committed,
            c.acked_offsets::int[] as acked,
            p.head_offset::int as head, c.evicted::int as evicted, c.lease_id is not null and c.lease_expires_at > now() as leased,
            (select count(*)::int from queen.messages m where m.partition_id = c.partition_id and m."offset" > c.committed_offset
               and not m."offset" = any(c.acked_offsets)) as "storedAbove"
     from queen.cursors c join queen.partitions p on p.id = c.partition_id join queen.queues q on q.id = c.queue_id
     where q.name like $1`,
    [like],
  );
  const lagApi = (await app.api.get('/api/v1/consumer-groups')).body;
  const lags = (Array.isArray(lagApi) ? lagApi : [])
    .filter((g: any) => String(g.queueName).startsWith(`${prefix}.`))
    .map((g: any) => ({ queue: g.queueName, group: g.name, lag: Number(g.totalLag) }));
  const deadLetters: EndState['deadLetters'] = [];
  for (const { queue, group } of groups) {
    const res = await app.api.get(
      `/api/v1/dlq?queue=${encodeURIComponent(queue)}&consumerGroup=${encodeURIComponent(group)}&limit=1000`,
    );
    // `data` read from the text, as the broker wrote it
    const data = res.status === 200 ? rawDeadLetterData(res.text) : [];
    (res.body?.messages ?? []).forEach((d: any, k: number) => {
      deadLetters.push({ queue, group, partitionId: d.partitionId, tx: d.transactionId, data: data[k] ?? '' });
    });
  }
  const counters = await recount(app, prefix, 'after the drain');
  counters.push(...(await resourceFigures(app, prefix)));
  return { cursors: cursors as EndState['cursors'], lags, deadLetters, counters, metrics: await scrape(apis, prefix) };
}

/**
 * GET /api/v1/resources/queues and /resources/overview against a recount (issue 30, item 4):
 * `messages.total` is the messages stored, `pending` queue mode's stored messages it has neither
 * done nor leased. The job still runs: a figure counts only when the recount before and after it agree.
 */
async function resourceFigures(app: TestApp, prefix: string): Promise<EndState['counters']> {
  const out: EndState['counters'] = [];
  const recountAll = async () => {
    const rows = await app.db.query<{ queue: string; stored: number; pending: number }>(
      `select q.name as queue,
              (select count(*)::int from queen.messages m join queen.partitions p on p.id = m.partition_id where p.queue_id = q.id) as stored,
              (select count(*)::int from queen.messages m join queen.partitions p on p.id = m.partition_id
                 left join queen.cursors c on c.partition_id = p.id and c.consumer_group = '${QUEUE_MODE}'
               where p.queue_id = q.id
                 and m."offset" > coalesce(c.committed_offset, 0) and not coalesce(m."offset" = any (c.acked_offsets), false)
                 and not coalesce(c.lease_expires_at > now() and m."offset" <= c.lease_end_offset, false)) as pending
       from queen.queues q`,
    );
    return new Map(rows.map((r) => [r.queue, r]));
  };
  for (let attempt = 0; attempt < 5; attempt++) {
    const before = await recountAll();
    const [queues, overview] = await Promise.all([
      app.api.get('/api/v1/resources/queues'),
      app.api.get('/api/v1/resources/overview'),
    ]);
    const after = await recountAll();
    const same = [...after].every(
      ([k, v]) => before.get(k)?.stored === v.stored && before.get(k)?.pending === v.pending,
    );
    if (!same && attempt < 4) {
      await sleep(150);
      continue;
    }
    if (queues.status !== 200 || overview.status !== 200) {
      out.push({
        name: 'resources',
        key: 'error',
        counted: NaN,
        actual: NaN,
        error: `${queues.status}/${overview.status} ${queues.text.slice(0, 200)}`,
      });
      return out;
    }
    for (const q of queues.body.queues ?? []) {
      if (!String(q.name).startsWith(`${prefix}.`)) continue;
      const r = after.get(q.name);
      out.push({
        name: 'messages.total (GET /resources/queues)',
        key: q.name,
        counted: Number(q.messages?.total),
        actual: r?.stored ?? 0,
      });
      out.push({
        name: 'messages.pending (GET /resources/queues)',
        key: q.name,
        counted: Number(q.messages?.pending),
        actual: r?.pending ?? 0,
      });
    }
    const all = [...after.values()];
    out.push({
      name: 'messages.total (GET /resources/overview)',
      key: 'all queues',
      counted: Number(overview.body?.messages?.total),
      actual: all.reduce((n, r) => n + r.stored, 0),
    });
    out.push({
      name: 'messages.pending (GET /resources/overview)',
      key: 'all queues',
      counted: Number(overview.body?.messages?.pending),
      actual: all.reduce((n, r) => n + r.pending, 0),
    });
    return out;
  }
  return out;
}

/** The message counters of /metrics/prometheus of every instance, per (queue, group) of the model. */
async function scrape(apis: Api[], prefix: string): Promise<EndState['metrics']> {
  const out: EndState['metrics'] = [];
  for (const [instance, api] of apis.entries()) {
    const res = await api.get('/metrics/prometheus');
    if (res.status !== 200) {
      out.push({ instance, queue: '', group: '', error: `${res.status} ${res.text.slice(0, 200)}` });
      continue;
    }
    let families: ReturnType<typeof parsePrometheus>;
    try {
      families = parsePrometheus(res.text);
    } catch (err) {
      out.push({ instance, queue: '', group: '', error: (err as Error).message });
      continue;
    }
    const series = new Map<string, EndState['metrics'][number]>();
    for (const [family, field] of [
      ['queen_messages_delivered_total', 'delivered'],
      ['queen_messages_acked_total', 'acked'],
    ] as const)
      for (const sample of families.get(family.replace(/_total$/, ''))?.samples ??
        families.get(family)?.samples ??
        []) {
        const { queue, consumer_group: group } = sample.labels;
        if (!queue?.startsWith(`${prefix}.`) || group === undefined) continue;
        const k = `${queue}\u0000${group}`;
        const row = series.get(k) ?? { instance, queue, group };
        row[field] = sample.value;
        series.set(k, row);
      }
    out.push(...series.values());
  }
  return out;
}

/** Every maintained counter of the model's queues against a recount from the rows, each pair read in one statement. */
async function recount(app: TestApp, prefix: string, when: string): Promise<EndState['counters']> {
  const like = `${prefix}.%`;
  const counters: EndState['counters'] = [];
  const recount = async (name: string, counted: string, actual: string) => {
    try {
      for (const r of await app.db.query<{ key: string; counted: string; actual: string }>(
        `select q.name as key, (${counted})::text as counted, (${actual})::text as actual from queen.queues q where q.name like $1`,
        [like],
      )) {
        counters.push({ name: `${name}, ${when}`, key: r.key, counted: Number(r.counted), actual: Number(r.actual) });
      }
    } catch (err) {
      counters.push({
        name: `${name}, ${when}`,
        key: 'error',
        counted: NaN,
        actual: NaN,
        error: (err as Error).message,
      });
    }
  };
  const stored = `(select count(*) from queen.messages m join queen.partitions p on p.id = m.partition_id where p.queue_id = q.id)`;
  await recount(
    'stored messages (queue_figures)',
    `(select f.stored from queen.queue_figures() f where f.queue_id = q.id)`,
    stored,
  );
  await recount(
    'messages ever pushed (queue_figures)',
    `(select f.messages from queen.queue_figures() f where f.queue_id = q.id)`,
    `(select coalesce(sum(p.head_offset), 0) from queen.partitions p where p.queue_id = q.id)`,
  );
  await recount(
    'stored bytes (queue_figures)',
    `(select f.bytes from queen.queue_figures() f where f.queue_id = q.id)`,
    `(select coalesce(sum(pg_column_size(m.payload)), 0) from queen.messages m join queen.partitions p on p.id = m.partition_id where p.queue_id = q.id)`,
  );
  await recount(
    'partitions (queue_figures)',
    `(select f.partitions from queen.queue_figures() f where f.queue_id = q.id)`,
    `(select count(*) from queen.partitions p where p.queue_id = q.id)`,
  );
  await recount(
    'committed (group_stats)',
    `(select coalesce(sum(s.committed), 0) from queen.group_stats s where s.queue_id = q.id)`,
    `(select coalesce(sum(c.committed_offset), 0) from queen.cursors c where c.queue_id = q.id)`,
  );
  await recount(
    'evicted (group_stats)',
    `(select coalesce(sum(s.evicted), 0) from queen.group_stats s where s.queue_id = q.id)`,
    `(select coalesce(sum(c.evicted), 0) from queen.cursors c where c.queue_id = q.id)`,
  );
  await recount(
    'dead letters (dead_letter_counts)',
    `(select coalesce(sum(n.n), 0) from queen.dead_letter_counts n join queen.partitions p on p.id = n.partition_id where p.queue_id = q.id)`,
    `(select count(*) from queen.dead_letters d join queen.partitions p on p.id = d.partition_id where p.queue_id = q.id)`,
  );
  // docs/decisions.md: a hole ahead of a cursor (a single delete, a range removed past a live
  // lease) counts in the offset-based lag until the cursor passes it, so lag equals the messages
  // left only once every cursor has moved, after the drain
  if (when === 'after the drain')
    await recount(
      'pending messages (lag of every group)',
      `(select coalesce(sum(g.lag), 0) from queen.group_figures() g where g.queue_id = q.id)`,
      `(select coalesce(sum((select count(*) from queen.messages m where m.partition_id = c.partition_id and m."offset" > c.committed_offset
        and not m."offset" = any(c.acked_offsets))), 0) from queen.cursors c where c.queue_id = q.id)`,
    );
  return counters;
}

/**
 * The seek preview of every group, to a random stored message's time (issue 17: it counted offsets,
 * not messages), against a recount: it replays the stored messages from that time on that the
 * group has done, and skips the stored ones before it that it has not. Quiet but for the job: a
 * preview counts only when two in a row agree, so that a removal between them is not taken for a
 * wrong count.
 */
async function previewSeeks(
  app: TestApp,
  model: Model,
  groups: { queue: string; group: string }[],
  r: Rng,
): Promise<EndState['counters']> {
  const out: EndState['counters'] = [];
  for (const { queue, group } of groups) {
    const stored = model.storedOf(queue);
    const timestamp = stored.length ? r.pick(stored).createdAt : new Date(clock() - 5000).toISOString();
    const path = `/api/v1/consumer-groups/${encodeURIComponent(group)}/queues/${encodeURIComponent(queue)}/seek/preview?timestamp=${encodeURIComponent(timestamp)}`;
    for (let attempt = 0; attempt < 3; attempt++) {
      const a = await app.api.get(path);
      const [counted] = await app.db.query<{ replayed: number; skipped: number }>(
        `select count(*) filter (where s.created_at >= $3::timestamptz and (m."offset" <= c.committed_offset or m."offset" = any (c.acked_offsets)))::int as replayed,
                count(*) filter (where s.created_at < $3::timestamptz and m."offset" > c.committed_offset and not (m."offset" = any (c.acked_offsets)))::int as skipped
         from queen.cursors c
         join queen.queues q on q.id = c.queue_id
         join queen.messages m on m.partition_id = c.partition_id
         join queen.segments s on s.partition_id = m.partition_id and s.first_offset = m.segment_offset
         where q.name = $1 and c.consumer_group = $2`,
        [queue, group, timestamp],
      );
      const b = await app.api.get(path);
      if (a.status !== 200 || b.status !== 200) {
        out.push({
          name: 'seek preview',
          key: `${group}@${queue}`,
          counted: NaN,
          actual: NaN,
          error: `${a.status} ${a.text.slice(0, 200)}`,
        });
        break;
      }
      if (a.body.replayed !== b.body.replayed || a.body.skipped !== b.body.skipped) continue;
      out.push({
        name: `seek preview to ${timestamp}: replayed`,
        key: `${group}@${queue}`,
        counted: a.body.replayed,
        actual: counted.replayed,
      });
      out.push({
        name: `seek preview to ${timestamp}: skipped`,
        key: `${group}@${queue}`,
        counted: a.body.skipped,
        actual: counted.skipped,
      });
      break;
    }
  }
  return out;
}
