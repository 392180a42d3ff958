/**
 * Parked long-poll pops (issue 18). Pops whose claims are interchangeable (same queue or discovery
 * filter, partition, consumer group and subscription) park in one scope, which makes one claim
 * attempt at a time for all of them: in their order of arrival, each with its own lease and
 * budget, until the scope is dry (sql/functions/claim.sql). The rest stay parked without touching
 * the database. A scope found dry stays quiet until something can change that: a push or a
 * released lease (woken in process or by NOTIFY), the next moment something of the scope becomes
 * claimable by time (a timer armed from what the database said), or the contract's re-check
 * interval, which all dry scopes of the instance share in one statement.
 *
 * A wake is only a hint: the claim decides. A wake that arrives while a claim is running makes
 * the scope claim again afterwards, so none is lost between "found nothing" and "parked".
 */
import { log } from '@/lib/log.mjs';
import { WaitBackoff, type BackoffSettings } from './backoff';
import type { PopParams } from './pop-params';
import type { PopOutcome } from './pop';

export interface PushScope {
  queue: string;
  namespace?: string;
  task?: string;
  /** messages the push stored (a hint: the first claim of the wake covers that many waiters) */
  pushed?: number;
}

/** What makes the claims of parked pops interchangeable. */
export interface ScopeKey {
  /** undefined on the discovery route */
  queue?: string;
  /** the single-partition route */
  partition?: string;
  /** the discovery filter ('' for any); '' on the queue routes */
  namespace: string;
  task: string;
  group: string;
  subscriptionMode: string;
  subscriptionFrom?: string;
}

/** What one claim attempt for some waiters of a scope gave. */
export interface Round {
  served?: Map<Waiter, PopOutcome>;
  /** waiters whose under-full batch minPopWaitTime holds back: how long (ms) */
  held?: Map<Waiter, number>;
  /** a waiter found nothing: nothing of the scope is claimable now */
  dry?: boolean;
  /** when dry: the next moment (epoch ms) something becomes claimable by time */
  nextAt?: number;
  /** when dry: ready rows remain that another transaction holds (its commit wakes nobody) */
  contended?: boolean;
  /** the attempt did not happen (no connection, a cancelled statement) */
  failure?: unknown;
  /** every waiter of the scope answers this (maintenance, an unexpected failure, shutdown) */
  all?: PopOutcome;
}

/** The database side, provided by the pop module. */
export interface ScopeDriver {
  claim(key: ScopeKey, batch: Waiter[]): Promise<Round>;
  recheck(keys: ScopeKey[]): Promise<{ ready: boolean; nextAt?: number }[]>;
  isPoolError(err: unknown): boolean;
  backoff(): BackoffSettings;
}

const IDLE: PopOutcome = { kind: 'empty', reason: 'idle' };
const FIRST_ROUND = 8; // waiters of a wake's first claim; later rounds of the same wake grow
const MAX_ROUND = 256;
const RECHECK_CHUNK = 500;
const RECHECK_SLACK_MS = 25;
const MAX_TIMER_MS = 2 ** 31 - 1;
const CONTENDED_RETRIES = 10; // then the re-check interval takes over (a long-held lock, or a row no claim can take)
const CONTENDED_STEP_MS = 10;

export class Waiter {
  holdUntil?: number;
  /** the last claim or re-check failed to reach the database */
  outage?: unknown;
  /** has been part of a claim attempt */
  tried = false;
  /** part of the claim running now: that claim answers it, whatever its deadline says meanwhile */
  claiming = false;
  settled = false;
  scope?: Scope;
  readonly done: Promise<PopOutcome>;
  private resolveDone!: (o: PopOutcome) => void;
  private rejectDone!: (err: unknown) => void;
  private deadlineTimer?: NodeJS.Timeout;
  private holdTimer?: NodeJS.Timeout;
  private signal?: AbortSignal;
  private onAbort = () => this.settle(IDLE);

  constructor(
    readonly params: PopParams,
    readonly leaseId: string,
    readonly holder: string,
    /** minPopWaitTime may hold this pop's under-full batch back */
    readonly mayHold: boolean,
    readonly deadline: number,
    /** with auth on, the token's subject, recorded on the lease beside the holder */
    readonly subject: string | null = null,
  ) {
    this.done = new Promise((resolve, reject) => {
      this.resolveDone = resolve;
      this.rejectDone = reject;
    });
  }

  /** Whether this pop's claim may be held back now. */
  get holding(): boolean {
    return this.mayHold && (this.holdUntil === undefined || Date.now() < this.holdUntil);
  }

