import { sql } from 'drizzle-orm';
import { db } from '@/db/pool';
import { log } from '@/lib/log.mjs';
import { metrics } from '@/lib/metrics/registry';
import { isUuid } from '@/lib/uuid';
import { retryingConflicts } from '../conflicts';
import { withEncryptionFlags } from '../encryption-flags';
import { badRequest, driverError, HttpError } from '../errors';
import { prepareItems, rethrowPushRefusal, scopesOf, toJson, type Pushed, type PushResult } from '../push';
import { parseWith } from '../validate';
import { wakeLocal } from '../waiters';
import { cycleBody } from './contracts';
import { stringifyExact } from '@/lib/exact-json';

/** queen_streams.cycle() refused the cycle (sql/functions/streams.sql): message = reason, detail = the source queue. */
const REFUSED = 'QS001';
/** queen_streams.cycle() found partition_id outside the query's source queue: a 400, message = the problem. */
const NOT_ITS_PARTITION = 'QS002';

// Never a lease id: a malformed one can only be refused, like any lease that is not the live one.
const NO_LEASE = '00000000-0000-0000-0000-000000000000';

type CycleRow = {
  queueName: string | null;
  pushResults: {
    idx: number;
    transaction_id: string;
    status: 'queued' | 'duplicate';
    message_id: string;
    partition_id: string;
    trace_id: string | null;
    queue_name: string;
    namespace: string;
    task: string;
  }[];
  ackResult: { success: true; count: number; lease_released: boolean; dlq: boolean } | null;
};

/**
 * POST /streams/v1/cycle: state ops, sink pushes and the source ack in one statement, so one
 * transaction (queen_streams.cycle()). A refusal, the ack's or a sink push's, undoes all of it and
 * answers 200 with success:false; the shard counts it afterwards.
 */
export async function runCycle(body: unknown, producerSub: string | null) {
  const b = parseWith(cycleBody, body);
  const started = performance.now();
  const group = b.consumer_group || '__QUEUE_MODE__';
  const ops = (b.state_ops ?? []).map((op) =>
    op.type === 'upsert'
      ? { type: op.type, key: op.key, value: op.value === undefined ? {} : op.value }
      : { type: op.type, key: op.key },
  );
  const items = prepareItems(
    (b.push_items ?? []).map((i) => ({
      queue: i.queue,
      partition: i.partition ?? undefined,
      payload: i.payload,
      transactionId: i.transactionId ?? undefined,
      traceId: i.traceId,
    })),
    producerSub,
  );
  const ack = b.ack
    ? {
        transactionId: b.ack.transactionId,
        leaseId: isUuid(b.ack.leaseId) ? b.ack.leaseId : NO_LEASE,
        status: b.ack.status,
        error: b.ack.error ?? null,
      }
    : null;
  const base = { query_id: b.query_id, partition_id: b.partition_id };
  let row: CycleRow;
  try {
    row = await retryingConflicts(() =>
      withEncryptionFlags(async (encrypted) => {
        const { rows } = await db().execute<{ r: CycleRow }>(sql`
          select queen_streams.cycle(${b.query_id}::uuid, ${b.partition_id}::uuid, ${group}, ${stringifyExact(ops)}::jsonb,
                                     ${toJson(items, encrypted)}::jsonb, ${ack === null ? null : JSON.stringify(ack)}::jsonb,
                                     ${b.release_lease ?? true}) as r`);
        return rows[0].r;
      }),
    );
  } catch (err) {
    const e = driverError(err);
    if (e?.code === NOT_ITS_PARTITION)
      throw badRequest(e.message ?? 'partition_id: not a partition of the source queue');
    const refusal = await refusalOf(err, b.partition_id);
    if (refusal === undefined) throw err;
    void db()
      .execute(sql`select queen_streams.record_refusal(${b.query_id}::uuid, ${b.partition_id}::uuid, ${refusal.error})`)
      .catch((e) => log('streams').warn({ err: driverError(e)?.message }, 'could not count a refused cycle'));
    observe(started, 'refused');
    return {
      success: false,
      ...base,
      queueName: refusal.queueName,
      error: refusal.error,
      state_ops_applied: 0,
      push_results: [],
      ack_result: null,
    };
  }
  const pushed: Pushed[] = (row.pushResults ?? []).map((r) => ({
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
  wakeLocal([...scopesOf(pushed), ...(row.ackResult?.lease_released && row.queueName ? [row.queueName] : [])]);
  observe(started, 'committed');
  return {
    success: true,
    ...base,
    queueName: row.queueName,
    state_ops_applied: ops.length,
    push_results: pushed.map(({ namespace: _n, task: _t, ...r }): PushResult => r),
    ack_result: row.ackResult,
  };
}

/** The reason a failed cycle gives the client, or undefined when the failure is not a refusal (a 500). */
async function refusalOf(
  err: unknown,
  partitionId: string,
): Promise<{ error: string; queueName: string | null } | undefined> {
  const e = driverError(err) as { code?: string; message?: string; detail?: string } | undefined;
  if (e?.code === REFUSED) return { error: e.message ?? 'refused', queueName: e.detail || null };
  let error: string;
  try {
    rethrowPushRefusal(err);
  } catch (refused) {
    if (!(refused instanceof HttpError)) return undefined;
    error = (refused.body as { error?: string } | undefined)?.error ?? refused.message;
  }
  const { rows } = await db().execute<{ name: string }>(
    sql`select q.name from queen.partitions p join queen.queues q on q.id = p.queue_id where p.id = ${partitionId}::uuid`,
  );
  return { error: error!, queueName: rows[0]?.name ?? null };
}

function observe(started: number, outcome: 'committed' | 'refused') {
  metrics().streamCycleDuration.observe({ outcome }, (performance.now() - started) / 1000);
}
