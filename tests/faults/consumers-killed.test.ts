// Fault: consumer processes SIGKILLed at random points (between pop and ack too) and restarted.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../support/app';
import { allCommitted, checkInvariants, pushAll, readLog, report, startConsumer, until } from './support';

const QUEUE = 'faults.kill';
const LEASE = 2;

describe('faults: consumers killed mid-batch', () => {
  let app: TestApp;
  let dir: string;
  beforeAll(async () => {
    app = await startApp();
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'queen-faults-'));
  });
  afterAll(async () => {
    await app.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('every message reaches every group, in order, one lease at a time, autoAck never twice', async () => {
    const started = Date.now();
    const expected = await pushAll(app.server.url, QUEUE, 6, 100);
    const leasedLog = path.join(dir, 'leased.log');
    const autoLog = path.join(dir, 'auto.log');
    const consumers: { proc: ChildProcess; group: string }[] = [];
    const spawnOne = (group: string) => {
      const proc = startConsumer(app.server.url, QUEUE, group, group === 'auto' ? autoLog : leasedLog, {
        autoAck: group === 'auto',
        leaseSeconds: LEASE,
        workMs: 150,
      });
      consumers.push({ proc, group });
    };
    for (let i = 0; i < 4; i++) spawnOne('leased');
    for (let i = 0; i < 2; i++) spawnOne('auto');

    let kills = 0;
    let betweenPopAndAck = 0;
    const killing = (async () => {
      while (Date.now() - started < 12_000) {
        await new Promise((r) => setTimeout(r, 300 + Math.random() * 400));
        const alive = consumers.filter((c) => c.proc.exitCode === null && c.proc.signalCode === null);
        const victim = alive[Math.floor(Math.random() * alive.length)];
        if (!victim) continue;
        if (victim.group === 'leased') {
          const lines = readLog(leasedLog).filter((l) => l.name === `leased-${victim.proc.pid}`);
          if (lines.at(-1)?.t === 'claim') betweenPopAndAck++;
        }
        victim.proc.kill('SIGKILL');
        kills++;
        spawnOne(victim.group);
      }
    })();
    try {
      await killing;
      const recovered = await until(() => allCommitted(app.db, QUEUE, ['leased', 'auto']), 60_000);
      await checkInvariants(app.db, QUEUE, {
        expected,
        leased: [{ group: 'leased', log: leasedLog, leaseSeconds: LEASE }],
        autoAck: [{ group: 'auto', log: autoLog }],
      });
      const [expiries] = await app.db.query<{ n: number }>(
        `select sum(lease_expiries)::int as n from queen.cursors c join queen.queues q on q.id = c.queue_id where q.name = $1`,
        [QUEUE],
      );
      report('consumers killed', {
        messages: expected,
        kills,
        'killed between pop and ack': betweenPopAndAck,
        'lease expiries': expiries.n,
        'drained after the last kill in': `${recovered} ms`,
        total: `${Date.now() - started} ms`,
      });
      expect(kills).toBeGreaterThan(10);
    } finally {
      for (const c of consumers) c.proc.kill('SIGKILL');
    }
  }, 120_000);
});
