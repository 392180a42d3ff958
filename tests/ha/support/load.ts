// Load through a balancer for the production-topology tests: producers with transaction ids,
// consumers of several groups acking (and failing some batches), idle long polls. Every answer is
// counted; what the contract does not allow is kept as a failure with what came back.
import { sleep } from './procs';

export interface Outcome {
  /** `stream-pop`, `stream`: a streaming query's pops, and its state reads, registration and cycles (./stream.ts). */
  kind: 'push' | 'pop' | 'ack' | 'idle' | 'stream-pop' | 'stream';
  status: number | 'network' | 'hang';
  retryAfter?: string | null;
  empty?: string | null;
  text?: string;
  /** When the request was sent, and how long its answer took. */
  at: number;
  ms?: number;
}

export interface LoadOptions {
  base: string;
  queue: string;
  partitions: number;
  groups: string[];
  consumersPerGroup: number;
  /** Groups whose consumers ack every `failEvery`th batch as failed (redelivered after the retry delay). */
  failing?: Record<string, number>;
  producers: number;
  pushBatch: number;
  pushPauseMs: number;
  leaseSeconds: number;
  pollTimeoutMs: number;
  /** Idle long polls on a queue nobody pushes to until `feedIdle()`. */
  idle?: { queue: string; polls: number };
  /** 5xx answers are allowed when they carry Retry-After (a database outage); otherwise every 5xx is a failure. */
  allow5xxWithRetryAfter?: boolean;
}

/** A request that takes longer than this (beyond its own poll timeout) hangs. */
const HANG_MS = 20_000;

export class Load {
  readonly accepted = new Set<string>();
  readonly outcomes: Outcome[] = [];
  readonly failures: Outcome[] = [];
  /** group → partition → the seqs as first delivered */
  readonly firstDeliveries = new Map<string, Map<string, number[]>>();
  /** group → transaction id → deliveries */
  readonly delivered = new Map<string, Map<string, number>>();
  /** idle poll index → what it got once fed */
  readonly idleGot = new Map<number, string>();
  private stopping = false;
  private loops: Promise<void>[] = [];
  private idleLoops: Promise<void>[] = [];
  private idleStop = false;

  constructor(readonly o: LoadOptions) {
    for (const g of o.groups) {
      this.firstDeliveries.set(g, new Map());
      this.delivered.set(g, new Map());
    }
  }

  start() {
    for (let i = 0; i < this.o.producers; i++) this.loops.push(this.producer(i));
    for (const g of this.o.groups)
      for (let i = 0; i < this.o.consumersPerGroup; i++) this.loops.push(this.consumer(g, i));
    if (this.o.idle) for (let i = 0; i < this.o.idle.polls; i++) this.idleLoops.push(this.idlePoll(i));
  }

  /** Stops producing; consumers go on until every group has every accepted message committed (`drained`). */
  stopProducing() {
    this.producing = false;
  }

  async stop() {
    this.producing = false;
    this.stopping = true;
    this.idleStop = true;
    await Promise.all([...this.loops, ...this.idleLoops]);
  }

  count(kind: Outcome['kind'], pick: (o: Outcome) => boolean = () => true) {
    return this.outcomes.filter((o) => o.kind === kind && pick(o)).length;
  }

  private producing = true;

  /** One request, counted; what the contract does not allow is kept in `failures`. */
  async request(
    kind: Outcome['kind'],
    method: string,
    path: string,
    body?: unknown,
    waitMs = 0,
  ): Promise<{ outcome: Outcome; json?: any }> {
    const at = Date.now();
    let outcome: Outcome;
    let json: any;
    try {
      const res = await fetch(this.o.base + path, {
        method,
        headers: body ? { 'content-type': 'application/json' } : {},
        body: body ? JSON.stringify(body) : undefined,
        signal: AbortSignal.timeout(waitMs + HANG_MS),
      });
      const text = await res.text();
      try {
        json = text ? JSON.parse(text) : undefined;
      } catch {
        json = undefined;
      }
      outcome = {
        kind,
        status: res.status,
        retryAfter: res.headers.get('retry-after'),
        empty: res.headers.get('x-queen-empty'),
        text: res.status >= 300 ? text.slice(0, 200) : undefined,
        at,
      };
    } catch (err) {
      const e = err as Error;
      outcome = {
        kind,
        status: e.name === 'TimeoutError' ? 'hang' : 'network',
        text: `${e.message} ${(e.cause as Error | undefined)?.message ?? ''}`,
        at,
      };
    }
    outcome.ms = Date.now() - at;
    this.outcomes.push(outcome);
    if (!this.allowed(outcome)) this.failures.push(outcome);
    return { outcome, json };
  }

  private allowed(o: Outcome): boolean {
    if (typeof o.status !== 'number') return false;
    if (o.status >= 500) return this.o.allow5xxWithRetryAfter === true && !!o.retryAfter;
    if (o.kind === 'push') return o.status === 201;
    if (o.kind === 'pop' || o.kind === 'idle' || o.kind === 'stream-pop') return o.status === 200 || o.status === 204;
    return o.status === 200;
  }

