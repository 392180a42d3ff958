// Browsing a partition by offset, links to one partition, search by id, and the console's check of
// what a pop would create (the seek preview: tests/seek.test.ts). Every figure is compared with the database.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from './support/app';
import { ackAll, pop, popQueue, pushMany } from './support/broker';
import { queueHref } from '@/lib/dashboard/links';

let app: TestApp;
beforeAll(async () => {
  app = await startApp();
});
afterAll(() => app.stop());

const browse = (queue: string, partition: string, qs = '') =>
  app.api.get(`/api/dashboard/queues/${encodeURIComponent(queue)}/partitions/${encodeURIComponent(partition)}${qs}`);
const search = (q: string, extra = '') => app.api.get(`/api/v1/search?q=${encodeURIComponent(q)}${extra}`);

describe('browse a partition by offset', () => {
  it('shows a window with each message state per group, centred on the lowest cursor, with prev/next', async () => {
    await pushMany(app.api, 'br.q', 'p', 30);
    const a = await popQueue(app.api, 'br.q', { consumerGroup: 'a', batch: 10 });
    await ackAll(app.api, a); // a: 1–10 done
    await popQueue(app.api, 'br.q', { consumerGroup: 'a', batch: 5 }); // a: 11–15 leased
    const b = await popQueue(app.api, 'br.q', { consumerGroup: 'b', batch: 4 });
    await ackAll(app.api, b); // b: 1–4 done

    const res = await browse('br.q', 'p', '?limit=10');
    expect(res.status).toBe(200);
    // lowest committed cursor is b's (4): the window of 10 is centred on it
    expect(res.body).toMatchObject({
      head: 30,
      from: 1,
      to: 10,
      limit: 10,
      prevFrom: null,
      nextFrom: 11,
      groups: [
        { name: 'a', committed: 10 },
        { name: 'b', committed: 4 },
      ],
    });
    expect(res.body.messages.map((m: any) => m.offset)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    const m5 = res.body.messages[4];
    expect(m5.states).toEqual([
      { group: 'a', state: 'done' },
      { group: 'b', state: 'pending' },
    ]);
    expect(m5.preview).toBe('{"seq": 4}');

    const centred = await browse('br.q', 'p', '?limit=10&group=a');
    expect(centred.body).toMatchObject({ from: 6, to: 15, prevFrom: 1, nextFrom: 16 });
    const states = Object.fromEntries(centred.body.messages.map((m: any) => [m.offset, m.states[0].state]));
    expect(states).toMatchObject({ 10: 'done', 11: 'leased', 15: 'leased' });

    // each state agrees with the per-message route
    for (const m of centred.body.messages) {
      const one = await app.api.get(`/api/v1/messages/${centred.body.partitionId}/${m.transactionId}`);
      expect(one.body.consumerGroups.map((g: any) => ({ group: g.name, state: g.state }))).toEqual(m.states);
    }
    // the figures against the database
    const [db] = await app.db.query<{ n: number; min: number; max: number }>(
      `select count(*)::int as n, min("offset")::int as min, max("offset")::int as max from queen.messages where partition_id = $1 and "offset" between 6 and 15`,
      [centred.body.partitionId],
    );
    expect(centred.body.messages).toHaveLength(db.n);
    expect([centred.body.messages[0].offset, centred.body.messages.at(-1).offset]).toEqual([db.min, db.max]);

    const last = await browse('br.q', 'p', '?from=25&limit=10');
    expect(last.body).toMatchObject({ from: 25, to: 34, nextFrom: null, prevFrom: 15 });
    expect(last.body.messages).toHaveLength(6);
  });

  it('refuses bad input naming it, caps the window at 100, and 404s an unknown partition or group', async () => {
    await pushMany(app.api, 'br.bad', 'p', 1);
    expect((await browse('br.bad', 'p', '?limit=101')).body.error).toMatch(/^limit: /);
    expect((await browse('br.bad', 'p', '?from=0')).body.error).toMatch(/^from: /);
    expect((await browse('br.bad', 'p', '?from=x')).status).toBe(400);
    expect((await browse('br.bad', 'nope')).status).toBe(404);
    expect((await browse('br.bad', 'p', '?group=ghost')).status).toBe(404);
    const none = await browse('br.bad', 'p');
    expect(none.body).toMatchObject({ groups: [], from: 1 });
    expect(none.body.messages[0].states).toEqual([]);
  });

  it('centres on a group ranked past the first 50 by name (60 groups)', async () => {
    await pushMany(app.api, 'br.many', 'p', 80);
    const groups = Array.from({ length: 60 }, (_, i) => `g${String(i).padStart(2, '0')}`);
    for (const [i, g] of groups.entries())
      await ackAll(app.api, await popQueue(app.api, 'br.many', { consumerGroup: g, batch: i + 1 }));
    const [db] = await app.db.query<{ committed: number }>(`
      select c.committed_offset::int as committed from queen.cursors c join queen.partitions p on p.id = c.partition_id
      join queen.queues q on q.id = p.queue_id where q.name = 'br.many' and c.consumer_group = 'g57'`);
    expect(db.committed).toBe(58);
    const res = await browse('br.many', 'p', '?group=g57&limit=10');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ group: 'g57', from: db.committed + 1 - 5, to: db.committed + 5 });
    // the first 50 by name, and the group asked for
    expect(res.body.groups.map((g: any) => g.name)).toEqual([...groups.slice(0, 50), 'g57']);
    expect(res.body.groups.at(-1)).toEqual({ name: 'g57', committed: db.committed });
    expect(res.body.messages.find((m: any) => m.offset === 58).states.find((s: any) => s.group === 'g57')).toEqual({
      group: 'g57',
      state: 'done',
    });
  });
});

