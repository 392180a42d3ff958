import { sql } from 'drizzle-orm';
import { z } from 'zod';
import { db } from '@/db/pool';
import { badRequest, driverError } from '@/lib/http/errors';
import { parseWith } from '@/lib/http/validate';
import { uuidv7 } from '@/lib/uuid';
import { wakeQueues } from './waiters';

const pushBody = z.object({
  items: z.array(
    z.object({
      queue: z.string(),
      partition: z.string().optional(),
      payload: z.unknown().optional(),
      transactionId: z.string().optional(),
    }),
  ),
});

export interface PushResult {
  index: number;
  transaction_id: string;
  status: 'queued' | 'duplicate';
  message_id: string;
  partition_id: string;
  trace_id: string | null;
  queueName: string;
}

type PushRow = {
  idx: number;
  transaction_id: string;
  status: 'queued' | 'duplicate';
  message_id: string;
  partition_id: string;
  trace_id: string | null;
  queue_name: string;
};

/** Items as queen.push() takes them, serialized once: a JSON array text. */
export interface SerializedItems {
  json: string;
  count: number;
  queues: string[];
}

// A JSON text escape for U+0000 (not an escaped backslash followed by "u0000").
const NUL_ESCAPE = /(?<!\\)(?:\\\\)*\\u0000/;

export interface ItemInput {
  queue: string;
  partition?: string;
  payload?: unknown;
  transactionId?: string;
  traceId?: string | null;
}

/** Fills defaults and serializes; refuses what PostgreSQL's jsonb cannot store. */
export function serializeItems(items: ItemInput[], producerSub: string | null, where = 'items'): SerializedItems {
  const rows = items.map((item) => ({
    queue: item.queue,
    partition: item.partition ?? 'Default',
    payload: item.payload === undefined ? {} : item.payload,
    transactionId: item.transactionId ?? uuidv7(),
    messageId: uuidv7(),
    producerSub,
    traceId: item.traceId ?? null,
  }));
  const json = JSON.stringify(rows);
  if (NUL_ESCAPE.test(json)) {
    const i = rows.findIndex((r) => NUL_ESCAPE.test(JSON.stringify(r)));
    throw badRequest(`${where}[${i}]: contains the character U+0000, which PostgreSQL cannot store`);
  }
  return { json, count: rows.length, queues: [...new Set(rows.map((r) => r.queue))] };
}

export function parsePushBody(body: unknown) {
  return parseWith(pushBody, body).items;
}

function toResult(row: PushRow, index: number): PushResult {
  return {
    index,
    transaction_id: row.transaction_id,
    status: row.status,
    message_id: row.message_id,
    partition_id: row.partition_id,
    trace_id: row.trace_id,
    queueName: row.queue_name,
  };
}

export type Executor = Pick<ReturnType<typeof db>, 'execute'>;

/** Runs queen.push() on the given executor (the pool, or a transaction). */
export async function pushSerialized(exec: Executor, items: SerializedItems): Promise<PushResult[]> {
  try {
    const { rows } = await exec.execute<PushRow>(sql`select * from queen.push(${items.json}::jsonb)`);
    return rows.map((r) => toResult(r, r.idx));
  } catch (err) {
    // Class 22 (data exception): a payload PostgreSQL refuses, e.g. a lone surrogate escape.
    if (driverError(err)?.code?.startsWith('22')) throw badRequest(`items: ${driverError(err)?.message}`);
    throw err;
  }
}

// ---- group commit -------------------------------------------------------------------------

const MAX_ITEMS_PER_CALL = 10_000;

interface Waiting {
  items: SerializedItems;
  resolve: (results: PushResult[]) => void;
  reject: (err: unknown) => void;
}

/**
 * Concurrent pushes on this instance share one database call, and so one segment per partition:
 * while a call is in flight, new pushes queue; when it returns, everything queued goes in the
 * next call. A call that fails is retried request by request so one bad request fails alone.
 */
class PushCoalescer {
  private queue: Waiting[] = [];
  private inFlight = false;

  submit(items: SerializedItems): Promise<PushResult[]> {
    return new Promise((resolve, reject) => {
      this.queue.push({ items, resolve, reject });
      void this.drain();
    });
  }

  private take(): Waiting[] {
    let n = 0;
    let count = 0;
    while (n < this.queue.length && (n === 0 || count + this.queue[n].items.count <= MAX_ITEMS_PER_CALL)) {
      count += this.queue[n].items.count;
      n++;
    }
    return this.queue.splice(0, n);
  }

  private async drain(): Promise<void> {
    if (this.inFlight || this.queue.length === 0) return;
    this.inFlight = true;
    const batch = this.take();
    try {
      await this.flush(batch);
    } finally {
      this.inFlight = false;
      void this.drain();
    }
  }

  private async flush(batch: Waiting[]): Promise<void> {
    const merged: SerializedItems = {
      json: `[${batch.map((w) => w.items.json.slice(1, -1)).join(',')}]`,
      count: batch.reduce((n, w) => n + w.items.count, 0),
      queues: [...new Set(batch.flatMap((w) => w.items.queues))],
    };
    let results: PushResult[];
    try {
      results = await pushSerialized(db(), merged);
    } catch (err) {
      if (batch.length === 1) {
        batch[0].reject(err);
        return;
      }
      for (const w of batch) await this.flush([w]);
      return;
    }
    wakeQueues(merged.queues);
    let start = 0;
    for (const w of batch) {
      w.resolve(results.slice(start, start + w.items.count).map((r, i) => ({ ...r, index: i })));
      start += w.items.count;
    }
  }
}

const slot = globalThis as unknown as { __queenPush?: PushCoalescer };

export function push(items: SerializedItems): Promise<PushResult[]> {
  slot.__queenPush ??= new PushCoalescer();
  return slot.__queenPush.submit(items);
}
