// Fault: SIGTERM while long polls are parked and pushes are in flight.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDatabase, type TestDatabase } from '../support/db';
import { startServer } from '../support/server';
import { report } from './support';

describe('faults: SIGTERM with parked polls and pushes in flight', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await testDatabase();
  });
  afterAll(() => db.drop());

  it('answers the polls at once, finishes or refuses each push whole, and exits 0', async () => {
    const server = await startServer(db.url, { SHUTDOWN_TIMEOUT_MS: '5000' });
    const polls = Array.from({ length: 20 }, () =>
      fetch(`${server.url}/api/v1/pop/queue/faults.parked?wait=true&timeout=30000`).then((r) => ({
        status: r.status,
        why: r.headers.get('x-queen-empty'),
        at: Date.now(),
      })),
    );
    const requests: { ids: string[]; status: number | 'error' }[] = [];
    let n = 0;
    let pushing = true;
    const pushers = Array.from({ length: 4 }, async () => {
      while (pushing) {
        const ids = Array.from({ length: 50 }, () => `s-${n++}`);
        const entry: { ids: string[]; status: number | 'error' } = { ids, status: 'error' };
        requests.push(entry);
        try {
          const res = await fetch(`${server.url}/api/v1/push`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({
              items: ids.map((id, i) => ({
                queue: 'faults.pushing',
                partition: `p${i % 4}`,
                payload: i,
                transactionId: id,
              })),
            }),
          });
          entry.status = res.status;
          await res.arrayBuffer();
        } catch {
          pushing = false; // the server is gone
        }
      }
    });
    await new Promise((r) => setTimeout(r, 1000));
    const exited = new Promise<number | null>((resolve) => server.process.once('exit', (code) => resolve(code)));
    const signalledAt = Date.now();
    process.kill(server.process.pid!, 'SIGTERM');
    const answered = await Promise.all(polls);
    const code = await exited;
    const exitedIn = Date.now() - signalledAt;
    pushing = false;
    await Promise.all(pushers);

    // 'shutdown', not 'timeout': the drain answered them (their own timeout is 30 s, past SHUTDOWN_TIMEOUT_MS)
    expect(answered.every((p) => p.status === 204 && p.why === 'shutdown')).toBe(true);
    expect(code).toBe(0);
    // every push is whole: all of its items stored, or none; every 201 stored
    const stored = new Set(
      (await db.query<{ t: string }>(`select transaction_id as t from queen.messages`)).map((r) => r.t),
    );
    for (const r of requests) {
      const present = r.ids.filter((id) => stored.has(id)).length;
      expect([0, r.ids.length], `push ${r.ids[0]}… (${r.status})`).toContain(present);
      if (r.status === 201) expect(present).toBe(r.ids.length);
    }
    report('SIGTERM', {
      'parked polls': answered.length,
      'answered within': `${Math.max(...answered.map((p) => p.at - signalledAt))} ms`,
      'pushes in flight or after': requests.length,
      'exit code': String(code),
      'exited in': `${exitedIn} ms`,
    });
  }, 60_000);
});
