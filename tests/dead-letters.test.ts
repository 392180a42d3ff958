// Dead letters: GET /api/v1/dlq's filters (error text, time), requeue and discard (admin, one
// transaction, audited with context), the error of every failed attempt on the message route, and
// dead-lettering by the broker after repeated lease expiries (deadLetterAfterExpiries).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from './support/app';
import { ackAll, expireLease, popQueue, pushMany } from './support/broker';
import { AUDIENCE, ISSUER, SECRET, bearer, hs256, mint } from './support/tokens';

let app: TestApp;
beforeAll(async () => {
  app = await startApp({ RETENTION_INTERVAL_MS: '3600000', QUEEN_ENCRYPTION_KEY: 'b'.repeat(64) });
});
afterAll(() => app?.stop());

/** `count` messages of `queue`/p, each failed by `group` until it is dead (retryLimit 2: 3 failures), with errors `<prefix> n`. */
async function deadLetters(queue: string, count: number, group = 'g', prefix = 'boom') {
  await app.api.post('/api/v1/configure', { queue, options: { retryLimit: 2, retryDelay: 0 } });
  await pushMany(app.api, queue, 'p', count, queue);
  for (let attempt = 1; attempt <= 3; attempt++) {
    const reply = await popQueue(app.api, queue, { consumerGroup: group, batch: count });
    expect(reply.status).toBe(200);
    await ackAll(app.api, reply, 'failed', `${prefix} ${attempt}`);
  }
  const res = await app.api.get(`/api/v1/dlq?queue=${queue}&consumerGroup=${group}`);
  expect(res.body.pagination.total).toBe(count);
  return res.body.messages as any[];
}

const key = (d: any) => ({ partitionId: d.partitionId, consumerGroup: d.consumerGroup, offset: d.offset });
const audit = (action: string, target: string) =>
  app.db.query<any>('select actor, reason, result, details from queen.audit_log where action = $1 and target = $2', [
    action,
    target,
  ]);

describe('GET /api/v1/dlq', () => {
  it('carries the offset, filters by error text (any case) and failure time, and counts what matches', async () => {
    await app.api.post('/api/v1/consumer-groups/other/subscription', { queue: 'dl.list', subscriptionMode: 'all' });
    const dead = await deadLetters('dl.list', 3, 'g', 'Disk FULL');
    expect(dead[0]).toMatchObject({
      queue: 'dl.list',
      partition: 'p',
      consumerGroup: 'g',
      errorMessage: 'Disk FULL 3',
      retryCount: 3,
      offset: expect.any(Number),
    });
    expect(dead.map((d) => d.offset).sort()).toEqual([1, 2, 3]);
    const get = async (q: string) => (await app.api.get(`/api/v1/dlq?queue=dl.list&${q}`)).body;
    expect((await get('error=disk%20full')).pagination.total).toBe(3);
    expect((await get('error=full%203')).pagination.total).toBe(3);
    expect((await get('error=boom')).pagination.total).toBe(0);
    expect((await get('error=%25')).pagination.total).toBe(0); // % is a character, not a wildcard
    const future = new Date(Date.now() + 60_000).toISOString();
    expect((await get(`since=${future}`)).pagination.total).toBe(0);
    expect((await get(`until=${future}`)).pagination.total).toBe(3);
    expect((await get('since=2000-01-01T00:00:00Z&limit=1')).messages).toHaveLength(1);
    const [{ n }] = await app.db.query<{ n: number }>(
      `select count(*)::int as n from queen.dead_letters d join queen.partitions p on p.id = d.partition_id
       join queen.queues q on q.id = p.queue_id where q.name = 'dl.list' and d.error_message ilike '%disk full%'`,
    );
    expect((await get('error=DISK')).pagination.total).toBe(n);
  });

  it('refuses bad filters with a 400 naming the field', async () => {
    for (const [q, field] of [
      ['since=yesterday', 'since'],
      ['until=2026-01-01', 'until'],
      ['since=2026-01-02T00:00:00Z&until=2026-01-01T00:00:00Z', 'since'],
      [`error=${'x'.repeat(501)}`, 'error'],
    ]) {
      const res = await app.api.get(`/api/v1/dlq?${q}`);
      expect(res.status, q).toBe(400);
      expect(res.body.error).toMatch(new RegExp(`^${field}: `));
    }
  });
});

