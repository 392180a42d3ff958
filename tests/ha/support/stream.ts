// A streaming query under load, as the SDKs run one (../shared/spec/streams.md): workers pop
// leased batches of the source queue for the group `streams.<name>`, read the shard's state after
// the pop, and commit one cycle per partition: per-key counters in the state, one sink message per
// source message (its transaction id derived from the source's), and the ack of the batch's last
// message. A cycle answered 5xx or cut off is sent again as the SDKs do (3 times); a refused one
// (`success:false`) is left: its lease ends and the span redelivers. Every request goes through
// the load's bookkeeping, so the same rules hold: 5xx only with Retry-After, never a hang.
import type { Load } from './load';
import { sleep } from './procs';

export interface StreamOptions {
  name: string;
  source: string;
  sink: string;
  workers: number;
  batch: number;
  leaseSeconds: number;
  pollTimeoutMs: number;
}

/** A message's key in the query's state: `k<seq mod 3>`. */
export const keyOf = (seq: number) => `k${seq % 3}`;
/** The sink message's transaction id for a source message. */
export const sinkTransactionId = (source: string) => `${source}/counted`;

export class StreamQuery {
  queryId = '';
  readonly cycles = { committed: 0, refused: new Map<string, number>(), resent: 0, abandoned: 0 };
  /** Sink push results of committed cycles that were not `queued` (a message processed twice would show here). */
  readonly sinkDuplicates: string[] = [];
  private stopping = false;
  private loops: Promise<void>[] = [];

  constructor(
    private readonly load: Load,
    readonly o: StreamOptions,
  ) {}

  get group() {
    return `streams.${this.o.name}`;
  }

  async register() {
    for (;;) {
      const { outcome, json } = await this.load.request('stream', 'POST', '/streams/v1/queries', {
        name: this.o.name,
        source_queue: this.o.source,
        sink_queue: this.o.sink,
        config_hash: 'a'.repeat(64),
      });
      if (outcome.status === 200) {
        this.queryId = json.query_id;
        return;
      }
      await sleep(500);
    }
  }

  start() {
    for (let i = 0; i < this.o.workers; i++) this.loops.push(this.worker());
  }

  async stop() {
    this.stopping = true;
    await Promise.all(this.loops);
  }

  private async worker() {
    while (!this.stopping) {
      const qs = new URLSearchParams({
        consumerGroup: this.group,
        wait: 'true',
        timeout: String(this.o.pollTimeoutMs),
        batch: String(this.o.batch),
        leaseSeconds: String(this.o.leaseSeconds),
      });
      const popped = await this.load.request(
        'stream-pop',
        'GET',
        `/api/v1/pop/queue/${this.o.source}?${qs}`,
        undefined,
        this.o.pollTimeoutMs,
      );
      if (popped.outcome.status !== 200) {
        if (popped.outcome.status !== 204) await sleep(200);
        continue;
      }
      const byPartition = new Map<string, any[]>();
      for (const m of popped.json.messages)
        byPartition.set(m.partitionId, [...(byPartition.get(m.partitionId) ?? []), m]);
      for (const [partitionId, messages] of byPartition) await this.cycle(partitionId, messages);
    }
  }

  private async cycle(partitionId: string, messages: any[]) {
    // the state as committed, read after the pop: the lease makes this worker the shard's only writer
    const state = await this.load.request('stream', 'POST', '/streams/v1/state/get', {
      query_id: this.queryId,
      partition_id: partitionId,
      key_prefix: 'k',
    });
    if (state.outcome.status !== 200) {
      this.cycles.abandoned++; // the lease expires and the span redelivers
      return;
    }
    const counters = new Map<string, number>(state.json.rows.map((r: any) => [r.key, r.value.n]));
    for (const m of messages) counters.set(keyOf(m.data.seq), (counters.get(keyOf(m.data.seq)) ?? 0) + 1);
    const body = {
      query_id: this.queryId,
      partition_id: partitionId,
      consumer_group: this.group,
      state_ops: [...counters].map(([key, n]) => ({ type: 'upsert', key, value: { n } })),
      push_items: messages.map((m) => ({
        queue: this.o.sink,
        partition: m.partition ?? undefined,
        payload: { source: m.transactionId, seq: m.data.seq },
        transactionId: sinkTransactionId(m.transactionId),
      })),
      ack: { transactionId: messages[messages.length - 1].transactionId, leaseId: messages[0].leaseId },
    };
    for (let attempt = 0; ; attempt++) {
      const { outcome, json } = await this.load.request('stream', 'POST', '/streams/v1/cycle', body);
      if (outcome.status === 200) {
        if (json.success) {
          this.cycles.committed++;
          for (const r of json.push_results)
            if (r.status !== 'queued') this.sinkDuplicates.push(`${r.transaction_id} ${r.status}`);
        } else this.cycles.refused.set(json.error, (this.cycles.refused.get(json.error) ?? 0) + 1);
        return;
      }
      if (attempt >= 3) {
        this.cycles.abandoned++;
        return;
      }
      this.cycles.resent++;
      await sleep(outcome.retryAfter ? Math.min(Number(outcome.retryAfter) * 1000, 1000) : 200);
    }
  }
}
