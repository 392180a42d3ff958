import { sql } from 'drizzle-orm';
import { z } from 'zod';
import { db } from '@/db/pool';
import { badRequest, driverError } from '@/lib/http/errors';
import { parseWith } from '@/lib/http/validate';
import { uuidv7 } from '@/lib/uuid';
import { encryptPayload } from './crypto';
import { withEncryptionFlags } from './encryption-flags';
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

type PushRow = {
  idx: number;
  transaction_id: string;
  status: 'queued' | 'duplicate';
  message_id: string;
  partition_id: string;
  trace_id: string | null;
  queue_name: string;
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
  messageId: string;
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
    messageId: uuidv7(),
    producerSub,
    traceId: item.traceId ?? null,
  }));
}

function toJson(items: StoredItem[], encrypted: ReadonlySet<string>): string {
  if (encrypted.size === 0) return JSON.stringify(items);
  return JSON.stringify(items.map((i) => (encrypted.has(i.queue) ? { ...i, payload: encryptPayload(i.payload), encrypted: true } : i)));
}

export type Executor = Pick<ReturnType<typeof db>, 'execute'>;

/** Runs queen.push() on the given executor (the pool, or a transaction), in input order. */
export async function pushItems(exec: Executor, items: StoredItem[], encrypted: ReadonlySet<string>): Promise<PushResult[]> {
  try {
    const { rows } = await exec.execute<PushRow>(sql`select * from queen.push(${toJson(items, encrypted)}::jsonb)`);
    return rows.map((r) => ({
      index: r.idx,
      transaction_id: r.transaction_id,
      status: r.status,
      message_id: r.message_id,
      partition_id: r.partition_id,
      trace_id: r.trace_id,
      queueName: r.queue_name,
    }));
  } catch (err) {
    // Class 22 (data exception): a payload PostgreSQL refuses, e.g. a lone surrogate escape.
    if (driverError(err)?.code?.startsWith('22')) throw badRequest(`items: ${driverError(err)?.message}`);
    throw err;
  }
}

// ---- group commit -------------------------------------------------------------------------

const MAX_ITEMS_PER_CALL = 10_000;

interface Waiting {
  items: StoredItem[];
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

  submit(items: StoredItem[]): Promise<PushResult[]> {
    return new Promise((resolve, reject) => {
      this.queue.push({ items, resolve, reject });
      void this.drain();
    });
  }

  private take(): Waiting[] {
    let n = 0;
    let count = 0;
    while (n < this.queue.length && (n === 0 || count + this.queue[n].items.length <= MAX_ITEMS_PER_CALL)) {
      count += this.queue[n].items.length;
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
    const items = batch.length === 1 ? batch[0].items : batch.flatMap((w) => w.items);
    let results: PushResult[];
    try {
      results = await withEncryptionFlags((encrypted) => pushItems(db(), items, encrypted));
    } catch (err) {
      if (batch.length === 1) {
        batch[0].reject(err);
        return;
      }
      for (const w of batch) await this.flush([w]);
      return;
    }
    wakeQueues([...new Set(items.map((i) => i.queue))]);
    let start = 0;
    for (const w of batch) {
      w.resolve(results.slice(start, start + w.items.length).map((r, i) => ({ ...r, index: i })));
      start += w.items.length;
    }
  }
}

const slot = globalThis as unknown as { __queenPush?: PushCoalescer };

export function push(items: StoredItem[]): Promise<PushResult[]> {
  slot.__queenPush ??= new PushCoalescer();
  return slot.__queenPush.submit(items);
}
