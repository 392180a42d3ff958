import { sql } from 'drizzle-orm';
import { db } from '@/db/pool';
import { config } from '@/lib/config.mjs';
import { driverError, isPoolError, isStatementCancelled } from '@/lib/http/errors';
import { uuidv7 } from '@/lib/uuid';
import { log } from '@/lib/log.mjs';
import { WaitBackoff } from './backoff';
import { payloadText } from './crypto';
import type { PopParams } from './pop-params';
import { draining } from './shutdown';
import { waiters, type WaitScope } from './waiters';
import { retryingConflicts } from './conflicts';

export interface PopTarget {
  /** undefined on the discovery route */
  queue?: string;
  /** the single-partition route */
  partition?: string;
}

export type PopOutcome =
  | { kind: 'messages'; body: string }
  | { kind: 'empty'; reason: 'idle' | 'paused' | 'maintenance' | 'error' | 'shutdown' };

type PopRow = {
  queue_name: string;
  partition_id: string;
  partition_name: string;
  id: string;
  transaction_id: string;
  trace_id: string | null;
  payload: string;
  encrypted: boolean;
  producer_sub: string | null;
  created_at: string;
};

const str = (v: string | null) => (v === null ? 'null' : JSON.stringify(v));

/**
 * The 200 body, assembled as text: payloads come from PostgreSQL as JSON text and are spliced in
 * verbatim. `leaseId` is null in a dry run, whose lease was rolled back and never existed.
 */
function responseBody(target: PopTarget, group: string, leaseId: string | null, rows: PopRow[]): string {
  const lease = JSON.stringify(leaseId);
  const groupJson = JSON.stringify(group);
  const partitions = new Set<string>();
  const messages = rows.map((r) => {
    partitions.add(r.partition_id);
    return `{"id":"${r.id}","transactionId":${JSON.stringify(r.transaction_id)},"traceId":${str(r.trace_id)},"data":${payloadText(r.payload, r.encrypted)},"producerSub":${str(r.producer_sub)},"createdAt":"${r.created_at}","partitionId":"${r.partition_id}","partition":${JSON.stringify(r.partition_name)},"leaseId":${lease},"consumerGroup":${groupJson}}`;
  });
  const first = rows[0];
  return `{"success":true,"queue":${JSON.stringify(target.queue ?? '')},"partition":${JSON.stringify(first.partition_name)},"partitionId":"${first.partition_id}","leaseId":${lease},"consumerGroup":${groupJson},"messages":[${messages.join(',')}],"partitionsClaimed":${partitions.size}}`;
}

const MAINTENANCE = 'QM001';
const UNDER_FULL = 'QM002';

type Attempt = PopOutcome | { kind: 'hold'; ms: number };

const popCall = (target: PopTarget, p: PopParams, leaseId: string, holder: string, holdUnderFull: boolean) => sql`
  select * from queen.pop(
    ${target.queue ?? null}::text, ${target.partition ?? null}::text, ${p.namespace}, ${p.task},
    ${p.consumerGroup}, ${p.batch}::integer, ${target.partition !== undefined ? 1 : p.partitions}::integer,
    ${p.autoAck}::boolean, ${p.leaseSeconds}::integer, ${leaseId}::uuid, ${p.subscriptionMode},
    ${p.subscriptionFrom ?? null}::timestamptz, ${holder}, ${holdUnderFull}::boolean)`;

async function attempt(target: PopTarget, p: PopParams, leaseId: string, holder: string, holdUnderFull: boolean): Promise<Attempt> {
  try {
    const { rows } = await retryingConflicts(() => db().execute<PopRow>(popCall(target, p, leaseId, holder, holdUnderFull)));
    if (rows.length === 0) return IDLE;
    return { kind: 'messages', body: responseBody(target, p.consumerGroup, p.autoAck ? '' : leaseId, rows) };
  } catch (err) {
    if (isPoolError(err) || isStatementCancelled(err)) throw err; // 500s with a body, per the spec
    const e = driverError(err);
    if (e?.code === MAINTENANCE) return { kind: 'empty', reason: 'maintenance' };
    if (e?.code === UNDER_FULL) return { kind: 'hold', ms: Number((e as { detail?: string }).detail ?? 0) };
    log('pop').error({ code: e?.code, err: e?.message ?? String(err) }, 'the pop function failed; answering 204 (X-Queen-Empty: error)');
    return { kind: 'empty', reason: 'error' };
  }
}

const SHUTTING_DOWN: PopOutcome = { kind: 'empty', reason: 'shutdown' };
const IDLE: PopOutcome = { kind: 'empty', reason: 'idle' };

