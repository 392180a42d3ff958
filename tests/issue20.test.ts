// Issue 20, the on-call dashboard's ways out, against the real app and PostgreSQL: the audit log
// newest first and paged from the newest; a poison message moved to the dead letters or skipped,
// fenced against its holder's lease; bulk release; consumer groups; deliveries of a message.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from './support/app';
import { popQueue, pushMany, sleep } from './support/broker';

let app: TestApp;
beforeAll(async () => {
  app = await startApp();
});
afterAll(() => app.stop());

const as = (consumer: string) => ({ headers: { 'x-queen-consumer': consumer } });
const admin = { headers: { 'x-queen-actor': 'oncall' } };

describe('the audit log', () => {
  it('lists newest first by time, then id (ids past 9 and past 99 too), and pages on from the newest', async () => {
    // 120 entries; their ids as text would sort 99 before 120
    await app.db.query(`insert into queen.audit_log (actor, action, target_type, target, result, at)
      select 'seed', 'cursor.pause', 'cursor', 'seed-' || n, 'ok', now() - make_interval(secs => 1000 - n) from generate_series(1, 120) n`);
    // a later entry with a lower id than the newest: time decides
    await app.db.query(`update queen.audit_log set at = now() + interval '1 hour' where target = 'seed-5'`);
    const first = await app.api.get('/api/v1/audit?limit=50');
    expect(first.status).toBe(200);
    const targets = first.body.entries.map((e: any) => e.target);
    expect(targets.slice(0, 3)).toEqual(['seed-5', 'seed-120', 'seed-119']);
    expect(targets).toHaveLength(50);
    const ats = first.body.entries.map((e: any) => Date.parse(e.at));
    expect([...ats].sort((a, b) => b - a)).toEqual(ats);

    const seen = new Set<string>(targets);
    let next = first.body.next;
    let pages = 1;
    while (next) {
      const page = await app.api.get(`/api/v1/audit?limit=50&before=${next}`);
      for (const e of page.body.entries) {
        expect(seen.has(e.target)).toBe(false);
        seen.add(e.target);
      }
      next = page.body.next;
      pages++;
    }
    expect(pages).toBe(3);
    expect(seen.size).toBe(120);
  });
});