describe('links that mean one partition', () => {
  it('the queue page keeps exactly partitionIs (the link), while partition matches any name containing it', async () => {
    for (const p of ['p-1', 'p-10', 'p-11', 'P-1x']) await pushMany(app.api, 'br.exact', p, 1);
    await popQueue(app.api, 'br.exact', { consumerGroup: 'g', batch: 1, partitions: 4 });
    const page = (qs: string) => app.api.get(`/api/dashboard/queues/br.exact?${qs}`);
    const link = queueHref('br.exact', { partition: 'p-1', group: 'g' });
    expect(link).toBe('/queues/br.exact?partitionIs=p-1&group=g');
    const exact = await page(link.split('?')[1]);
    expect(exact.status).toBe(200);
    expect([exact.body.total, exact.body.rows.map((r: any) => r.partition)]).toEqual([1, ['p-1']]);
    const [db] = await app.db.query<{ n: number }>(
      `select count(*)::int as n from queen.partitions p join queen.queues q on q.id = p.queue_id where q.name = 'br.exact' and p.name = 'p-1'`,
    );
    expect(exact.body.total).toBe(db.n);
    expect((await page('partition=p-1&group=g')).body.total).toBe(4);
    expect((await page('partitionIs=p-&group=g')).body.total).toBe(0);
  });
});

