/**
 * Parked long-poll pops, woken by pushes to their scope. A wake is only a hint: the woken pop
 * re-runs its claim, which is what decides. A waiter is registered before its first attempt and
 * remembers a wake that arrives while it is attempting, so no wake is lost between "found
 * nothing" and "started waiting".
 */
export interface PushScope {
  queue: string;
  namespace?: string;
  task?: string;
}

export interface WaitScope {
  /** Queue-scoped pops wait on their queue; discovery pops on a namespace and/or task. */
  queue?: string;
  namespace?: string;
  task?: string;
}

export class Waiter {
  private woken = false;
  private release?: (woken: boolean) => void;

  constructor(readonly scope: WaitScope) {}

  matches(push: PushScope): boolean {
    if (this.scope.queue !== undefined) return this.scope.queue === push.queue;
    if (push.namespace === undefined) return false; // an in-process wake carries no scope
    return (!this.scope.namespace || this.scope.namespace === push.namespace) && (!this.scope.task || this.scope.task === push.task);
  }

  wake(): void {
    this.woken = true;
    this.release?.(true);
  }

  /** Whether a wake came since the last call; clears it. */
  takeWake(): boolean {
    const w = this.woken;
    this.woken = false;
    return w;
  }

  /** Resolves true on a wake, false when `ms` pass or `signal` aborts. */
  wait(ms: number, signal: AbortSignal): Promise<boolean> {
    if (this.takeWake()) return Promise.resolve(true);
    return new Promise((resolve) => {
      const done = (woken: boolean) => {
        clearTimeout(timer);
        signal.removeEventListener('abort', onAbort);
        this.release = undefined;
        if (woken) this.woken = false;
        resolve(woken);
      };
      const onAbort = () => done(false);
      const timer = setTimeout(() => done(false), Math.max(0, ms));
      signal.addEventListener('abort', onAbort, { once: true });
      this.release = done;
    });
  }
}

class WaiterRegistry {
  private byQueue = new Map<string, Set<Waiter>>();
  private discovery = new Set<Waiter>();

  register(scope: WaitScope): Waiter {
    const w = new Waiter(scope);
    if (scope.queue !== undefined) {
      let set = this.byQueue.get(scope.queue);
      if (!set) this.byQueue.set(scope.queue, (set = new Set()));
      set.add(w);
    } else {
      this.discovery.add(w);
    }
    return w;
  }

  unregister(w: Waiter): void {
    if (w.scope.queue === undefined) {
      this.discovery.delete(w);
      return;
    }
    const set = this.byQueue.get(w.scope.queue);
    set?.delete(w);
    if (set?.size === 0) this.byQueue.delete(w.scope.queue);
  }

  wake(push: PushScope): void {
    this.byQueue.get(push.queue)?.forEach((w) => w.wake());
    if (push.namespace !== undefined) for (const w of this.discovery) if (w.matches(push)) w.wake();
  }

  /** A queue of unknown namespace and task: its own waiters, and every discovery waiter. */
  wakeUnscoped(queue: string): void {
    this.byQueue.get(queue)?.forEach((w) => w.wake());
    this.discovery.forEach((w) => w.wake());
  }

  wakeAll(): void {
    for (const set of this.byQueue.values()) set.forEach((w) => w.wake());
    this.discovery.forEach((w) => w.wake());
  }

  get size(): number {
    let n = this.discovery.size;
    for (const set of this.byQueue.values()) n += set.size;
    return n;
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
 * instance has not seen wakes every discovery pop: a wake is only a hint.
 */
export function wakeLocal(pushed: (PushScope | string)[]): void {
  for (const p of pushed) {
    if (typeof p !== 'string') scopes.set(p.queue, p);
    const scope = typeof p === 'string' ? scopes.get(p) : p;
    if (scope) waiters.wake(scope);
    else waiters.wakeUnscoped(p as string);
  }
}
