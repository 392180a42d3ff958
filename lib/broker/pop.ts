import { sql } from 'drizzle-orm';
import { db, executePrepared } from '@/db/pool';
import { config } from '@/lib/config.mjs';
import { driverError, isPoolError, isStatementCancelled } from './errors';
import { uuidv7 } from '@/lib/uuid';
import { log } from '@/lib/log.mjs';
import { payloadText } from './crypto';
import { type EmptyReason, isEmptyReason } from './empty-reasons';
import { POP_SQL_ARGUMENTS, type PopParams, type PopRoute, readBy } from './pop-params';
import { draining } from './shutdown';
import { Waiter, waiters, type Round, type ScopeKey } from './waiters';
import { retryingConflicts } from './conflicts';

export interface PopTarget {
  /** undefined on the discovery route */
  queue?: string;
  /** the single-partition route */
  partition?: string;
}

export type PopOutcome = { kind: 'messages'; body: string } | { kind: 'empty'; reason: EmptyReason };

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
  /** queen.pop_or_why's one row of an empty pop on a queue route: 'paused' or 'idle' */
  empty_reason?: string | null;
};

/** An empty pop's outcome, from what queen.pop_or_why answered; undefined when it has messages. */
function emptyBecause(rows: PopRow[]): PopOutcome | undefined {
  if (rows.length === 0) return IDLE;
  const reason = rows[0].empty_reason;
  if (reason === undefined || reason === null) return undefined;
  return isEmptyReason(reason) ? { kind: 'empty', reason } : IDLE;
}

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

/** SQLSTATE of a pop refused while pop maintenance is on (sql/functions/pop.sql). */
export const MAINTENANCE = 'QM001';
const UNDER_FULL = 'QM002';

type Attempt = PopOutcome | { kind: 'hold'; ms: number };

/** `p_x => $n::type` for each parameter queen.pop takes (lib/broker/pop-params.ts). */
const popArguments = (p: PopParams) =>
  sql.join(
    POP_SQL_ARGUMENTS.map(({ name, arg, type }) => sql`${sql.raw(arg)} => ${p[name] ?? null}::${sql.raw(type)}`),
    sql`, `,
  );

/** What a parked pop passes in its entry of p_waiters: the parameters its scope does not fix. */
const waiterArguments = (p: PopParams) =>
  Object.fromEntries(POP_SQL_ARGUMENTS.filter((a) => !a.scope).map(({ name }) => [name, p[name]]));

const routeOf = (target: PopTarget): PopRoute =>
  target.queue === undefined ? 'discovery' : target.partition !== undefined ? 'partition' : 'queue';

const popCall = (
  target: PopTarget,
  p: PopParams,
  leaseId: string,
  holder: string,
  holdUnderFull: boolean,
  subject: string | null,
) => sql`
  select * from queen.pop_or_why(
    p_lease_id => ${leaseId}::uuid, p_queue => ${target.queue ?? null}::text,
    p_partition => ${target.partition ?? null}::text, ${popArguments(p)},
    p_holder => ${holder}::text, p_hold_under_full => ${holdUnderFull}::boolean, p_subject => ${subject}::text)`;

async function attempt(
  target: PopTarget,
  p: PopParams,
  leaseId: string,
  holder: string,
  holdUnderFull: boolean,
  subject: string | null,
): Promise<Attempt> {
  try {
    const { rows } = await retryingConflicts(() =>
      executePrepared<PopRow>(db(), popCall(target, p, leaseId, holder, holdUnderFull, subject)),
    );
    const why = emptyBecause(rows);
    if (why) return why;
    return { kind: 'messages', body: responseBody(target, p.consumerGroup, p.autoAck ? '' : leaseId, rows) };
  } catch (err) {
    if (isPoolError(err) || isStatementCancelled(err)) throw err; // 500s with a body, per the spec
    const e = driverError(err);
    if (e?.code === MAINTENANCE) return { kind: 'empty', reason: 'maintenance' };
    if (e?.code === UNDER_FULL) return { kind: 'hold', ms: Number((e as { detail?: string }).detail ?? 0) };
    log('pop').error(
      { code: e?.code, err: e?.message ?? String(err) },
      'the pop function failed; answering 204 (X-Queen-Empty: error)',
    );
    return { kind: 'empty', reason: 'error' };
  }
}