describe('search by id', () => {
  it('finds a lease (every partition it holds), a message id, a transaction id and queues by name', async () => {
    for (const p of ['p1', 'p2']) await pushMany(app.api, 'se.q', p, 2, `se-${p}`);
    const r = await popQueue(app.api, 'se.q', { consumerGroup: 'finder', partitions: 2, batch: 4 });
    const lease = await search(r.body.leaseId);
    expect(lease.body.matches).toEqual([
      {
        kind: 'lease',
        label: `lease ${r.body.leaseId} of finder on se.q: p1 1–2, p2 1–2`,
        href: `/leases?lease=${r.body.leaseId}`,
      },
    ]);
    const [m] = await app.db.query<{ id: string; partition_id: string }>(
      `select m.id, m.partition_id from queen.messages m where m.transaction_id = 'se-p1-1'`,
    );
    expect((await search(m.id)).body.matches).toEqual([
      {
        kind: 'message',
        label: expect.stringContaining('se.q/p1 offset 2'),
        href: `/messages/${m.partition_id}/se-p1-1`,
      },
    ]);
    expect((await search(' se-p1-1 ')).body.matches).toEqual([
      { kind: 'transaction', label: expect.stringContaining('se.q/p1'), href: `/messages/${m.partition_id}/se-p1-1` },
    ]);
    expect((await search('se.')).body.matches).toEqual([{ kind: 'queue', label: 'queue se.q', href: '/queues/se.q' }]);
    expect((await search('00000000-0000-7000-8000-000000000000')).body.matches).toEqual([]);
    expect((await search('se_', '')).body.matches).toEqual([]); // like wildcards are literal
  });

  it('finds a lease holder, a consumer group and a partition by exact name (issue 34)', async () => {
    await pushMany(app.api, 'sh.a', 'sh-part', 2);
    await pushMany(app.api, 'sh.b', 'sh-part', 1);
    await pushMany(app.api, 'sh.b', 'other', 1);
    const r = await popQueue(
      app.api,
      'sh.a',
      { consumerGroup: 'sh-group', batch: 1 },
      { headers: { 'x-queen-consumer': 'sh-worker-1' } },
    );
    expect(r.status).toBe(200);
    await popQueue(app.api, 'sh.b', { consumerGroup: 'sh-group', batch: 1, partition: 'other' });
    const [held] = await app.db.query<any>(
      `select count(distinct lease_id)::int as leases, count(*)::int as partitions from queen.cursors
       where lease_holder = 'sh-worker-1' and lease_id is not null`,
    );
    expect((await search('sh-worker-1')).body.matches).toEqual([
      {
        kind: 'holder',
        label: `holder sh-worker-1: ${held.leases} lease on ${held.partitions} partition`,
        href: '/leases?holderIs=sh-worker-1',
      },
    ]);
    const [{ n }] = await app.db.query<any>(
      `select count(*)::int as n from queen.queue_groups where consumer_group = 'sh-group'`,
    );
    expect(n).toBe(2);
    expect((await search('sh-group')).body.matches).toEqual([
      { kind: 'group', label: 'group sh-group: reads 2 queues', href: '/groups?group=sh-group' },
    ]);
    expect((await search('sh-part')).body.matches).toEqual([
      { kind: 'partition', label: 'partition sh-part of sh.a', href: queueHref('sh.a', { partition: 'sh-part' }) },
      { kind: 'partition', label: 'partition sh-part of sh.b', href: queueHref('sh.b', { partition: 'sh-part' }) },
    ]);
    // exact names: a part finds nothing
    expect((await search('sh-work')).body.matches).toEqual([]);
  });

  it('kind=queue suggests queue names, bounded by limit; bad input is a 400 naming it', async () => {
    await pushMany(app.api, 'su.one', 'p', 1);
    await pushMany(app.api, 'su.two', 'p', 1);
    const res = await app.api.get('/api/v1/search?kind=queue&q=su.&limit=1');
    expect(res.body).toEqual({
      q: 'su.',
      matches: [{ kind: 'queue', label: 'queue su.one', href: '/queues/su.one' }],
      truncated: true,
    });
    expect((await app.api.get('/api/v1/search')).body.error).toMatch(/^q: required/);
    expect((await app.api.get('/api/v1/search?q=x&limit=51')).body.error).toMatch(/^limit: /);
    expect((await app.api.get('/api/v1/search?q=x&kind=lease')).body.error).toMatch(/^kind: /);
  });

  it('every lookup is an index walk (the plans)', async () => {
    // Seq scans off, on one connection: a tiny table's seq scan (cheaper once autovacuum has
    // measured the table) must not hide a missing index, nor pass for one.
    const plans: Record<string, string> = {};
    const c = await app.db.pool.connect();
    try {
      await c.query('set enable_seqscan = off');
      for (const [label, text] of [
        ['message', `select 1 from queen.messages m where m.id = '00000000-0000-7000-8000-000000000000'`],
        ['transaction', `select 1 from queen.messages m where m.transaction_id = 'x' limit 20`],
        ['lease', `select 1 from queen.cursors c where c.lease_id = '00000000-0000-7000-8000-000000000000'`],
        ['queue', `select name from queen.queues q where q.name like '%' order by q.name using ~<~ limit 20`],
        [
          'window',
          `select 1 from queen.messages m where m.partition_id = '00000000-0000-7000-8000-000000000000' and m."offset" between 1 and 100`,
        ],
        // the name lookups of sql/031 and 007
        ['holder', `select 1 from queen.cursors c where c.lease_holder = 'x' and c.lease_id is not null`],
        ['group', `select 1 from queen.queue_groups g where g.consumer_group = 'x'`],
        ['partition', `select 1 from queen.partitions p where p.name = 'x'`],
      ]) {
        const { rows } = await c.query<{ 'QUERY PLAN': string }>(`explain ${text}`);
        plans[label] = rows.map((r) => r['QUERY PLAN']).join('\n');
      }
    } finally {
      c.release(true);
    }
    console.log(plans);
    expect(plans.holder).toMatch(/Index (Only )?Scan (using|on) cursors_lease_holder/);
    expect(plans.group).toMatch(/Index (Only )?Scan (using|on) queue_groups_group/);
    expect(plans.partition).toMatch(/Index (Only )?Scan (using|on) partitions_name/);
    expect(plans.message).toMatch(/Index (Only )?Scan (using|on) messages_id/);
    expect(plans.transaction).toMatch(/Index (Only )?Scan (using|on) messages_transaction_id_partition_id_key/);
    expect(plans.lease).toMatch(/Index (Only )?Scan (using|on) cursors_lease/);
    expect(plans.queue).toMatch(/Index (Only )?Scan using queues_name_prefix/);
    expect(plans.queue).not.toMatch(/Sort/);
    expect(plans.window).toMatch(/Index (Only )?Scan (using|on) messages_pkey/);
  });
});

describe('what a pop would create', () => {
  it('says whether the queue and the group exist', async () => {
    await pushMany(app.api, 'pt.q', 'p', 1);
    await popQueue(app.api, 'pt.q', { consumerGroup: 'old' });
    const target = (qs: string) => app.api.get(`/api/dashboard/pop-target?${qs}`);
    expect((await target('queue=pt.q&consumerGroup=old')).body).toEqual({
      queue: 'pt.q',
      queueExists: true,
      consumerGroup: 'old',
      groupExists: true,
    });
    expect((await target('queue=pt.q&consumerGroup=new')).body).toMatchObject({
      queueExists: true,
      groupExists: false,
    });
    expect((await target('queue=pt.missing')).body).toMatchObject({
      queueExists: false,
      consumerGroup: '__QUEUE_MODE__',
      groupExists: false,
    });
    expect((await target('')).body.error).toMatch(/^queue: /);
    expect(await app.db.query(`select 1 from queen.queues where name = 'pt.missing'`)).toEqual([]);
  });
});