/**
 * An empty pop that met a pause says so (`paused`), else `idle`: asked once per answered pop,
 * never per re-check of a parked one. The discovery route spans queues and always says `idle`.
 */
async function whyEmpty(target: PopTarget, p: PopParams, outcome: PopOutcome): Promise<PopOutcome> {
  if (outcome.kind !== 'empty' || outcome.reason !== 'idle' || target.queue === undefined) return outcome;
  try {
    const { rows } = await db().execute<{ reason: string | null }>(
      sql`select queen.pop_empty_reason(${target.queue}, ${target.partition ?? null}::text, ${p.consumerGroup}) as reason`,
    );
    return rows[0]?.reason === 'paused' ? { kind: 'empty', reason: 'paused' } : outcome;
  } catch {
    return outcome; // only the header's explanation is lost; the answer is the same 204
  }
}

/**
 * One pop call. Without `wait` a single attempt; with it, the call parks between attempts,
 * holding no database connection, until a push to its scope wakes it, its re-check interval
 * passes (backing off after repeated empty waits), `timeout` elapses, the client goes away or the
 * server shuts down. A parked poll rides out a database outage: a re-check that finds no
 * connection keeps it waiting (backing off) until its timeout, and only then answers the 500.
 */
export async function pop(target: PopTarget, p: PopParams, holder: string, signal: AbortSignal): Promise<PopOutcome> {
  const outcome = await popOrIdle(target, p, holder, signal);
  return signal.aborted ? outcome : whyEmpty(target, p, outcome);
}

async function popOrIdle(target: PopTarget, p: PopParams, holder: string, signal: AbortSignal): Promise<PopOutcome> {
  if (draining()) return SHUTTING_DOWN;
  const leaseId = uuidv7();
  // minPopWaitTime applies on the queue-scoped wildcard route only, never to a batch of one.
  const mayHold = p.wait && p.batch > 1 && target.queue !== undefined && target.partition === undefined;
  if (!p.wait) return (await attempt(target, p, leaseId, holder, false)) as PopOutcome;

  const deadline = Date.now() + p.timeoutMs;
  const scope: WaitScope = target.queue !== undefined ? { queue: target.queue } : { namespace: p.namespace, task: p.task };
  const waiter = waiters.register(scope);
  const backoff = new WaitBackoff(config().pop);
  let holdUntil: number | undefined;
  let outage: unknown; // the last re-check's failure to reach the database
  try {
    for (let first = true; ; first = false) {
      waiter.takeWake();
      if (draining()) return SHUTTING_DOWN;
      const holding = mayHold && (holdUntil === undefined || Date.now() < holdUntil);
      let result: Attempt;
      try {
        result = await attempt(target, p, leaseId, holder, holding);
        outage = undefined;
      } catch (err) {
        if (first || !isPoolError(err)) throw err;
        outage = err;
        result = IDLE;
      }
      if (result.kind === 'messages' || (result.kind === 'empty' && result.reason !== 'idle')) return result;
      if (result.kind === 'hold') {
        holdUntil ??= Math.min(Date.now() + result.ms, deadline);
        if (Date.now() >= holdUntil) continue; // the hold is over: claim what there is, even past the deadline
      }
      const now = Date.now();
      if (outage !== undefined && now >= deadline) throw outage;
      if (now >= deadline || signal.aborted) return IDLE;
      const until = holdUntil !== undefined && holdUntil > now ? Math.min(deadline, holdUntil) : deadline;
      backoff.after(await waiter.wait(Math.min(backoff.interval, until - now), signal));
      if (signal.aborted) return IDLE;
    }
  } finally {
    waiters.unregister(waiter);
  }
}

class DryRun extends Error {
  constructor(readonly rows: PopRow[]) {
    super('dry run');
  }
}

/**
 * What this pop would claim right now, without claiming it: the pop runs in a transaction that
 * is rolled back, so no lease, cursor, queue or subscription it would create survives.
 */
export async function previewPop(target: PopTarget, p: PopParams, holder: string): Promise<PopOutcome> {
  const leaseId = uuidv7(); // the pop needs one; it is rolled back with everything else
  try {
    await db().transaction(async (tx) => {
      throw new DryRun((await tx.execute<PopRow>(popCall(target, p, leaseId, holder, false))).rows);
    });
  } catch (err) {
    if (err instanceof DryRun) {
      if (err.rows.length === 0) return whyEmpty(target, p, IDLE);
      return { kind: 'messages', body: responseBody(target, p.consumerGroup, null, err.rows) };
    }
    if (driverError(err)?.code === MAINTENANCE) return { kind: 'empty', reason: 'maintenance' };
    throw err;
  }
  throw new Error('unreachable: the dry run always rolls back');
}
