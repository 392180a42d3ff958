// Cross-instance wake-ups, sampled one at a time: a long poll parked on instance X (its own
// partition of a quiet queue, so that only this sample's message can answer it) and, once X says
// it is parked, one push to instance Y. The instances re-check parked polls only after far longer
// than the poll's timeout, so a 200 can only come from the wake-up (NOTIFY from Y's push); a poll
// that missed it would answer 204 at its timeout, which is kept as a failure. How long the answer
// took is recorded, never asserted.
import type { Instance } from './instance';
import { sleep } from './procs';

export interface WakeSample {
  phase: string;
  parkedOn: string;
  pushedTo: string;
  /** From the push being sent to the parked poll's answer. */
  ms: number;
  /** When the push was sent (epoch ms). */
  at: number;
}

export interface WakeFailure {
  phase: string;
  parkedOn: string;
  pushedTo: string;
  what: string;
}

export class WakeProbes {
  readonly samples: WakeSample[] = [];
  readonly failures: WakeFailure[] = [];
  private n = 0;
  private readonly out = new Set<string>();
  private readonly busy = new Map<string, number>();

  constructor(
    private readonly instances: Instance[],
    private readonly queue: string,
    private readonly pollTimeoutMs: number,
  ) {}

  /** Takes no more samples involving `name` and resolves once none is in flight on it (before its SIGTERM). */
  async exclude(name: string) {
    this.out.add(name);
    while ((this.busy.get(name) ?? 0) > 0) await sleep(5);
  }

  include(name: string) {
    this.out.delete(name);
  }

  /** Takes samples one after another until `done()` (checked between samples). */
  async run(phase: string, done: () => boolean) {
    while (!done()) await this.sample(phase);
  }

  /** One sample: the ordered pairs (parked on X, pushed to Y ≠ X) of the instances not excluded, in turn. */
  async sample(phase: string) {
    const up = this.instances.filter((s) => !this.out.has(s.name));
    const pairs = up.flatMap((x) => up.filter((y) => y !== x).map((y) => [x, y] as const));
    if (!pairs.length) return sleep(50);
    const [x, y] = pairs[this.n % pairs.length];
    const i = this.n++;
    const partition = `w${i}`;
    const transactionId = `wake-${i}`;
    const fail = (what: string) => this.failures.push({ phase, parkedOn: x.name, pushedTo: y.name, what });
    for (const s of [x, y]) this.busy.set(s.name, (this.busy.get(s.name) ?? 0) + 1);
    try {
      const qs = new URLSearchParams({
        consumerGroup: 'wake',
        wait: 'true',
        timeout: String(this.pollTimeoutMs),
        autoAck: 'true',
        batch: '1',
      });
      let ended = false;
      const polling = fetch(`${x.url}/api/v1/pop/queue/${this.queue}/partition/${partition}?${qs}`, {
        signal: AbortSignal.timeout(this.pollTimeoutMs + 20_000),
      })
        .then(async (res) => ({
          status: res.status as number | string,
          empty: res.headers.get('x-queen-empty'),
          body: res.status === 200 ? await res.json() : await res.text(),
          at: Date.now(),
        }))
        .catch((err: Error) => ({ status: err.name, empty: null, body: err.message, at: Date.now() }))
        .finally(() => (ended = true));
      // parked on X: its scope (this queue and partition) is among X's parked scopes
      while (!ended) {
        const facts = await fetch(`${x.url}/api/dashboard/process`)
          .then((r) => r.json())
          .catch((err: Error) => ({ parkedByScope: [], err }));
        if (facts.err) return fail(`cannot ask ${x.name} what is parked: ${facts.err.message}`);
        if (facts.parkedByScope.some((s: any) => s.scope.queue === this.queue && s.scope.partition === partition))
          break;
        await sleep(5);
      }
      if (ended) {
        const r = await polling;
        return fail(`answered before it parked: ${r.status} ${JSON.stringify(r.body).slice(0, 200)}`);
      }
      const at = Date.now();
      const pushed = await fetch(`${y.url}/api/v1/push`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ items: [{ queue: this.queue, partition, payload: { i }, transactionId }] }),
      }).then(
        async (r) => `${r.status} ${await r.text()}`,
        (err: Error) => err.message,
      );
      if (!pushed.startsWith('201')) fail(`push ${pushed.slice(0, 200)}`);
      const r = await polling;
      if (r.status !== 200 || (r.body as any).messages?.[0]?.transactionId !== transactionId)
        return fail(`poll ${r.status}${r.empty ? ` (${r.empty})` : ''} ${JSON.stringify(r.body).slice(0, 200)}`);
      this.samples.push({ phase, parkedOn: x.name, pushedTo: y.name, ms: r.at - at, at });
    } finally {
      for (const s of [x, y]) this.busy.set(s.name, this.busy.get(s.name)! - 1);
    }
  }

  /** p50, p99 and the slowest of a phase's samples, for the report. */
  figures(phase: string) {
    const ms = this.samples.filter((s) => s.phase === phase).map((s) => s.ms);
    return { samples: ms.length, p50: percentile(ms, 50), p99: percentile(ms, 99), max: Math.max(...ms) };
  }
}

/** Nearest-rank percentile. */
export function percentile(values: number[], p: number): number {
  if (!values.length) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)];
}
