// Three instances behind HAProxy under load, restarted one at a time (SIGTERM, then started again)
// (issue 33, item 3): no request fails apart from polls the contract lets end (an empty 204), the
// long polls parked on a stopping instance are answered at once and parked again on another, and
// afterwards every accepted message is stored once and committed by every group. Cross-instance
// wake-ups are sampled under the same load without restarts, then during the restarts: every
// sample's poll, parked on one instance, answered with its message after a push to another (the
// instances re-check parked polls only after far longer than the polls' timeout, so only the
// wake-up can answer them); how long they took is recorded for docs/scaling.md, not asserted.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../db/embedded.mjs';
import { testDatabase, type TestDatabase } from '../support/db';
import { report, until } from '../faults/support';
import { startHaProxy, type HaProxy } from './support/haproxy';
import { startInstance, type Instance } from './support/instance';
import { Load } from './support/load';
import { sleep } from './support/procs';
import { checkDelivery } from './support/checks';
import { WakeProbes } from './support/wakeups';

// A parked poll re-checks on its own only after this long, beyond the wake-up probes' poll timeout.
const RECHECK_MS = 60_000;
const WAKE_POLL_TIMEOUT_MS = 30_000;
const QUIET_SAMPLES = 150;

describe('three instances behind HAProxy, restarted one at a time under load', () => {
  let db: TestDatabase;
  let proxy: HaProxy;
  let instances: Instance[] = [];

  beforeAll(async () => {
    db = await testDatabase();
    const ports = [await freePort(), await freePort(), await freePort()];
    instances = await Promise.all(
      ['a', 'b', 'c'].map((name, i) =>
        startInstance(name, ports[i], db.url, {
          SHUTDOWN_TIMEOUT_MS: '10000',
          POP_WAIT_INITIAL_INTERVAL_MS: String(RECHECK_MS),
          POP_WAIT_MAX_INTERVAL_MS: String(RECHECK_MS),
        }),
      ),
    );
    // The check asks /ready, which says "not ready" from the moment an instance starts shutting
    // down; l7 retries send a request refused at connect, or closed unanswered, to another server;
    // slowstart ramps a restarted instance's share up while its connections make their plans.
    proxy = await startHaProxy(
      (port) => `
frontend api
  mode http
  bind 127.0.0.1:${port}
  default_backend app

backend app
  mode http
  balance roundrobin
  option httpchk
  http-check send meth GET uri /ready ver HTTP/1.1 hdr Host localhost
  http-check expect status 200
  retries 3
  option redispatch 1
  retry-on conn-failure empty-response
  timeout connect 1s
  default-server inter 300ms fall 1 rise 2 slowstart 5s
${instances.map((s) => `  server ${s.name} 127.0.0.1:${s.port} check`).join('\n')}
`,
    );
    await until(async () => (await proxy.servers('app')).every((s) => s.status === 'UP'), 15_000);
  });
  afterAll(async () => {
    await Promise.all(instances.map((s) => s.stop()));
    await proxy?.stop();
    await db?.drop();
  });

  it('answers every request, re-parks the polls of a stopping instance elsewhere, and loses nothing', async () => {
    const load = new Load({
      base: `http://127.0.0.1:${proxy.port}`,
      queue: 'lb.orders',
      partitions: 8,
      groups: ['billing', 'audit'],
      consumersPerGroup: 3,
      failing: { audit: 7 },
      producers: 2,
      pushBatch: 5,
      pushPauseMs: 30,
      leaseSeconds: 10,
      pollTimeoutMs: 5_000,
      idle: { queue: 'lb.idle', polls: 30 },
    });
    const probes = new WakeProbes(instances, 'lb.wake', WAKE_POLL_TIMEOUT_MS);
    load.start();
    await sleep(2_000);
    // wake-ups under the load, no instance restarting
    await probes.run('quiet', () => probes.samples.length + probes.failures.length >= QUIET_SAMPLES);
    // then during the rolling restart: never parked on, nor pushed to, the instance being restarted
    let restarting = true;
    const probing = probes.run('restarts', () => !restarting);
    const restarts: Record<string, string> = {};
    const backAt: Record<string, number> = {};
    /** From each SIGTERM until that instance is back in rotation: an instance stopping or booting. */
    const booting: [number, number][] = [];
    for (const instance of instances) {
      await probes.exclude(instance.name);
      const parkedBefore = (await (await fetch(`${instance.url}/metrics`)).json()).parkedPops;
      const shutdownsBefore = load.count('idle', (o) => o.empty === 'shutdown');
      const stopped = Date.now();
      await instance.stop();
      const exitedMs = Date.now() - stopped;
      await instance.restart();
      backAt[instance.name] = Date.now();
      probes.include(instance.name);
      const upMs = await until(
        async () => (await proxy.servers('app')).find((s) => s.name === instance.name)?.status === 'UP',
        30_000,
      ).catch(async (err) => {
        // what each instance's /ready said, and the restarted one's last words
        const ready = await Promise.all(
          instances.map(async (s) => `${s.name}: ${await (await fetch(`${s.url}/ready`)).text().catch((e) => e)}`),
        );
        throw new Error(`${err.message}: ${ready.join('; ')}\n${instance.output().slice(-2000)}`);
      });
      booting.push([stopped, Date.now()]);
      restarts[instance.name] =
        `${parkedBefore} parked, ${load.count('idle', (o) => o.empty === 'shutdown') - shutdownsBefore} idle polls ended by its shutdown, exit ${exitedMs} ms, back in rotation ${Date.now() - stopped} ms after the SIGTERM (${upMs} ms after /health)`;
      await sleep(1_500);
    }
    restarting = false;
    await probing;
    load.stopProducing();
    const fedMs = await load.feedIdle();
    await until(async () => {
      const [r] = await db.query<{ behind: number }>(
        `select count(*) filter (where c.committed_offset < p.head_offset)::int as behind
           from queen.cursors c join queen.partitions p on p.id = c.partition_id join queen.queues q on q.id = c.queue_id
          where q.name = 'lb.orders' and c.consumer_group in ('billing', 'audit')`,
      );
      return r.behind === 0 && load.accepted.size > 0;
    }, 60_000);
    await load.stop();
    report('balancer, rolling restart', {
      requests: load.outcomes.length,
      answers: load.summary(),
      failed: load.failures.length,
      ...restarts,
      'idle polls fed': `${load.idleGot.size} of 30, all answered ${fedMs} ms after the push`,
      'wake-ups across instances, same load, no restart (ms)': JSON.stringify(probes.figures('quiet')),
      'wake-ups across instances during the restarts (ms)': JSON.stringify(probes.figures('restarts')),
      'of which slower than the p99 without restarts': (() => {
        const during = probes.samples.filter((w) => w.phase === 'restarts');
        const slow = (ws: typeof during) =>
          `${ws.filter((w) => w.ms > probes.figures('quiet').p99).length} of ${ws.length}`;
        const inBoot = (w: (typeof during)[0]) => booting.some(([from, to]) => w.at >= from && w.at <= to);
        return `${slow(during)} (while an instance stopped or booted ${slow(during.filter(inBoot))}, between ${slow(during.filter((w) => !inBoot(w)))})`;
      })(),
      'of which parked on an instance after its restart': instances
        .map(
          (s) =>
            `${s.name} ${probes.samples.filter((w) => w.phase === 'restarts' && w.parkedOn === s.name && w.at > backAt[s.name]).length}`,
        )
        .join(', '),
      'wake-up probes failed': probes.failures.length,
    });
    expect(load.failures).toEqual([]);
    // every probe's parked poll was answered by the wake-up with its message, none at its timeout
    expect(probes.failures).toEqual([]);
    expect(probes.figures('quiet').samples).toBe(QUIET_SAMPLES);
    expect(probes.figures('restarts').samples).toBeGreaterThan(0);
    expect(load.count('idle', (o) => o.empty === 'shutdown')).toBeGreaterThan(0);
    expect(new Set(load.idleGot.values()).size).toBe(30);
    await checkDelivery(db, load);
  });
});
