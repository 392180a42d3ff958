import { sql } from 'drizzle-orm';
import { z } from 'zod';
import { db, type Executor, executePrepared } from '@/db/pool';
import { config } from '@/lib/config.mjs';
import { badRequest, driverError, HttpError, isPoolError, isStatementCancelled } from './errors';
import { name, parseWith } from './validate';
import { uuidv7 } from '@/lib/uuid';
import { encryptPayload } from './crypto';
import { withEncryptionFlags } from './encryption-flags';
import { wakeLocal, type PushScope } from './waiters';
import { retryingConflicts } from './conflicts';
import { stringifyExact } from '@/lib/exact-json';

export const pushBody = z.object({
  items: z.array(
    z.object({
      queue: name,
      partition: name.optional(),
      payload: z.unknown().optional(),
      transactionId: name.optional(),
    }),
  ),
});

export function parsePushBody(body: unknown) {
  return parseWith(pushBody, body).items;
}

export interface PushResult {
  index: number;
  transaction_id: string;
  status: 'queued' | 'duplicate';
  message_id: string;
  partition_id: string;
  trace_id: string | null;
  queueName: string;
}

/** A push result with what in-process wake-ups need besides (not on the wire). */
export interface Pushed extends PushResult {
  namespace: string;
  task: string;
}

type PushRow = {
  idx: number;
  transaction_id: string;
  status: 'queued' | 'duplicate';
  message_id: string;
  partition_id: string;
  trace_id: string | null;
  queue_name: string;
  namespace: string;
  task: string;
};

export interface ItemInput {
  queue: string;
  partition?: string;
  payload?: unknown;
  transactionId?: string;
  traceId?: string | null;
}

/** An item as queen.push() takes it, defaults filled in. */
export interface StoredItem {
  queue: string;
  partition: string;
  payload: unknown;
  transactionId: string;
  /** ignored: queen.push() assigns ids, increasing with the offset within a partition */
  messageId?: string;
  producerSub: string | null;
  traceId: string | null;
  encrypted?: boolean;
}

export function prepareItems(items: ItemInput[], producerSub: string | null): StoredItem[] {
  return items.map((item) => ({
    queue: item.queue,
    partition: item.partition ?? 'Default',
    payload: item.payload === undefined ? {} : item.payload,
    transactionId: item.transactionId ?? uuidv7(),
    producerSub,
    traceId: item.traceId ?? null,
  }));
}

/** Items as queen.push() takes them, as JSON: payloads of encrypted queues encrypted. */
export function toJson(items: StoredItem[], encrypted: ReadonlySet<string>): string {
  if (encrypted.size === 0) return stringifyExact(items);
  return stringifyExact(
    items.map((i) => (encrypted.has(i.queue) ? { ...i, payload: encryptPayload(i.payload), encrypted: true } : i)),
  );
}

/** queen.push() refused a push that would take a queue above its maxSize. */
const QUEUE_FULL = 'QM004';

/** Runs queen.push() on the given executor (the pool, or a transaction), in input order. */
export async function pushItems(
  exec: Executor,
  items: StoredItem[],
  encrypted: ReadonlySet<string>,
): Promise<Pushed[]> {
  try {
    const { rows } = await executePrepared<PushRow>(
      exec,
      sql`select * from queen.push(p_items => ${toJson(items, encrypted)}::jsonb)`,
    );
    return rows.map((r) => ({
      index: r.idx,
      transaction_id: r.transaction_id,
      status: r.status,
      message_id: r.message_id,
      partition_id: r.partition_id,
      trace_id: r.trace_id,
      queueName: r.queue_name,
      namespace: r.namespace,
      task: r.task,
    }));
  } catch (err) {
    return rethrowPushRefusal(err);
  }
}

/** What queen.push() refused, as the client's error: a payload PostgreSQL cannot store (400), a full queue (409). */
export function rethrowPushRefusal(err: unknown): never {
  const e = driverError(err) as { code?: string; message?: string; detail?: string } | undefined;
  // Class 22 (data exception): a payload PostgreSQL refuses, e.g. a lone surrogate escape.
  if (e?.code?.startsWith('22')) throw badRequest(`items: ${e.message}`);
  if (e?.code === QUEUE_FULL) {
    const f = JSON.parse(e.detail ?? '{}') as { queue: string; maxSize: number; unconsumed: number; pushed: number };
    throw new HttpError(409, '', {
      error: `queue ${JSON.stringify(f.queue)} is full: ${f.unconsumed} unconsumed messages, maxSize ${f.maxSize}; this push of ${f.pushed} was refused`,
      ...f,
    });
  }
  throw err;
}