describe('at scale', () => {
  it('pages 10,000 dead letters over 1,000 partitions, with the total the database counts', async () => {
    const items = Array.from({ length: 10_000 }, (_, i) => ({
      queue: 'dl.scale',
      partition: `p${i % 1000}`,
      payload: { i },
      transactionId: `s${i}`,
    }));
    for (let i = 0; i < items.length; i += 2000)
      expect((await app.api.push(items.slice(i, i + 2000))).status).toBe(201);
    await app.db.query(`insert into queen.dead_letters (partition_id, consumer_group, "offset", error_message, retry_count, failed_at)
      select m.partition_id, 'g', m."offset", case when m."offset" % 10 = 0 then 'Timeout' else 'Bad payload' end, 3, now() - m."offset" * interval '1 second'
      from queen.messages m join queen.partitions p on p.id = m.partition_id join queen.queues q on q.id = p.queue_id where q.name = 'dl.scale'`);
    const [{ n }] = await app.db.query<{
      n: number;
    }>(`select count(*)::int as n from queen.dead_letters d join queen.partitions p on p.id = d.partition_id
      join queen.queues q on q.id = p.queue_id where q.name = 'dl.scale' and d.error_message ilike '%timeout%'`);
    for (const query of ['queue=dl.scale&offset=9950', 'queue=dl.scale&error=TIME']) {
      const res = await app.api.get(`/api/v1/dlq?limit=50&${query}`); // how fast: npm run bench, not a test
      expect(res.body.messages).toHaveLength(50);
      expect(res.body.pagination.total).toBe(query.includes('error') ? n : 10_000);
    }
    expect(
      (await app.api.get('/api/dashboard/overview')).body.queues.find((q: any) => q.name === 'dl.scale').deadLetters,
    ).toBe(10_000);
  }, 60_000);
});

describe('GET /api/v1/messages/:partitionId/:transactionId', () => {
  it("lists every failed attempt's error per group, not only the last", async () => {
    const [d] = await deadLetters('dl.attempts', 1, 'g', 'attempt');
    const res = await app.api.get(`/api/v1/messages/${d.partitionId}/${d.transactionId}`);
    const group = res.body.consumerGroups.find((g: any) => g.name === 'g');
    expect(group).toMatchObject({ state: 'dead_letter', failures: 3, lastError: 'attempt 3' });
    expect(group.attempts.map((a: any) => [a.attempt, a.error])).toEqual([
      [1, 'attempt 1'],
      [2, 'attempt 2'],
      [3, 'attempt 3'],
    ]);
    expect(group.attempts[0].at).toMatch(/Z$/);
  });

  it('drops the history with its message', async () => {
    const [d] = await deadLetters('dl.gone', 1);
    expect((await app.api.del(`/api/v1/messages/${d.partitionId}/${d.transactionId}`)).status).toBe(200);
    expect(await app.db.query('select 1 from queen.attempt_errors where partition_id = $1', [d.partitionId])).toEqual(
      [],
    );
  });
});

