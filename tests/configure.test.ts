import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONFIGURED_QUEUE_DEFAULTS } from '@/lib/broker/option-defaults';
import { startApp, type TestApp } from './support/app';

// every option's default, as pop-routes.md states them (tests/option-defaults.test.ts checks the values)
const DEFAULTS = CONFIGURED_QUEUE_DEFAULTS;

describe('POST /api/v1/configure', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startApp();
  });
  afterAll(() => app.stop());

  it('creates the queue and its Default partition, and echoes every option with its stored value', async () => {
    const options = {
      leaseTime: 120,
      retryLimit: 5,
      retryDelay: 250,
      delayedProcessing: 2,
      windowBuffer: 3,
      minPopWaitTime: 50,
      maxSize: 1000,
      ttl: 60,
      priority: 7,
      deadLetterQueue: true,
      dlqAfterMaxRetries: true,
      retentionEnabled: true,
      retentionSeconds: 86400,
      completedRetentionSeconds: 3600,
      encryptionEnabled: false,
      maxWaitTimeSeconds: 30,
      deadLetterAfterExpiries: 4,
    };
    const res = await app.api.post('/api/v1/configure', {
      queue: 'orders.created',
      namespace: 'orders',
      task: 'created',
      options: { ...options, notAnOption: 1 },
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ configured: true, queue: 'orders.created', namespace: 'orders', task: 'created' });
    expect(res.body.options).toEqual(options);
    expect(res.body.queueId).toMatch(/^[0-9a-f-]{36}$/);

    const detail = await app.api.get('/api/v1/resources/queues/orders.created');
    expect(detail.body.id).toBe(res.body.queueId);
    expect(detail.body.options).toEqual(options);
    expect(detail.body.configured).toBe(true);
    expect(detail.body.partitions).toEqual([
      expect.objectContaining({ id: res.body.partitionId, name: 'Default', headOffset: 0, lastPushAt: null }),
    ]);
  });

  it('is a full set: omitted options go back to their defaults (lease 300)', async () => {
    await app.api.post('/api/v1/configure', {
      queue: 'reset',
      options: { leaseTime: 10, retryLimit: 9, windowBuffer: 4 },
    });
    const res = await app.api.post('/api/v1/configure', { queue: 'reset', options: { retryDelay: 5 } });
    expect(res.body.options).toEqual({ ...DEFAULTS, retryDelay: 5 });
    const bare = await app.api.post('/api/v1/configure', { queue: 'reset' });
    expect(bare.body.options).toEqual(DEFAULTS);
  });

  it('keeps the queue id and partitions when reconfigured, and turns an implicit queue into a configured one', async () => {
    const pushed = await app.api.push([{ queue: 'implicit.one', partition: 'p', payload: 1 }]);
    const before = await app.api.get('/api/v1/resources/queues/implicit.one');
    expect(before.body.options.leaseTime).toBe(60);
    const res = await app.api.post('/api/v1/configure', { queue: 'implicit.one', namespace: null, task: null });
    expect(res.body.queueId).toBe(before.body.id);
    expect(res.body).toMatchObject({ namespace: '', task: '' });
    expect(res.body.options.leaseTime).toBe(300);
    const after = await app.api.get('/api/v1/resources/queues/implicit.one');
    expect(after.body.partitions.map((p: any) => [p.name, p.headOffset])).toEqual([
      ['Default', 0],
      ['p', 1],
    ]);
    expect(after.body.partitions[1].id).toBe(pushed.body[0].partition_id);
  });

  it('clamps minPopWaitTime to 60000', async () => {
    const res = await app.api.post('/api/v1/configure', { queue: 'clamp', options: { minPopWaitTime: 999999 } });
    expect(res.body.options.minPopWaitTime).toBe(60000);
  });

  it('accepts the empty string as a queue name', async () => {
    const res = await app.api.post('/api/v1/configure', { queue: '' });
    expect(res.status).toBe(200);
    expect(res.body.queue).toBe('');
    const list = await app.api.get('/api/v1/resources/queues');
    expect(list.body.queues.map((q: any) => q.name)).toContain('');
  });

  it('refuses encryptionEnabled without QUEEN_ENCRYPTION_KEY, writing nothing', async () => {
    const res = await app.api.post('/api/v1/configure', { queue: 'secret', options: { encryptionEnabled: true } });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatch(/QUEEN_ENCRYPTION_KEY/);
    expect((await app.api.get('/api/v1/resources/queues/secret')).status).toBe(404);
  });
});