  start(signal: AbortSignal): void {
    this.signal = signal;
    if (signal.aborted) return this.settle(IDLE);
    signal.addEventListener('abort', this.onAbort, { once: true });
    this.deadlineTimer = setTimeout(
      () => this.expire(),
      Math.min(MAX_TIMER_MS, Math.max(0, this.deadline - Date.now())),
    );
  }

  /** Its minPopWaitTime hold ends (or the hold was capped by the deadline): one more claim. */
  hold(ms: number): void {
    if (this.holdUntil !== undefined) return;
    this.holdUntil = Math.min(Date.now() + ms, this.deadline);
    this.holdTimer = setTimeout(() => this.scope?.due(this), Math.max(0, this.holdUntil - Date.now()));
  }

  private expire(): void {
    // What the running claim takes for it is committed for it: it answers when the claim returns.
    if (this.settled || this.claiming) return;
    // a held batch is claimed at the deadline, whatever it holds: the hold never outlives the timeout
    if (this.holdUntil !== undefined && this.scope) return this.scope.due(this);
    // a pop always gets one claim, unless its scope is known to be dry
    if (!this.tried && this.scope && !this.scope.dry) return this.scope.due(this);
    this.finish();
  }

  /** Nothing for it by its deadline: 204, or the outage's 500 when the database stayed out of reach. */
  finish(): void {
    if (this.outage !== undefined) this.fail(this.outage);
    else this.settle(IDLE);
  }

  settle(outcome: PopOutcome): void {
    if (this.settled) return;
    this.cleanup();
    this.resolveDone(outcome);
  }

  fail(err: unknown): void {
    if (this.settled) return;
    this.cleanup();
    this.rejectDone(err);
  }

  private cleanup(): void {
    this.settled = true;
    clearTimeout(this.deadlineTimer);
    clearTimeout(this.holdTimer);
    this.signal?.removeEventListener('abort', this.onAbort);
    this.scope?.remove(this);
  }
}

type WakeReason = 'entry' | 'push' | 'timer' | 'recheck' | 'hold' | 'all';

export class Scope {
  /** in order of arrival */
  readonly waiters = new Set<Waiter>();
  /** held waiters whose hold is over: first in the next claim */
  private dueWaiters = new Set<Waiter>();
  private running = false;
  private again = false;
  /** the last claim found nothing, and nothing woke the scope since */
  dry = false;
  recheckAt = 0;
  private timeTimer?: NodeJS.Timeout;
  private timeAt?: number;
  private contention = 0;
  /** messages the wakes since the last claim announced */
  private hint = 0;
  /** timer wake-ups in a row that served nothing: the next timer waits longer (never a tight loop) */
  private idleTimers = 0;
  readonly backoff: WaitBackoff;

  constructor(
    readonly id: string,
    readonly key: ScopeKey,
    private readonly registry: WaiterRegistry,
  ) {
    this.backoff = new WaitBackoff(registry.driver().backoff());
  }

  get idle(): boolean {
    return !this.running;
  }

  matches(push: PushScope): boolean {
    if (this.key.queue !== undefined) return this.key.queue === push.queue;
    if (push.namespace === undefined) return false; // an in-process wake carries no scope
    return (
      (!this.key.namespace || this.key.namespace === push.namespace) && (!this.key.task || this.key.task === push.task)
    );
  }

  add(w: Waiter): void {
    w.scope = this;
    this.waiters.add(w);
    // a scope known dry stays so until something wakes it: the newcomer parks without a query
    if (!this.dry) this.request('entry');
  }

  remove(w: Waiter): void {
    this.waiters.delete(w);
    this.dueWaiters.delete(w);
    if (this.waiters.size === 0 && !this.running) this.registry.drop(this);
  }

  due(w: Waiter): void {
    if (w.settled) return;
    this.dueWaiters.add(w);
    this.request('hold');
  }

  /** Something may have become claimable: the backoff starts over, as a wake resets it. */
  wake(reason: WakeReason = 'push', pushed = 0): void {
    this.hint += pushed;
    this.backoff.after(true);
    this.dry = false;
    this.request(reason);
  }

  request(reason: WakeReason): void {
    if (this.running) {
      // A newcomer needs no claim of its own: a dry answer of the running claim holds for it too,
      // and a claim that served everyone it covered goes on to the next waiters.
      if (reason !== 'entry') this.again = true;
      return;
    }
    void this.run(reason);
  }