const SHUTTING_DOWN: PopOutcome = { kind: 'empty', reason: 'shutdown' };
const IDLE: PopOutcome = { kind: 'empty', reason: 'idle' };

/**
 * Why an empty pop found nothing, beyond `idle` (`paused`, `leased`, `retry-delay`, `window-buffer`,
 * `delayed`: queen.pop_empty_reason): asked once per answered pop, never per re-check of a parked
 * one. The discovery route spans queues and always says `idle`.
 */
async function whyEmpty(target: PopTarget, p: PopParams, outcome: PopOutcome): Promise<PopOutcome> {
  if (outcome.kind !== 'empty' || outcome.reason !== 'idle' || target.queue === undefined) return outcome;
  try {
    const { rows } = await db().execute<{ reason: string | null }>(
      sql`select queen.pop_empty_reason(${target.queue}, ${target.partition ?? null}::text, ${p.consumerGroup}) as reason`,
    );
    const reason = rows[0]?.reason;
    return isEmptyReason(reason) ? { kind: 'empty', reason } : outcome;
  } catch {
    return outcome; // only the header's explanation is lost; the answer is the same 204
  }
}

/**
 * One pop call. Without `wait` a single attempt; with it, the call parks in its scope
 * (waiters.ts), holding no database connection, until a claim of the scope serves it (after a
 * push, a released lease, the moment something becomes claimable by time, or a re-check),
 * `timeout` elapses, the client goes away or the server shuts down. A parked poll rides out a
 * database outage: a re-check that finds no connection keeps it waiting until its timeout, and
 * only then answers the 500.
 */
export async function pop(
  target: PopTarget,
  params: PopParams,
  holder: string,
  /** the client going away; asked for only by a pop that parks (a signal costs its making) */
  signalOf: () => AbortSignal,
  subject: string | null = null,
): Promise<PopOutcome> {
  if (draining()) return SHUTTING_DOWN;
  const p = readBy(routeOf(target), params);
  if (!p.wait) {
    // an empty answer's reason comes from the same call
    return (await attempt(target, p, uuidv7(), holder, false, subject)) as PopOutcome;
  }
  const key = scopeKey(target, p);
  // minPopWaitTime applies on the queue-scoped wildcard route only, never to a batch of one.
  const mayHold = p.batch > 1 && target.queue !== undefined && target.partition === undefined;
  const signal = signalOf();
  const outcome = await waiters.park(
    key,
    new Waiter(p, uuidv7(), holder, mayHold, Date.now() + p.timeout, subject),
    signal,
  );
  return signal.aborted ? outcome : whyEmptyParked(key, target, p, outcome);
}

/** What makes two parked pops' claims interchangeable (`p` as the route reads it: readBy). */
function scopeKey(target: PopTarget, p: PopParams): ScopeKey {
  return {
    queue: target.queue,
    partition: target.partition,
    namespace: p.namespace,
    task: p.task,
    group: p.consumerGroup,
    subscriptionMode: p.subscriptionMode,
    subscriptionFrom: p.subscriptionFrom,
  };
}

/** Parked pops of a scope timing out together ask why once (for a moment), not once each. */
const reasons = new Map<string, { at: number; reason: Promise<PopOutcome> }>();
function whyEmptyParked(
  key: ScopeKey,
  target: PopTarget,
  p: PopParams,
  outcome: PopOutcome,
): Promise<PopOutcome> | PopOutcome {
  if (outcome.kind !== 'empty' || outcome.reason !== 'idle' || target.queue === undefined) return outcome;
  const id = `${key.queue}\u0000${key.partition ?? ''}\u0000${key.group}`;
  const now = Date.now();
  const known = reasons.get(id);
  if (known && now - known.at < 250) return known.reason;
  if (reasons.size > 10_000) reasons.clear();
  const reason = whyEmpty(target, p, outcome);
  reasons.set(id, { at: now, reason });
  return reason;
}

type ClaimRow = PopRow & {
  waiter: number;
  hold_ms: number | null;
  next_in_ms: number | null;
  contended: boolean | null;
};