describe('queue resources', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startApp();
  });
  afterAll(() => app.stop());

  it('lists queues with partitions and message counts', async () => {
    await app.api.push([
      { queue: 'list.a', partition: 'p1', payload: 1 },
      { queue: 'list.a', partition: 'p2', payload: 2 },
      { queue: 'list.a', partition: 'p2', payload: 3 },
    ]);
    const res = await app.api.get('/api/v1/resources/queues');
    expect(res.status).toBe(200);
    const q = res.body.queues.find((x: any) => x.name === 'list.a');
    expect(Object.keys(q).sort()).toEqual(['createdAt', 'id', 'messages', 'name', 'namespace', 'partitions', 'task']);
    expect(q).toMatchObject({
      namespace: 'list',
      task: 'a',
      partitions: 2,
      messages: { total: 3, pending: 3, processing: 0 },
    });
    expect(q.createdAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
  });

  it('answers 404 for an unknown queue', async () => {
    const res = await app.api.get('/api/v1/resources/queues/nope');
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ error: 'queue "nope" not found' });
  });

  it('decodes queue names in the path; a name with a slash is refused there (an encoded slash is no path)', async () => {
    await app.api.push([{ queue: 'with space', payload: 1 }]);
    const res = await app.api.get(`/api/v1/resources/queues/${encodeURIComponent('with space')}`);
    expect(res.status).toBe(200);
    expect(res.body.name).toBe('with space');
    await app.api.push([{ queue: 'with/slash', payload: 1 }]);
    const slash = await app.api.get(`/api/v1/resources/queues/${encodeURIComponent('with/slash')}`);
    expect(slash.status).toBe(400);
    expect(slash.body.error).toMatch(/^path: contains an encoded slash or backslash/);
  });

  it('deletes a queue with everything that hangs off it, and says whether it existed', async () => {
    await app.api.push([
      { queue: 'doomed', partition: 'a', payload: 1 },
      { queue: 'doomed', partition: 'b', payload: 2 },
    ]);
    await app.api.push([{ queue: 'kept', payload: 1 }]);
    const queueId = (await app.api.get('/api/v1/resources/queues/doomed')).body.id;
    // Everything else that hangs off a queue: a group (cursors, backlog, counters), an attempt, a dead letter, a subscription.
    await app.api.post('/api/v1/consumer-groups/g/subscription', { queue: 'doomed', subscriptionMode: 'all' });
    await app.db.query(
      `insert into queen.message_attempts (partition_id, consumer_group, "offset") select id, 'g', 1 from queen.partitions where queue_id = $1`,
      [queueId],
    );
    await app.db.query(
      `insert into queen.dead_letters (partition_id, consumer_group, "offset", retry_count) select id, 'g', 1, 3 from queen.partitions where queue_id = $1`,
      [queueId],
    );

    const partitionIds = (
      await app.db.query<{ id: string }>('select id from queen.partitions where queue_id = $1', [queueId])
    ).map((r) => r.id);
    const counts = async () => {
      const out: Record<string, number> = {};
      for (const table of ['segments', 'messages', 'cursors', 'message_attempts', 'dead_letters']) {
        const [r] = await app.db.query<{ n: number }>(
          `select count(*)::int as n from queen.${table} where partition_id = any($1::uuid[])`,
          [partitionIds],
        );
        out[table] = r.n;
      }
      return out;
    };
    expect(await counts()).toEqual({ segments: 2, messages: 2, cursors: 2, message_attempts: 2, dead_letters: 2 });

    const res = await app.api.del('/api/v1/resources/queues/doomed');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ deleted: true, queue: 'doomed', existed: true });
    expect(await counts()).toEqual({ segments: 0, messages: 0, cursors: 0, message_attempts: 0, dead_letters: 0 });
    expect(await app.db.query('select 1 from queen.partitions where queue_id = $1', [queueId])).toEqual([]);
    for (const table of ['subscriptions', 'queue_groups', 'backlog', 'queue_stats', 'group_stats']) {
      expect(await app.db.query(`select 1 from queen.${table} where queue_id = $1`, [queueId])).toEqual([]);
    }
    expect((await app.api.get('/api/v1/resources/queues/doomed')).status).toBe(404);
    expect((await app.api.get('/api/v1/resources/queues/kept')).status).toBe(200);

    const again = await app.api.del('/api/v1/resources/queues/doomed');
    expect(again.body).toEqual({ deleted: true, queue: 'doomed', existed: false });
  });
});