describe('POST /api/v1/dlq/requeue', () => {
  it('pushes the message again as a new one the group pops, removes the dead letter and audits it with context', async () => {
    const [d] = await deadLetters('dl.requeue', 1);
    const res = await app.api.post(
      '/api/v1/dlq/requeue',
      { items: [key(d)], reason: 'consumer fixed' },
      { headers: { 'x-queen-actor': 'alice' } },
    );
    expect(res.status).toBe(200);
    expect(res.body.requeued).toBe(1);
    const [r] = res.body.results;
    expect(r).toMatchObject({
      index: 0,
      success: true,
      error: null,
      queue: 'dl.requeue',
      partition: 'p',
      transactionId: d.transactionId,
      newTransactionId: `${d.transactionId}.requeue-1`,
      newMessageId: expect.any(String),
      newOffset: 2,
    });
    expect((await app.api.get('/api/v1/dlq?queue=dl.requeue')).body.pagination.total).toBe(0);

    const again = await popQueue(app.api, 'dl.requeue', { consumerGroup: 'g' });
    expect(again.status).toBe(200);
    expect(again.body.messages.map((m: any) => [m.transactionId, m.data])).toEqual([
      [`${d.transactionId}.requeue-1`, d.data],
    ]);

    const [row] = await audit('dlq.requeue', `${d.partitionId}/${d.transactionId}`);
    expect(row).toMatchObject({ actor: 'alice', reason: 'consumer fixed', result: 'requeued' });
    expect(row.details).toMatchObject({
      queue: 'dl.requeue',
      partition: 'p',
      partitionId: d.partitionId,
      group: 'g',
      offset: 1,
      transactionId: d.transactionId,
      newTransactionId: `${d.transactionId}.requeue-1`,
      newMessageId: r.newMessageId,
    });

    // dead again and requeued again: its own suffix, naming its parent
    await ackAll(app.api, again, 'failed', 'x');
    for (let i = 0; i < 2; i++)
      await ackAll(app.api, await popQueue(app.api, 'dl.requeue', { consumerGroup: 'g' }), 'failed', 'x');
    const [d2] = (await app.api.get('/api/v1/dlq?queue=dl.requeue')).body.messages;
    const second = await app.api.post('/api/v1/dlq/requeue', { items: [key(d2)], reason: 'again' });
    expect(second.body.results[0].newTransactionId).toBe(`${d.transactionId}.requeue-1.requeue-1`);
  });

  it('acts on many in one call, one new message per message, reporting an unknown item without failing the rest', async () => {
    const dead = await deadLetters('dl.bulk', 5);
    const unknown = { ...key(dead[0]), offset: 999 };
    const res = await app.api.post('/api/v1/dlq/requeue', {
      items: [...dead.slice(0, 4).map(key), unknown],
      reason: 'bulk',
    });
    expect(res.status).toBe(200);
    expect(res.body.requeued).toBe(4);
    expect(res.body.results[4]).toMatchObject({
      index: 4,
      success: false,
      error: 'Dead letter not found',
      offset: 999,
      newTransactionId: null,
    });
    expect((await app.api.get('/api/v1/dlq?queue=dl.bulk')).body.pagination.total).toBe(1);
    const popped = await popQueue(app.api, 'dl.bulk', { consumerGroup: 'g', batch: 10 });
    expect(popped.body.messages).toHaveLength(4);
    // one audit row for the call, listing the 4 that went (tests/dead-letter-audit.test.ts)
    const [row] = await audit('dlq.requeue', '4 dead letters');
    expect(row.details.partitions.map((p: any) => p.transactionId)).toEqual(
      dead.slice(0, 4).map((d) => d.transactionId),
    );
  });

  it("makes one new message for several groups' dead letters of one message, and numbers later requeues on", async () => {
    const [g] = await deadLetters('dl.groups', 1, 'g');
    const [h] = await deadLetters('dl.groups', 1, 'h');
    const [k] = await deadLetters('dl.groups', 1, 'k');
    const res = await app.api.post('/api/v1/dlq/requeue', { items: [key(g), key(h)], reason: 'both' });
    expect(res.body.results.map((r: any) => r.newTransactionId)).toEqual([
      `${g.transactionId}.requeue-1`,
      `${g.transactionId}.requeue-1`,
    ]);
    const later = await app.api.post('/api/v1/dlq/requeue', { items: [key(k)], reason: 'k too' });
    expect(later.body.results[0].newTransactionId).toBe(`${g.transactionId}.requeue-2`);
    const [{ n }] = await app.db.query<{ n: number }>(
      'select count(*)::int as n from queen.messages where partition_id = $1',
      [g.partitionId],
    );
    expect(n).toBe(3);
  });

  it('retries for the group that failed only: the other groups never receive the copy, and the dry run says what each did with the original', async () => {
    const queue = 'dl.only';
    // fraud will be done with the original, leaser will hold it, watcher has not reached it, audit
    // dead-lettered it too; billing's dead letter is the one requeued
    for (const g of ['fraud', 'leaser', 'watcher', 'audit'])
      await app.api.post(`/api/v1/consumer-groups/${g}/subscription`, { queue, subscriptionMode: 'all' });
    const [d] = await deadLetters(queue, 1, 'billing');
    await ackAll(app.api, await popQueue(app.api, queue, { consumerGroup: 'fraud' }));
    const leased = await popQueue(app.api, queue, { consumerGroup: 'leaser' });
    expect(leased.status).toBe(200);
    for (let attempt = 1; attempt <= 3; attempt++)
      await ackAll(app.api, await popQueue(app.api, queue, { consumerGroup: 'audit' }), 'failed', 'audit down');

    const dry = await app.api.post('/api/v1/dlq/requeue', { items: [key(d)], dryRun: true });
    expect(dry.body.queues).toEqual([
      {
        queue,
        deadLetters: 1,
        messages: 1,
        otherGroups: [
          { group: 'audit', done: 0, pending: 0, leased: 0, deadLettered: 1 },
          { group: 'fraud', done: 1, pending: 0, leased: 0, deadLettered: 0 },
          { group: 'leaser', done: 0, pending: 0, leased: 1, deadLettered: 0 },
          { group: 'watcher', done: 0, pending: 1, leased: 0, deadLettered: 0 },
        ],
      },
    ]);
    // the states equal SQL counts of the cursors and dead letters
    const [sqlStates] = await app.db.query<any>(
      `select count(*) filter (where c.committed_offset >= $2 or $2 = any (c.acked_offsets))::int as done,
              count(*) filter (where c.lease_id is not null and c.lease_expires_at > now() and c.lease_end_offset >= $2
                                 and c.committed_offset < $2)::int as leased,
              (select count(*)::int from queen.dead_letters x where x.partition_id = $1 and x."offset" = $2
                 and x.consumer_group <> 'billing') as dead
       from queen.cursors c where c.partition_id = $1 and c.consumer_group <> 'billing'
         and not exists (select 1 from queen.dead_letters x where x.partition_id = $1 and x."offset" = $2 and x.consumer_group = c.consumer_group)`,
      [d.partitionId, d.offset],
    );
    expect(sqlStates).toEqual({ done: 1, leased: 1, dead: 1 });

    const res = await app.api.post('/api/v1/dlq/requeue', { items: [key(d)], reason: 'billing API back' });
    expect(res.body.results[0]).toMatchObject({
      success: true,
      newTransactionId: `${d.transactionId}.requeue-1`,
      doneFor: ['audit', 'fraud', 'leaser', 'watcher'],
    });
    const copy = res.body.results[0].newTransactionId;
    const billing = await popQueue(app.api, queue, { consumerGroup: 'billing', batch: 10 });
    expect(billing.body.messages.map((m: any) => m.transactionId)).toEqual([copy]);
    // fraud and audit are done: nothing to pop, the copy is not theirs
    expect((await popQueue(app.api, queue, { consumerGroup: 'fraud', batch: 10 })).status).toBe(204);
    expect((await popQueue(app.api, queue, { consumerGroup: 'audit', batch: 10 })).status).toBe(204);
    // the leaser finishes the original and gets nothing more
    await ackAll(app.api, leased);
    expect((await popQueue(app.api, queue, { consumerGroup: 'leaser', batch: 10 })).status).toBe(204);
    // the watcher receives the original it had not reached, not the copy
    const watcher = await popQueue(app.api, queue, { consumerGroup: 'watcher', batch: 10 });
    expect(watcher.body.messages.map((m: any) => m.transactionId)).toEqual([d.transactionId]);
    await ackAll(app.api, watcher);
    expect((await popQueue(app.api, queue, { consumerGroup: 'watcher', batch: 10 })).status).toBe(204);
    // no group but billing has the copy pending: every other cursor is past it
    const rows = await app.db.query<any>(
      `select c.consumer_group as g, c.committed_offset::int as committed from queen.cursors c
       where c.partition_id = $1 order by 1`,
      [d.partitionId],
    );
    expect(rows.filter((r: any) => r.g !== 'billing').every((r: any) => r.committed === 2)).toBe(true);
    const [row] = await audit('dlq.requeue', `${d.partitionId}/${d.transactionId}`);
    expect(row.details.doneFor).toEqual(['audit', 'fraud', 'leaser', 'watcher']);
  });

  it('dryRun answers what would happen per queue, naming what the other groups did with the original, and writes nothing', async () => {
    await app.api.post('/api/v1/consumer-groups/watcher/subscription', { queue: 'dl.dry', subscriptionMode: 'all' });
    const [g] = await deadLetters('dl.dry', 2, 'g');
    const [h] = await deadLetters('dl.dry', 2, 'h');
    const items = [key(g), key(h), { ...key(g), offset: 99 }];
    const res = await app.api.post('/api/v1/dlq/requeue', { items, dryRun: true });
    expect(res.body).toEqual({
      dryRun: true,
      deadLetters: 2,
      messages: 1,
      notFound: 1,
      queues: [
        {
          queue: 'dl.dry',
          deadLetters: 2,
          messages: 1,
          otherGroups: [{ group: 'watcher', done: 0, pending: 1, leased: 0, deadLettered: 0 }],
        },
      ],
    });
    const byFilter = await app.api.post('/api/v1/dlq/discard', { filter: { queue: 'dl.dry' }, dryRun: true });
    expect(byFilter.body).toMatchObject({
      deadLetters: 4,
      messages: 2,
      queues: [{ queue: 'dl.dry', otherGroups: [{ group: 'watcher', pending: 2 }] }],
    });
    expect((await app.api.get('/api/v1/dlq?queue=dl.dry')).body.pagination.total).toBe(4);
    expect(
      await app.db.query(
        "select 1 from queen.audit_log where details->>'queue' = 'dl.dry' and action <> 'queue.configure'",
      ),
    ).toEqual([]);
  });

  it('refuses a filter that matches more than 1000 dead letters', async () => {
    const [d] = await deadLetters('dl.many', 1);
    await app.db.query(
      `insert into queen.dead_letters (partition_id, consumer_group, "offset", error_message, retry_count)
      select $1, 'g', n, 'synthetic', 3 from generate_series(2, 1001) n`,
      [d.partitionId],
    );
    const res = await app.api.post('/api/v1/dlq/requeue', { filter: { queue: 'dl.many' }, dryRun: true });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatch(/^filter: matches more than 1000 dead letters/);
    expect(
      (await app.api.post('/api/v1/dlq/discard', { filter: { queue: 'dl.many', error: 'synthetic' }, reason: 'r' }))
        .body.discarded,
    ).toBe(1000);
  });

  it('by filter: every dead letter it matches', async () => {
    await deadLetters('dl.filter', 3, 'g', 'timeout');
    const res = await app.api.post('/api/v1/dlq/requeue', {
      filter: { queue: 'dl.filter', error: 'TIMEOUT 3' },
      reason: 'all of them',
    });
    expect(res.body.requeued).toBe(3);
    expect((await app.api.get('/api/v1/dlq?queue=dl.filter')).body.pagination.total).toBe(0);
  });

  it('requeues a dead letter once when two operators (and a delete) race for it', async () => {
    const dead = await deadLetters('dl.race', 2);
    const [a, b] = await Promise.all([
      app.api.post('/api/v1/dlq/requeue', { items: dead.map(key), reason: 'a' }),
      app.api.post('/api/v1/dlq/requeue', { items: dead.map(key).reverse(), reason: 'b' }),
      app.api.del(`/api/v1/messages/${dead[0].partitionId}/${dead[0].transactionId}`),
    ]);
    expect([a.status, b.status]).toEqual([200, 200]);
    expect(a.body.requeued + b.body.requeued).toBeLessThanOrEqual(2);
    const [{ n }] = await app.db.query<{ n: number }>(
      "select count(*)::int as n from queen.messages where transaction_id like 'dl.race-%.requeue-%'",
    );
    expect(n).toBe(a.body.requeued + b.body.requeued);
    expect((await app.api.get('/api/v1/dlq?queue=dl.race')).body.pagination.total).toBe(0);
  });

  it('keeps the payload of an encrypted queue encrypted in the copy', async () => {
    await app.api.post('/api/v1/configure', { queue: 'dl.enc', options: { encryptionEnabled: true, retryLimit: 0 } });
    const payload = { card: '4111 1111 1111 1111' };
    await app.api.push([{ queue: 'dl.enc', partition: 'p', payload, transactionId: 'secret' }]);
    await ackAll(app.api, await popQueue(app.api, 'dl.enc', { consumerGroup: 'g' }), 'failed', 'x');
    const [d] = (await app.api.get('/api/v1/dlq?queue=dl.enc')).body.messages;
    expect((await app.api.post('/api/v1/dlq/requeue', { items: [key(d)], reason: 'r' })).body.requeued).toBe(1);
    const [copy] = await app.db.query<any>(
      "select payload, encrypted from queen.messages where transaction_id = 'secret.requeue-1'",
    );
    expect(copy.encrypted).toBe(true);
    expect(JSON.stringify(copy.payload)).not.toContain('4111');
    expect((await popQueue(app.api, 'dl.enc', { consumerGroup: 'g' })).body.messages[0].data).toEqual(payload);
  });

  it('changes nothing when a queue is full (409)', async () => {
    const [d] = await deadLetters('dl.full', 1);
    await app.api.post('/api/v1/configure', {
      queue: 'dl.full',
      options: { retryLimit: 2, retryDelay: 0, maxSize: 1 },
    });
    await pushMany(app.api, 'dl.full', 'p', 1, 'fill');
    const res = await app.api.post('/api/v1/dlq/requeue', { items: [key(d)], reason: 'r' });
    expect(res.status).toBe(409);
    expect((await app.api.get('/api/v1/dlq?queue=dl.full')).body.pagination.total).toBe(1);
    expect(await audit('dlq.requeue', `${d.partitionId}/${d.transactionId}`)).toEqual([]);
  });

  it('refuses bad input with a 400 naming the field, writing nothing', async () => {
    const [d] = await deadLetters('dl.bad', 1);
    const ok = key(d);
    for (const [body, field] of [
      [{ items: [ok] }, 'reason'],
      [{ items: [ok], reason: '  ' }, 'reason'],
      [{ reason: 'r' }, 'items'],
      [{ items: [ok], filter: {}, reason: 'r' }, 'items'],
      [{ items: [], reason: 'r' }, 'items'],
      [{ items: Array.from({ length: 1001 }, (_, i) => ({ ...ok, offset: i + 1 })), reason: 'r' }, 'items'],
      [{ items: [{ ...ok, partitionId: 'nope' }], reason: 'r' }, 'items[0].partitionId'],
      [{ items: [{ ...ok, offset: 0 }], reason: 'r' }, 'items[0].offset'],
      [{ items: [{ ...ok, offset: '1' }], reason: 'r' }, 'items[0].offset'],
      [{ items: [{ ...ok, extra: 1 }], reason: 'r' }, 'items[0]'],
      [{ items: [ok, ok], reason: 'r' }, 'items[1]'],
      [{ filter: { since: 'today' }, reason: 'r' }, 'filter.since'],
      [{ filter: { color: 'red' }, reason: 'r' }, 'filter'],
    ] as [unknown, string][]) {
      const res = await app.api.post('/api/v1/dlq/requeue', body);
      expect(res.status, JSON.stringify(body).slice(0, 200)).toBe(400);
      expect(res.body.error).toMatch(new RegExp(`^${field.replace(/[[\].]/g, '\\$&')}: `));
    }
    expect((await app.api.get('/api/v1/dlq?queue=dl.bad')).body.pagination.total).toBe(1);
  });
});