const claimCall = (key: ScopeKey, batch: Waiter[]) => sql`
  select * from queen.claim_for_waiters(
    p_queue => ${key.queue ?? null}::text, p_partition => ${key.partition ?? null}::text,
    p_namespace => ${key.namespace}::text, p_task => ${key.task}::text, p_group => ${key.group}::text,
    p_subscription_mode => ${key.subscriptionMode}::text, p_subscription_from => ${key.subscriptionFrom ?? null}::timestamptz,
    p_waiters => ${JSON.stringify(
      batch.map((w) => ({
        ...waiterArguments(w.params),
        leaseId: w.leaseId,
        holder: w.holder,
        subject: w.subject,
        hold: w.holding,
      })),
    )}::jsonb)`;

/** One claim for some parked pops of a scope, in their order (sql/functions/claim.sql). */
async function claimFor(key: ScopeKey, batch: Waiter[]): Promise<Round> {
  if (draining()) return { all: SHUTTING_DOWN };
  let rows: ClaimRow[];
  try {
    rows = (await retryingConflicts(() => executePrepared<ClaimRow>(db(), claimCall(key, batch)))).rows;
  } catch (err) {
    if (isPoolError(err) || isStatementCancelled(err)) return { failure: err };
    const e = driverError(err);
    if (e?.code === MAINTENANCE) return { all: { kind: 'empty', reason: 'maintenance' } };
    log('pop').error(
      { code: e?.code, err: e?.message ?? String(err) },
      'the claim for parked pops failed; answering 204 (X-Queen-Empty: error)',
    );
    return { all: { kind: 'empty', reason: 'error' } };
  }
  const target: PopTarget = { queue: key.queue, partition: key.partition };
  const round: Round = { served: new Map(), held: new Map() };
  const byWaiter = new Map<number, PopRow[]>();
  for (const r of rows) {
    if (r.waiter === 0) {
      round.dry = true;
      if (r.next_in_ms !== null) round.nextAt = Date.now() + Number(r.next_in_ms);
      round.contended = r.contended === true;
    } else if (r.hold_ms !== null) {
      round.held!.set(batch[r.waiter - 1], Number(r.hold_ms));
    } else {
      let list = byWaiter.get(r.waiter);
      if (!list) byWaiter.set(r.waiter, (list = []));
      list.push(r);
    }
  }
  for (const [n, list] of byWaiter) {
    const w = batch[n - 1];
    round.served!.set(w, {
      kind: 'messages',
      body: responseBody(target, key.group, w.params.autoAck ? '' : w.leaseId, list),
    });
  }
  return round;
}

type RecheckRow = { scope: number; ready: boolean; next_in_ms: number | null };

/** The instance-wide re-check of dry scopes: one statement for all of them. */
async function recheck(keys: ScopeKey[]): Promise<{ ready: boolean; nextAt?: number }[]> {
  const scopes = keys.map((k) => ({
    queue: k.queue ?? null,
    partition: k.partition ?? null,
    namespace: k.namespace,
    task: k.task,
    group: k.group,
  }));
  const { rows } = await db().execute<RecheckRow>(
    sql`select * from queen.recheck_scopes(${JSON.stringify(scopes)}::jsonb)`,
  );
  const out = keys.map(() => ({ ready: false }) as { ready: boolean; nextAt?: number });
  for (const r of rows)
    out[r.scope - 1] = {
      ready: r.ready,
      nextAt: r.next_in_ms !== null ? Date.now() + Number(r.next_in_ms) : undefined,
    };
  return out;
}

waiters.setDriver({ claim: claimFor, recheck, isPoolError, backoff: () => config().pop });

class DryRun extends Error {
  constructor(readonly rows: PopRow[]) {
    super('dry run');
  }
}

/**
 * What this pop would claim right now, without claiming it: the pop runs in a transaction that
 * is rolled back, so no lease, cursor, queue or subscription it would create survives.
 */
export async function previewPop(target: PopTarget, params: PopParams, holder: string): Promise<PopOutcome> {
  const p = readBy(routeOf(target), params);
  const leaseId = uuidv7(); // the pop needs one; it is rolled back with everything else
  try {
    await db().transaction(async (tx) => {
      throw new DryRun((await tx.execute<PopRow>(popCall(target, p, leaseId, holder, false, null))).rows);
    });
  } catch (err) {
    if (err instanceof DryRun) {
      return (
        emptyBecause(err.rows) ?? { kind: 'messages', body: responseBody(target, p.consumerGroup, null, err.rows) }
      );
    }
    if (driverError(err)?.code === MAINTENANCE) return { kind: 'empty', reason: 'maintenance' };
    throw err;
  }
  throw new Error('unreachable: the dry run always rolls back');
}