  /** Due at its time: something of the scope becomes claimable (lease expiry, delay, pause end). */
  armTime(at: number | undefined): void {
    if (at === undefined || (this.timeAt !== undefined && this.timeAt <= at)) return;
    clearTimeout(this.timeTimer);
    this.timeAt = at;
    this.timeTimer = setTimeout(
      () => {
        this.timeAt = undefined;
        this.timeTimer = undefined;
        if (this.waiters.size === 0) return;
        this.dry = false;
        this.request('timer');
      },
      Math.min(
        MAX_TIMER_MS,
        Math.max(at - Date.now() + 2, this.idleTimers > 2 ? Math.min(this.backoff.interval, 2 ** this.idleTimers) : 0),
      ),
    );
  }

  /** Dropped from the registry: no timer of its own outlives it. */
  dispose(): void {
    clearTimeout(this.timeTimer);
    this.timeTimer = undefined;
    this.timeAt = undefined;
  }

  /** Notifications may have been lost: a running claim goes again, a dry scope is re-checked now. */
  recheckSoon(): void {
    if (this.running) this.again = true;
    else if (this.dry) {
      this.backoff.after(true);
      this.recheckAt = 0;
    }
  }

  private nextBatch(size: number, heldThisRun: Set<Waiter>): Waiter[] {
    const batch: Waiter[] = [];
    for (const w of this.dueWaiters) if (batch.length < size && !w.settled) batch.push(w);
    this.dueWaiters.clear();
    for (const w of this.waiters) {
      if (batch.length >= size) break;
      if (!w.settled && !heldThisRun.has(w) && !batch.includes(w)) batch.push(w);
    }
    return batch;
  }

  private async run(reason: WakeReason): Promise<void> {
    this.running = true;
    clearTimeout(this.timeTimer);
    this.timeTimer = undefined;
    this.timeAt = undefined;
    const stats = this.registry.stats;
    stats.wakeUps[reason] = (stats.wakeUps[reason] ?? 0) + 1;
    let served = 0;
    let size = Math.min(MAX_ROUND, Math.max(FIRST_ROUND, this.hint + 1));
    this.hint = 0;
    const heldThisRun = new Set<Waiter>();
    try {
      for (;;) {
        this.again = false;
        size = Math.min(MAX_ROUND, Math.max(size, this.hint + 1)); // a push during the last claim
        this.hint = 0;
        const batch = this.nextBatch(size, heldThisRun);
        if (batch.length === 0) break;
        stats.claims++;
        let round: Round;
        const started = performance.now();
        for (const w of batch) w.claiming = true;
        try {
          round = await this.registry.driver().claim(this.key, batch);
        } catch (err) {
          round = { failure: err };
        }
        const claimed = performance.now();
        const servedNow = this.apply(batch, round, heldThisRun);
        served += servedNow;
        log('parked').debug(
          {
            queue: this.key.queue ?? null,
            partition: this.key.partition ?? null,
            group: this.key.group,
            reason,
            waiters: batch.length,
            served: servedNow,
            dry: round.dry === true,
            claimMs: +(claimed - started).toFixed(1),
            applyMs: +(performance.now() - claimed).toFixed(1),
            parked: this.waiters.size,
          },
          'claim for parked pops',
        );
        if (round.failure !== undefined || round.all) {
          this.dry = true; // until the re-check interval (or a wake) tries again
          break;
        }
        if (round.dry) {
          this.dry = true;
          this.armTime(round.nextAt);
          if (!round.contended) this.contention = 0;
          else if (++this.contention <= CONTENDED_RETRIES)
            this.armTime(Date.now() + CONTENDED_STEP_MS * this.contention);
          if (!this.again) break;
          heldThisRun.clear();
          continue;
        }
        if (this.again) {
          heldThisRun.clear(); // a push may have filled what was held
          continue;
        }
        const left = [...this.waiters].some((w) => !w.settled && !heldThisRun.has(w) && !batch.includes(w));
        if (!left) break;
        size = Math.min(size * 4, MAX_ROUND);
      }
    } finally {
      this.running = false;
      this.idleTimers = reason === 'timer' && served === 0 ? this.idleTimers + 1 : 0;
      stats.served += served;
      stats.servedPerWakeUp.push(served);
      if (stats.servedPerWakeUp.length > 1000) stats.servedPerWakeUp.splice(0, 500);
      if (this.waiters.size === 0) this.registry.drop(this);
      else if (this.dry) {
        this.recheckAt = Date.now() + this.backoff.interval;
        this.registry.scheduleRecheck(this.recheckAt);
      }
    }
  }