describe('POST /api/v1/dlq/discard', () => {
  it('removes the dead letters, leaves the message done for the group, audits the call with each error', async () => {
    const dead = await deadLetters('dl.discard', 3);
    const res = await app.api.post('/api/v1/dlq/discard', { items: dead.slice(0, 2).map(key), reason: 'poison' });
    expect(res.status).toBe(200);
    expect(res.body.discarded).toBe(2);
    expect(res.body.results.map((r: any) => r.success)).toEqual([true, true]);
    expect((await app.api.get('/api/v1/dlq?queue=dl.discard')).body.pagination.total).toBe(1);
    expect((await popQueue(app.api, 'dl.discard', { consumerGroup: 'g' })).status).toBe(204);
    const message = await app.api.get(`/api/v1/messages/${dead[0].partitionId}/${dead[0].transactionId}`);
    expect(message.body.consumerGroups[0].state).toBe('done');
    const [row] = await audit('dlq.discard', '2 dead letters');
    expect(row).toMatchObject({ reason: 'poison', result: 'discarded' });
    expect(row.details.partitions[0]).toMatchObject({
      queue: 'dl.discard',
      partition: 'p',
      group: 'g',
      offset: dead[0].offset,
      lastError: 'boom 3',
      retryCount: 3,
    });
    // discarded twice: reported, nothing more written
    const again = await app.api.post('/api/v1/dlq/discard', { items: [key(dead[0])], reason: 'poison' });
    expect(again.body).toMatchObject({ discarded: 0, results: [{ success: false, error: 'Dead letter not found' }] });
    expect(await audit('dlq.discard', '2 dead letters')).toHaveLength(1);
    expect(await audit('dlq.discard', `${dead[0].partitionId}/${dead[0].transactionId}`)).toHaveLength(0);
  });
});

