import type { TestDatabase } from './db';
import type { client } from './http';

type Api = ReturnType<typeof client>;

export interface PopReply {
  status: number;
  empty: string | null;
  body: any;
  text: string;
}

/** GET a pop route with query parameters; `path` is the route after /api/v1/pop. */
export async function pop(
  api: Api,
  path: string,
  params: Record<string, string | number | boolean> = {},
  init?: RequestInit,
): Promise<PopReply> {
  const qs = new URLSearchParams(Object.entries(params).map(([k, v]) => [k, String(v)])).toString();
  const res = await api.get(`/api/v1/pop${path}${qs ? `?${qs}` : ''}`, init);
  return { status: res.status, empty: res.headers.get('x-queen-empty'), body: res.body, text: res.text };
}

export const popQueue = (
  api: Api,
  queue: string,
  params: Record<string, string | number | boolean> = {},
  init?: RequestInit,
) => pop(api, `/queue/${encodeURIComponent(queue)}`, params, init);

/** Pushes `count` messages to one partition, payload {seq}, transaction ids `${prefix}-${seq}`. */
export async function pushMany(
  api: Api,
  queue: string,
  partition: string,
  count: number,
  prefix = partition,
  start = 0,
) {
  const items = Array.from({ length: count }, (_, i) => ({
    queue,
    partition,
    payload: { seq: start + i },
    transactionId: `${prefix}-${start + i}`,
  }));
  for (let i = 0; i < items.length; i += 500) {
    const res = await api.push(items.slice(i, i + 500));
    if (res.status !== 201) throw new Error(`push failed: ${res.status} ${res.text}`);
  }
}

/** Acks every message of a pop reply as `status`, in one batch. */
export async function ackAll(api: Api, reply: PopReply, status: 'completed' | 'failed' = 'completed', error?: string) {
  const res = await api.post('/api/v1/ack/batch', {
    consumerGroup: reply.body.consumerGroup,
    acknowledgments: reply.body.messages.map((m: any) => ({
      transactionId: m.transactionId,
      partitionId: m.partitionId,
      leaseId: m.leaseId || null,
      status,
      error: error ?? null,
    })),
  });
  if (res.status !== 200) throw new Error(`ack failed: ${res.status} ${res.text}`);
  return res.body as any[];
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Ends a lease's time now, as its expiry would (the cursor, and the backlog row that mirrors it). */
export async function expireLease(db: TestDatabase, leaseId: string) {
  await db.query("update queen.cursors set lease_expires_at = now() - interval '1 second' where lease_id = $1", [
    leaseId,
  ]);
  await db.query(
    `update queen.backlog b set blocked_until = now() - interval '1 second' from queen.cursors c
    where c.lease_id = $1 and b.partition_id = c.partition_id and b.consumer_group = c.consumer_group`,
    [leaseId],
  );
}

/** The ids of a queue's partitions, by name. */
export const partitionIdsOf = async (api: Api, queue: string): Promise<Record<string, string>> =>
  Object.fromEntries(
    (await api.get(`/api/v1/resources/queues/${queue}`)).body.partitions.map((p: any) => [p.name, p.id]),
  );