  /** Hands the round's results to its waiters; how many were served. */
  private apply(batch: Waiter[], round: Round, heldThisRun: Set<Waiter>): number {
    const now = Date.now();
    let served = 0;
    if (round.all) {
      for (const w of [...this.waiters]) w.settle(round.all);
      return 0;
    }
    for (const w of batch) {
      const first = !w.tried;
      w.tried = true;
      w.claiming = false;
      if (w.settled) continue; // its client went away while its claim ran
      if (round.failure !== undefined) {
        // a parked pop rides out a database outage until its deadline; a new one answers it now
        if (first || !this.registry.driver().isPoolError(round.failure)) w.fail(round.failure);
        else if (now >= w.deadline) w.fail(round.failure);
        else w.outage = round.failure;
        continue;
      }
      w.outage = undefined;
      const outcome = round.served?.get(w);
      if (outcome) {
        w.settle(outcome);
        served++;
        continue;
      }
      const held = round.held?.get(w);
      if (held !== undefined) {
        heldThisRun.add(w);
        w.hold(held);
        if (w.holdUntil! <= now) {
          this.dueWaiters.add(w);
          this.again = true;
        }
        continue;
      }
      if (now >= w.deadline) w.finish();
    }
    return served;
  }
}

export interface ParkStats {
  wakeUps: Record<string, number>;
  /** claim statements run for parked pops */
  claims: number;
  /** parked pops answered with messages */
  served: number;
  /** waiters served by each recent wake-up (the last few hundred) */
  servedPerWakeUp: number[];
  /** instance-wide re-check statements, and the scopes they covered */
  rechecks: number;
  recheckedScopes: number;
}

export class WaiterRegistry {
  private scopes = new Map<string, Scope>();
  private byQueue = new Map<string, Set<Scope>>();
  private discovery = new Set<Scope>();
  private scopeDriver?: ScopeDriver;
  private recheckTimer?: NodeJS.Timeout;
  private recheckTimerAt = Infinity;
  private rechecking = false;
  readonly stats: ParkStats = {
    wakeUps: {},
    claims: 0,
    served: 0,
    servedPerWakeUp: [],
    rechecks: 0,
    recheckedScopes: 0,
  };

  setDriver(driver: ScopeDriver): void {
    this.scopeDriver = driver;
  }

  driver(): ScopeDriver {
    if (!this.scopeDriver) throw new Error('no scope driver: the pop module sets it');
    return this.scopeDriver;
  }

  /** Parks a pop in its scope; settles with its outcome. */
  park(key: ScopeKey, w: Waiter, signal: AbortSignal): Promise<PopOutcome> {
    const id = JSON.stringify([
      key.queue ?? null,
      key.partition ?? null,
      key.namespace,
      key.task,
      key.group,
      key.subscriptionMode,
      key.subscriptionFrom ?? null,
    ]);
    let scope = this.scopes.get(id);
    if (!scope) {
      scope = new Scope(id, key, this);
      this.scopes.set(id, scope);
      if (key.queue !== undefined) {
        let set = this.byQueue.get(key.queue);
        if (!set) this.byQueue.set(key.queue, (set = new Set()));
        set.add(scope);
      } else {
        this.discovery.add(scope);
      }
    }
    w.start(signal);
    if (!w.settled) scope.add(w);
    return w.done;
  }

  drop(scope: Scope): void {
    if (this.scopes.get(scope.id) !== scope) return;
    scope.dispose();
    this.scopes.delete(scope.id);
    if (scope.key.queue === undefined) this.discovery.delete(scope);
    else {
      const set = this.byQueue.get(scope.key.queue);
      set?.delete(scope);
      if (set?.size === 0) this.byQueue.delete(scope.key.queue);
    }
  }

  wake(push: PushScope): void {
    const pushed = push.pushed ?? 0;
    this.byQueue.get(push.queue)?.forEach((s) => s.wake('push', pushed));
    if (push.namespace !== undefined) for (const s of this.discovery) if (s.matches(push)) s.wake('push', pushed);
  }

  /** A queue of unknown namespace and task: its own scopes, and every discovery scope. */
  wakeUnscoped(queue: string): void {
    this.byQueue.get(queue)?.forEach((s) => s.wake('push'));
    this.discovery.forEach((s) => s.wake('push'));
  }

  /** Every scope claims now (shutdown: each answers its waiters without a query). */
  wakeAll(): void {
    for (const s of this.scopes.values()) s.wake('all');
  }