// ---- group commit -------------------------------------------------------------------------

const MAX_ITEMS_PER_CALL = 10_000;

interface Waiting {
  items: StoredItem[];
  /** the partitions it writes to */
  lanes: string[];
  resolve: (results: PushResult[]) => void;
  reject: (err: unknown) => void;
}

const laneOf = (i: StoredItem) => `${i.queue}\u0000${i.partition}`;

/**
 * Group commit by partition. A push whose partitions no call in flight is writing to goes to the
 * database at once, beside the others; pushes that arrive while a call writes to one of their
 * partitions wait and then go together in one call, and so one segment per partition. Waiting
 * pushes keep their order per partition. Calls in flight are capped (PUSH_CALLS_IN_FLIGHT: the
 * cores, at most half the pool); past the cap, waiting pushes merge, whatever their partitions
 * (up to 10,000 items; each request is at most MAX_BODY_BYTES), so batch-1 pushes from many
 * connections cost the database what batched ones do. A
 * merged call that fails on one request's data is retried push by push, so one bad request fails
 * alone.
 */
class PushCoalescer {
  private waiting: Waiting[] = [];
  private busy = new Set<string>();
  private calls = 0;

  constructor(private readonly maxCalls: number) {}

  submit(items: StoredItem[]): Promise<PushResult[]> {
    return new Promise((resolve, reject) => {
      this.waiting.push({ items, lanes: [...new Set(items.map(laneOf))], resolve, reject });
      this.drain();
    });
  }

  private drain(): void {
    while (this.calls < this.maxCalls && this.waiting.length > 0) {
      const batch = this.take();
      if (batch.length === 0) return;
      const lanes = batch.flatMap((w) => w.lanes);
      for (const lane of lanes) this.busy.add(lane);
      this.calls++;
      void this.flush(batch).finally(() => {
        for (const lane of lanes) this.busy.delete(lane);
        this.calls--;
        this.drain();
      });
    }
  }

  /** The waiting pushes that can go now: none of their partitions in flight or owed to an earlier push. */
  private take(): Waiting[] {
    const blocked = new Set(this.busy);
    const batch: Waiting[] = [];
    const rest: Waiting[] = [];
    let count = 0;
    for (const w of this.waiting) {
      const free = w.lanes.every((l) => !blocked.has(l));
      if (free && (batch.length === 0 || count + w.items.length <= MAX_ITEMS_PER_CALL)) {
        batch.push(w);
        count += w.items.length;
      } else {
        rest.push(w);
        for (const l of w.lanes) blocked.add(l);
      }
    }
    this.waiting = rest;
    return batch;
  }

  private async flush(batch: Waiting[]): Promise<void> {
    const items = batch.length === 1 ? batch[0].items : batch.flatMap((w) => w.items);
    let results: Pushed[];
    try {
      results = await retryingConflicts(() => withEncryptionFlags((encrypted) => pushItems(db(), items, encrypted)));
    } catch (err) {
      // No connection or a timeout would only repeat for each push: all of them answer it now.
      if (batch.length === 1 || isPoolError(err) || isStatementCancelled(err)) {
        for (const w of batch) w.reject(err);
        return;
      }
      for (const w of batch) await this.flush([w]);
      return;
    }
    wakeLocal(scopesOf(results));
    let start = 0;
    for (const w of batch) {
      w.resolve(
        results
          .slice(start, start + w.items.length)
          .map(({ namespace: _n, task: _t, ...r }, i) => ({ ...r, index: i })),
      );
      start += w.items.length;
    }
  }
}

/** The distinct queues of some push results, with their namespace and task, and how many messages each received. */
export function scopesOf(results: Pushed[]): PushScope[] {
  const byQueue = new Map<string, PushScope>();
  for (const r of results) {
    const scope = byQueue.get(r.queueName) ?? { queue: r.queueName, namespace: r.namespace, task: r.task, pushed: 0 };
    if (r.status === 'queued') scope.pushed!++;
    byQueue.set(r.queueName, scope);
  }
  return [...byQueue.values()];
}

const slot = globalThis as unknown as { __queenPush?: PushCoalescer };

export function push(items: StoredItem[]): Promise<PushResult[]> {
  slot.__queenPush ??= new PushCoalescer(config().db.pushCallsInFlight);
  return slot.__queenPush.submit(items);
}