describe('roles', () => {
  it('requeue and discard need the admin role', async () => {
    const secured = await startApp({
      JWT_ENABLED: 'true',
      JWT_SECRET: SECRET,
      JWT_ISSUER: ISSUER,
      JWT_AUDIENCE: AUDIENCE,
    });
    try {
      const body = {
        items: [{ partitionId: '00000000-0000-0000-0000-000000000000', consumerGroup: 'g', offset: 1 }],
        reason: 'r',
      };
      for (const path of ['/api/v1/dlq/requeue', '/api/v1/dlq/discard']) {
        const post = async (role: string) =>
          (await secured.api.post(path, body, { headers: bearer(await mint(hs256(), { role })) })).status;
        expect(await post('read-write')).toBe(403);
        expect(await post('admin')).toBe(200);
      }
    } finally {
      await secured.stop();
    }
  });
});

describe('dead-letter figures', () => {
  it('after a requeue and a discard, the Overview, the queue page rows and GET /api/v1/dlq all count the dead letters that exist now', async () => {
    const queue = 'dl.figures';
    await app.api.post('/api/v1/consumer-groups/other/subscription', { queue, subscriptionMode: 'all' });
    const dead = await deadLetters(queue, 4);
    expect((await app.api.post('/api/v1/dlq/requeue', { items: [key(dead[0])], reason: 'fixed' })).status).toBe(200);
    expect((await app.api.post('/api/v1/dlq/discard', { items: [key(dead[1])], reason: 'poison' })).status).toBe(200);
    const existing = async (partition?: string, group?: string) =>
      (
        await app.db.query<{ n: number }>(
          `select count(*)::int as n from queen.dead_letters d join queen.partitions p on p.id = d.partition_id
       join queen.queues q on q.id = p.queue_id where q.name = $1 and ($2::text is null or p.name = $2) and ($3::text is null or d.consumer_group = $3)`,
          [queue, partition ?? null, group ?? null],
        )
      )[0].n;
    expect(await existing()).toBe(2);
    // the groups' counters still count every dead-lettering (the Prometheus counter and `acked` depend on them)
    const [{ counted }] = await app.db.query<{ counted: number }>(
      `select sum(c.dead_letters)::int as counted from queen.cursors c join queen.queues q on q.id = c.queue_id where q.name = $1`,
      [queue],
    );
    expect(counted).toBe(4);

    const overview = (await app.api.get('/api/dashboard/overview')).body;
    expect(overview.queues.find((q: any) => q.name === queue).deadLetters).toBe(await existing());
    const rows = (await app.api.get(`/api/dashboard/queues/${queue}`)).body.rows as any[];
    expect(rows.length).toBeGreaterThan(1);
    for (const r of rows) expect(r.deadLetters, `${r.partition}/${r.group}`).toBe(await existing(r.partition, r.group));
    expect(rows.reduce((n, r) => n + r.deadLetters, 0)).toBe(await existing());
    const listed = async (q: string) => (await app.api.get(`/api/v1/dlq?queue=${queue}&${q}`)).body.pagination.total;
    expect(await listed('')).toBe(await existing());
    for (const r of rows) expect(await listed(`partition=${r.partition}&consumerGroup=${r.group}`)).toBe(r.deadLetters);
  });
});