  private async producer(index: number) {
    const mine = [...Array(this.o.partitions).keys()].filter((p) => p % this.o.producers === index);
    const seq = new Map(mine.map((p) => [p, 0]));
    let pending: { queue: string; partition: string; payload: unknown; transactionId: string }[] = [];
    let turn = 0;
    while (this.producing || pending.length) {
      if (!pending.length) {
        if (!this.producing) break;
        // one partition per call keeps each partition's pushes in order; failed calls are sent again first
        const p = mine[turn++ % mine.length];
        for (let i = 0; i < this.o.pushBatch; i++) {
          const s = seq.get(p)!;
          seq.set(p, s + 1);
          pending.push({
            queue: this.o.queue,
            partition: `p${p}`,
            payload: { seq: s },
            transactionId: `${this.o.queue}/p${p}/${s}`,
          });
        }
      }
      const { outcome } = await this.request('push', 'POST', '/api/v1/push', { items: pending });
      if (outcome.status === 201) {
        for (const item of pending) this.accepted.add(item.transactionId);
        pending = [];
        await sleep(this.o.pushPauseMs);
      } else {
        await sleep(outcome.retryAfter ? Math.min(Number(outcome.retryAfter) * 1000, 1000) : 200);
      }
    }
  }

  private async consumer(group: string, index: number) {
    let batches = 0;
    const failEvery = this.o.failing?.[group];
    while (!this.stopping) {
      const qs = new URLSearchParams({
        consumerGroup: group,
        wait: 'true',
        timeout: String(this.o.pollTimeoutMs),
        batch: '10',
        leaseSeconds: String(this.o.leaseSeconds),
      });
      const { outcome, json } = await this.request(
        'pop',
        'GET',
        `/api/v1/pop/queue/${this.o.queue}?${qs}`,
        undefined,
        this.o.pollTimeoutMs,
      );
      if (outcome.status !== 200) {
        if (outcome.status !== 204) await sleep(200);
        continue;
      }
      const first = this.firstDeliveries.get(group)!;
      const seen = this.delivered.get(group)!;
      for (const m of json.messages) {
        const n = seen.get(m.transactionId) ?? 0;
        seen.set(m.transactionId, n + 1);
        if (n === 0) first.set(m.partition, [...(first.get(m.partition) ?? []), m.data.seq]);
      }
      batches++;
      const fail = failEvery !== undefined && batches % failEvery === index % failEvery;
      await this.request('ack', 'POST', '/api/v1/ack/batch', {
        consumerGroup: group,
        acknowledgments: json.messages.map((m: any) => ({
          transactionId: m.transactionId,
          partitionId: m.partitionId,
          leaseId: m.leaseId,
          status: fail ? 'failed' : 'completed',
          error: fail ? 'load: a failed batch' : null,
        })),
      });
    }
  }

  private async idlePoll(index: number) {
    const idle = this.o.idle!;
    while (!this.idleStop) {
      const qs = new URLSearchParams({
        consumerGroup: 'idle',
        wait: 'true',
        timeout: String(this.o.pollTimeoutMs),
        autoAck: 'true',
        batch: '1',
      });
      const { outcome, json } = await this.request(
        'idle',
        'GET',
        `/api/v1/pop/queue/${idle.queue}?${qs}`,
        undefined,
        this.o.pollTimeoutMs,
      );
      if (outcome.status === 200) {
        this.idleGot.set(index, json.messages[0].transactionId);
        return;
      }
      if (outcome.status !== 204) await sleep(200);
    }
  }

  /** Pushes one message per idle poll and resolves once every idle poll got one. */
  async feedIdle(): Promise<number> {
    const idle = this.o.idle!;
    const pushedAt = Date.now();
    const items = Array.from({ length: idle.polls }, (_, i) => ({
      queue: idle.queue,
      partition: 'p',
      payload: { i },
      transactionId: `idle-${i}`,
    }));
    const res = await fetch(`${this.o.base}/api/v1/push`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ items }),
    });
    if (res.status !== 201) throw new Error(`idle push: ${res.status} ${await res.text()}`);
    await Promise.all(this.idleLoops);
    return Date.now() - pushedAt;
  }

  /** Statuses by kind, for a report line: `push 201×812 503×4`. */
  summary(): string {
    const by = new Map<string, Map<string, number>>();
    for (const o of this.outcomes) {
      const key = `${o.status}${o.empty ? `(${o.empty})` : ''}`;
      const m = by.get(o.kind) ?? new Map();
      m.set(key, (m.get(key) ?? 0) + 1);
      by.set(o.kind, m);
    }
    return [...by].map(([kind, m]) => `${kind} ${[...m].map(([s, n]) => `${s}×${n}`).join(' ')}`).join('; ');
  }
}