  /**
   * The LISTEN connection is back and what was notified meanwhile is lost: every dry scope is
   * re-checked at once, in the one re-check statement, rather than each claiming.
   */
  recheckAll(): void {
    for (const s of this.scopes.values()) s.recheckSoon();
    this.scheduleRecheck();
  }

  /** Parked pops on this instance. */
  get size(): number {
    let n = 0;
    for (const s of this.scopes.values()) n += s.waiters.size;
    return n;
  }

  /** Parked pops per scope, largest first. */
  scopeSizes(limit = 20): { scope: ScopeKey; parked: number }[] {
    return [...this.scopes.values()]
      .map((s) => ({ scope: s.key, parked: s.waiters.size }))
      .sort((a, b) => b.parked - a.parked)
      .slice(0, limit);
  }

  get scopeCount(): number {
    return this.scopes.size;
  }

  /**
   * One timer for the instance: at the earliest re-check any dry scope is due. `at`: one scope's
   * new re-check time (no need to look at the others); without it, every scope is looked at.
   */
  scheduleRecheck(at = Infinity): void {
    if (this.rechecking) return; // the running re-check schedules the next when it ends
    if (at === Infinity)
      for (const s of this.scopes.values()) if (s.dry && s.idle && s.waiters.size > 0) at = Math.min(at, s.recheckAt);
    if (at === Infinity) return;
    if (this.recheckTimer && this.recheckTimerAt <= at) return;
    clearTimeout(this.recheckTimer);
    this.recheckTimerAt = at;
    this.recheckTimer = setTimeout(
      () => {
        this.recheckTimer = undefined;
        this.recheckTimerAt = Infinity;
        void this.recheck();
      },
      Math.max(0, at - Date.now()),
    );
  }

  /** Every dry scope due for its re-check, in one statement (a chunk of them at a time). */
  private async recheck(): Promise<void> {
    this.rechecking = true;
    try {
      // Scopes due within half their interval come along: a re-check a little early is allowed
      // (the interval is the longest a scope goes without one), and many scopes share a statement.
      const now = Date.now();
      const due = [...this.scopes.values()].filter(
        (s) =>
          s.dry &&
          s.idle &&
          s.waiters.size > 0 &&
          s.recheckAt <= now + Math.max(RECHECK_SLACK_MS, s.backoff.interval / 2),
      );
      for (let i = 0; i < due.length; i += RECHECK_CHUNK) {
        const chunk = due.slice(i, i + RECHECK_CHUNK);
        this.stats.rechecks++;
        this.stats.recheckedScopes += chunk.length;
        let answers: { ready: boolean; nextAt?: number }[];
        try {
          answers = await this.driver().recheck(chunk.map((s) => s.key));
          for (const s of chunk) for (const w of s.waiters) w.outage = undefined;
        } catch (err) {
          // no answer: each scope backs off and tries again; its parked pops remember the outage
          if (this.driver().isPoolError(err))
            for (const s of chunk) for (const w of s.waiters) if (w.tried) w.outage = err;
          answers = chunk.map(() => ({ ready: false }));
        }
        const answeredAt = Date.now();
        chunk.forEach((s, k) => {
          const a = answers[k];
          if (!s.dry || !s.idle) return; // woken meanwhile
          s.backoff.after(false);
          if (a?.ready) {
            s.dry = false;
            s.request('recheck');
            return;
          }
          s.recheckAt = answeredAt + s.backoff.interval;
          s.armTime(a?.nextAt);
        });
      }
    } finally {
      this.rechecking = false;
      this.scheduleRecheck();
    }
  }
}

const slot = globalThis as unknown as { __queenWaiters?: WaiterRegistry };
export const waiters = (slot.__queenWaiters ??= new WaiterRegistry());

/** Namespace and task of the queues this instance pushed to, for waking discovery pops in process. */
const scopes = new Map<string, PushScope>();

/** A configure may change a queue's namespace or task. */
export function forgetScopes(): void {
  scopes.clear();
}

/**
 * In-process wake after something on this instance made messages claimable (a push, an ack that
 * released a lease, a resume, a seek). Other instances hear of it through NOTIFY, which the SQL
 * functions send only while another instance is alive. A queue whose namespace and task this
 * instance has not seen wakes every discovery scope: a wake is only a hint.
 */
export function wakeLocal(pushed: (PushScope | string)[]): void {
  for (const p of pushed) {
    if (typeof p !== 'string') scopes.set(p.queue, { queue: p.queue, namespace: p.namespace, task: p.task });
    const scope = typeof p === 'string' ? scopes.get(p) : p;
    if (scope) waiters.wake(scope);
    else waiters.wakeUnscoped(p as string);
  }
}