describe('review fixes', () => {
  const attemptsOf = async (partitionId: string, transactionId: string, group = 'g') =>
    (
      (
        await app.api.get(`/api/v1/messages/${partitionId}/${encodeURIComponent(transactionId)}`)
      ).body.consumerGroups.find((g: any) => g.name === group)?.attempts ?? []
    ).map((a: any) => a.attempt);

  it('keeps the last 100 attempts of a message failed one at a time, numbered on', async () => {
    await app.api.post('/api/v1/configure', { queue: 'dl.many-fails', options: { retryLimit: 1000, retryDelay: 0 } });
    await pushMany(app.api, 'dl.many-fails', 'p', 1, 'mf');
    await ackAll(app.api, await popQueue(app.api, 'dl.many-fails', { consumerGroup: 'g' }), 'failed', 'e 1');
    const [m] = await app.db.query<any>("select partition_id from queen.messages where transaction_id = 'mf-0'");
    const failOnce = (i: number) =>
      app.db.query(
        `update queen.message_attempts set failures = failures + 1, last_error = $2
      where partition_id = $1 and consumer_group = 'g'`,
        [m.partition_id, `e ${i}`],
      );
    for (let i = 2; i <= 60; i++) await failOnce(i);
    expect(await attemptsOf(m.partition_id, 'mf-0')).toEqual(Array.from({ length: 60 }, (_, i) => i + 1));
    for (let i = 61; i <= 130; i++) await failOnce(i);
    expect(await attemptsOf(m.partition_id, 'mf-0')).toEqual(Array.from({ length: 100 }, (_, i) => i + 31));
  });

  it('requeues a message whose transaction id leaves no room for the suffix under a fresh id the group can ack', async () => {
    await app.api.post('/api/v1/configure', { queue: 'dl.long-id', options: { retryLimit: 0 } });
    const long = 'x'.repeat(505);
    expect(
      (await app.api.push([{ queue: 'dl.long-id', partition: 'p', payload: 1, transactionId: long }])).status,
    ).toBe(201);
    await ackAll(app.api, await popQueue(app.api, 'dl.long-id', { consumerGroup: 'g' }), 'failed', 'x');
    const [d] = (await app.api.get('/api/v1/dlq?queue=dl.long-id')).body.messages;
    const res = await app.api.post('/api/v1/dlq/requeue', { items: [key(d)], reason: 'r' });
    const copy = res.body.results[0].newTransactionId;
    expect(copy).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-/);
    const [row] = await audit('dlq.requeue', `${d.partitionId}/${long}`);
    expect(row.details).toMatchObject({ transactionId: long, newTransactionId: copy });
    const again = await popQueue(app.api, 'dl.long-id', { consumerGroup: 'g' });
    expect(again.body.messages.map((m: any) => m.transactionId)).toEqual([copy]);
    expect((await ackAll(app.api, again)).map((a: any) => a.success ?? a.status)).not.toContain(false);
  });

  it('refuses to requeue a dead letter whose message is gone with no copy, keeping it (a discard removes it); the list counts what it lists', async () => {
    const dead = await deadLetters('dl.orphan', 2);
    const [gone] = dead;
    // a dead letter from before copies were kept: its message removed, no copy
    await app.db.query('alter table queen.messages disable trigger messages_leave_what_outlives_them');
    await app.db.query('delete from queen.messages where partition_id = $1 and "offset" = $2', [
      gone.partitionId,
      gone.offset,
    ]);
    await app.db.query('alter table queen.messages enable trigger messages_leave_what_outlives_them');
    const list = (await app.api.get('/api/v1/dlq?queue=dl.orphan')).body;
    expect(list.pagination.total).toBe(list.messages.length);
    expect(list.messages).toHaveLength(1);
    const res = await app.api.post('/api/v1/dlq/requeue', { items: [key(gone)], reason: 'r' });
    expect(res.body).toMatchObject({
      requeued: 0,
      results: [{ success: false, error: 'Message no longer exists', newTransactionId: null }],
    });
    expect(
      await app.db.query('select 1 from queen.dead_letters where partition_id = $1 and "offset" = $2', [
        gone.partitionId,
        gone.offset,
      ]),
    ).toHaveLength(1);
    expect(
      await app.db.query(
        "select 1 from queen.audit_log where action = 'dlq.requeue' and details->>'queue' = 'dl.orphan'",
      ),
    ).toEqual([]);
    expect((await app.api.post('/api/v1/dlq/discard', { items: [key(gone)], reason: 'r' })).body.discarded).toBe(1);
  });

  it('keeps a dead letter readable and requeueable with its payload after its message was removed', async () => {
    const [d] = await deadLetters('dl.kept', 1);
    await app.db.query('delete from queen.messages where partition_id = $1 and "offset" = $2', [
      d.partitionId,
      d.offset,
    ]);
    const list = (await app.api.get('/api/v1/dlq?queue=dl.kept')).body;
    expect(list.pagination.total).toBe(1);
    expect(list.messages[0]).toMatchObject({ transactionId: d.transactionId, data: d.data });
    const res = await app.api.post('/api/v1/dlq/requeue', { items: [key(d)], reason: 'next morning' });
    expect(res.body).toMatchObject({
      requeued: 1,
      results: [{ success: true, newTransactionId: `${d.transactionId}.requeue-1` }],
    });
    const popped = await popQueue(app.api, 'dl.kept', { consumerGroup: 'other' });
    expect(popped.body.messages.map((m: any) => m.data)).toContainEqual(d.data);
  });

  it('forgets the failed attempts of a deleted group: re-created under its name, it shows none', async () => {
    const [d] = await deadLetters('dl.regroup', 1);
    expect(await attemptsOf(d.partitionId, d.transactionId)).toEqual([1, 2, 3]);
    expect((await app.api.del('/api/v1/consumer-groups/g/queues/dl.regroup?reason=retired')).status).toBe(200);
    expect((await popQueue(app.api, 'dl.regroup', { consumerGroup: 'g' })).status).toBe(200);
    expect(await attemptsOf(d.partitionId, d.transactionId)).toEqual([]);
  });

  it("sends a group's requeues and discards only to live views of that group", async () => {
    const [g] = await deadLetters('dl.live', 1, 'g');
    const [h] = await deadLetters('dl.live', 1, 'h');
    const controller = new AbortController();
    const watch = async (group: string) => {
      const reader = (
        await fetch(`${app.server.url}/api/v1/events?group=${group}`, { signal: controller.signal })
      ).body!.getReader();
      const seen = { text: '' };
      void (async () => {
        for (;;) {
          const { value, done } = await reader.read().catch(() => ({ value: undefined, done: true }));
          if (done) return;
          seen.text += new TextDecoder().decode(value);
        }
      })();
      return seen;
    };
    const until = async (cond: () => boolean) => {
      for (let i = 0; i < 100 && !cond(); i++) await new Promise((r) => setTimeout(r, 50));
      expect(cond()).toBe(true);
    };
    try {
      const [seenG, seenH] = [await watch('g'), await watch('h')];
      await new Promise((r) => setTimeout(r, 300));
      await app.api.post('/api/v1/dlq/requeue', { items: [key(g)], reason: 'r' });
      await until(() => seenG.text.includes('"type":"requeue"'));
      await app.api.post('/api/v1/dlq/discard', { items: [key(h)], reason: 'r' });
      await until(() => seenH.text.includes('"type":"discard"'));
      expect(seenH.text).not.toContain('"type":"requeue"');
      expect(seenG.text).not.toContain('"type":"discard"');
    } finally {
      controller.abort();
    }
  });

  it('the Overview counts dead letters inserted, removed and taken with a partition', async () => {
    const dead = await deadLetters('dl.counted', 3);
    const figure = async () =>
      (await app.api.get('/api/dashboard/overview')).body.queues.find((q: any) => q.name === 'dl.counted').deadLetters;
    expect(await figure()).toBe(3);
    await app.api.post('/api/v1/dlq/discard', { items: [key(dead[0])], reason: 'r' });
    expect(await figure()).toBe(2);
    expect(
      await app.db.query<any>('select n::int from queen.dead_letter_counts where partition_id = $1', [
        dead[0].partitionId,
      ]),
    ).toEqual([{ n: 2 }]);
    await app.db.query('delete from queen.partitions where id = $1', [dead[0].partitionId]);
    expect(await figure()).toBe(0);
    expect(
      await app.db.query('select 1 from queen.dead_letter_counts where partition_id = $1', [dead[0].partitionId]),
    ).toEqual([]);
  });
});

describe('deadLetterAfterExpiries', () => {
  const as = (consumer: string) => ({ headers: { 'x-queen-consumer': consumer } });
  const expire = (leaseId: string) => expireLease(app.db, leaseId);

  it('off by default: an expired lease redelivers forever; set to 2, the message goes to the dead letters at the claim after its 2nd expiry', async () => {
    const cfg = await app.api.post('/api/v1/configure', {
      queue: 'w20.expiries',
      options: { deadLetterAfterExpiries: 2 },
    });
    expect(cfg.body.options.deadLetterAfterExpiries).toBe(2);
    expect(
      (await app.api.post('/api/v1/configure', { queue: 'w20.expiries-off', options: {} })).body.options
        .deadLetterAfterExpiries,
    ).toBe(0);
    for (const q of ['w20.expiries', 'w20.expiries-off']) await pushMany(app.api, q, 'p', 2);
    const claim = (q: string) =>
      app.api.get(`/api/v1/pop/queue/${q}/partition/p?consumerGroup=g&batch=1&leaseSeconds=60`, as('crashing'));
    for (const q of ['w20.expiries', 'w20.expiries-off']) {
      const first = await claim(q);
      expect(first.body.messages[0].transactionId).toBe('p-0');
      await expire(first.body.leaseId);
      const second = await claim(q); // the 1st expiry: delivered again
      expect(second.body.messages[0].transactionId).toBe('p-0');
      await expire(second.body.leaseId);
    }
    // the 2nd expiry: dead-lettered at this claim, which delivers p-1
    expect((await claim('w20.expiries')).body.messages.map((m: any) => m.transactionId)).toEqual(['p-1']);
    expect((await claim('w20.expiries-off')).body.messages.map((m: any) => m.transactionId)).toEqual(['p-0']);
    const dlq = await app.api.get('/api/v1/dlq?queue=w20.expiries');
    expect(dlq.body.messages.map((m: any) => m.transactionId)).toEqual(['p-0']);
    const [audit] = await app.db.query<any>(
      "select actor, reason from queen.audit_log where action = 'message.dead_letter' and target like '%/p-0' order by id desc limit 1",
    );
    expect(audit).toEqual({ actor: 'broker', reason: 'its lease expired 2 times (deadLetterAfterExpiries 2)' });
    expect((await app.api.get('/api/v1/dlq?queue=w20.expiries-off')).body.messages).toEqual([]);
    const [{ p }] = await app.db.query<any>(
      "select p.id as p from queen.partitions p join queen.queues q on q.id = p.queue_id where q.name = 'w20.expiries' and p.name = 'p'",
    );
    const ended = await app.db.query<any>(
      'select ended from queen.deliveries where partition_id = $1 and from_offset = 1 order by id',
      [p],
    );
    expect(ended.map((d) => d.ended)).toEqual(['expired', 'expired']);
  });
});
