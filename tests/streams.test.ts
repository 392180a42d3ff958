// The Streams API, rule by rule (spec/streams.md): registration, state reads, cycles and their
// fencing, message-id order, the operator's reset, metrics.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from './support/app';
import { popQueue, pushMany, sleep, type PopReply } from './support/broker';
import { parsePrometheus, valueOf } from './support/prometheus';
import { AUDIENCE, ISSUER, SECRET, bearer, hs256, mint } from './support/tokens';

let app: TestApp;
beforeAll(async () => {
  app = await startApp();
});
afterAll(() => app.stop());

const HASH_A = 'a'.repeat(64);
const HASH_B = 'b'.repeat(64);

const register = (name: string, extra: Record<string, unknown> = {}) =>
  app.api.post('/streams/v1/queries', {
    name,
    source_queue: `${name}.src`,
    sink_queue: `${name}.sink`,
    config_hash: HASH_A,
    ...extra,
  });
const cycle = (body: Record<string, unknown>) => app.api.post('/streams/v1/cycle', body);
/** A partition of `queue`, made by pushing one message to it: a cycle belongs to one of its query's source queue. */
async function partitionOf(queue: string, partition = 'p', api = app.api): Promise<string> {
  const res = await api.push([{ queue, partition, payload: 0 }]);
  expect(res.status, res.text).toBe(201);
  return res.body[0].partition_id;
}
const stateGet = (body: Record<string, unknown>) => app.api.post('/streams/v1/state/get', body);

/** Registers `name`, pushes `count` messages to its source partition p, and pops them for streams.<name>. */
async function setUp(name: string, count: number, pop: Record<string, string | number> = {}) {
  const reg = await register(name);
  expect(reg.status).toBe(200);
  await pushMany(app.api, `${name}.src`, 'p', count, name);
  const popped = await popQueue(app.api, `${name}.src`, { consumerGroup: `streams.${name}`, batch: count, ...pop });
  expect(popped.status).toBe(200);
  return { queryId: reg.body.query_id as string, popped, partitionId: popped.body.partitionId as string };
}

const ackOf = (m: any, extra: Record<string, unknown> = {}) => ({
  transactionId: m.transactionId,
  leaseId: m.leaseId,
  ...extra,
});

const cursorOf = async (partitionId: string, group: string) =>
  (
    await app.db.query<any>(
      `select committed_offset::int as committed, lease_id, lease_end_offset::int as lease_end, failures::int, dead_letters::int
     from queen.cursors where partition_id = $1 and consumer_group = $2`,
      [partitionId, group],
    )
  )[0];

const stateRows = async (queryId: string) =>
  app.db.query<{ partition_id: string; key: string; value: unknown }>(
    'select partition_id, key, value from queen_streams.state where query_id = $1 order by partition_id, key',
    [queryId],
  );

const sinkCount = async (queue: string) =>
  (
    await app.db.query<{ n: number }>(
      `select count(*)::int as n from queen.messages m join queen.partitions p on p.id = m.partition_id
     join queen.queues q on q.id = p.queue_id where q.name = $1`,
      [queue],
    )
  )[0].n;

describe('POST /streams/v1/queries', () => {
  it('inserts a new name (fresh), keeps its id and its state on the same hash, and updates its queues', async () => {
    const first = await register('reg-new');
    expect(first.status).toBe(200);
    expect(first.body).toEqual({
      success: true,
      query_id: expect.any(String),
      name: 'reg-new',
      config_hash: HASH_A,
      fresh: true,
      reset: false,
    });
    const partitionId = await partitionOf('reg-new.src');
    await cycle({
      query_id: first.body.query_id,
      partition_id: partitionId,
      state_ops: [{ type: 'upsert', key: 'k', value: 1 }],
    });
    const again = await register('reg-new', { sink_queue: 'elsewhere' });
    expect(again.body).toEqual({
      success: true,
      query_id: first.body.query_id,
      name: 'reg-new',
      config_hash: HASH_A,
      fresh: false,
      reset: false,
    });
    // reset:true with the same hash keeps the state (decision table, first row)
    const sameReset = await register('reg-new', { reset: true, sink_queue: null });
    expect(sameReset.body).toMatchObject({ fresh: false, reset: false, query_id: first.body.query_id });
    expect(await stateRows(first.body.query_id)).toHaveLength(1);
    expect(
      await app.db.query('select sink_queue from queen_streams.queries where id = $1', [first.body.query_id]),
    ).toEqual([{ sink_queue: null }]);
  });

  it('another hash without reset: 409 naming the mismatch, and nothing changes', async () => {
    const first = await register('reg-conflict');
    const partitionId = await partitionOf('reg-conflict.src');
    await cycle({
      query_id: first.body.query_id,
      partition_id: partitionId,
      state_ops: [{ type: 'upsert', key: 'k', value: 1 }],
    });
    const res = await register('reg-conflict', { config_hash: HASH_B, source_queue: 'other' });
    expect(res.status).toBe(409);
    expect(res.body).toEqual({
      success: false,
      query_id: first.body.query_id,
      name: 'reg-conflict',
      error:
        "config_hash mismatch for query 'reg-conflict': its operator chain changed; register with reset:true to drop its state, or use another name",
    });
    expect(
      await app.db.query('select config_hash, source_queue from queen_streams.queries where id = $1', [
        first.body.query_id,
      ]),
    ).toEqual([{ config_hash: HASH_A, source_queue: 'reg-conflict.src' }]);
    expect(await stateRows(first.body.query_id)).toHaveLength(1);
  });

  it('another hash with reset:true drops the state of every partition and stores the new hash and queues', async () => {
    const first = await register('reg-reset');
    const [p1, p2] = [await partitionOf('reg-reset.src', 'a'), await partitionOf('reg-reset.src', 'b')];
    for (const p of [p1, p2])
      await cycle({
        query_id: first.body.query_id,
        partition_id: p,
        state_ops: [{ type: 'upsert', key: 'k', value: p }],
      });
    const other = await register('reg-other');
    await cycle({
      query_id: other.body.query_id,
      partition_id: await partitionOf('reg-other.src'),
      state_ops: [{ type: 'upsert', key: 'k', value: 1 }],
    });
    const res = await register('reg-reset', { config_hash: HASH_B, reset: true, source_queue: 'new.src' });
    expect(res.body).toEqual({
      success: true,
      query_id: first.body.query_id,
      name: 'reg-reset',
      config_hash: HASH_B,
      fresh: false,
      reset: true,
    });
    expect(await stateRows(first.body.query_id)).toEqual([]);
    expect(await stateRows(other.body.query_id)).toHaveLength(1); // another query's state stays
    expect(
      await app.db.query('select config_hash, source_queue from queen_streams.queries where id = $1', [
        first.body.query_id,
      ]),
    ).toEqual([{ config_hash: HASH_B, source_queue: 'new.src' }]);
    expect(
      await app.db.query('select sum(state_keys)::int as n from queen_streams.shards where query_id = $1', [
        first.body.query_id,
      ]),
    ).toEqual([{ n: 0 }]);
  });

  it('a reset through registration is audited (streams.reset, via registration, by its caller); a plain one is not', async () => {
    const first = await register('reg-audit');
    const p = await partitionOf('reg-audit.src');
    await cycle({
      query_id: first.body.query_id,
      partition_id: p,
      state_ops: [
        { type: 'upsert', key: 'a', value: 1 },
        { type: 'upsert', key: 'b', value: 2 },
      ],
    });
    const audited = () =>
      app.db.query<any>(
        `select actor, target, reason, result, details from queen.audit_log
         where action = 'streams.reset' and details->>'queryId' = $1 order by id`,
        [first.body.query_id],
      );
    await register('reg-audit'); // the same hash: nothing dropped, nothing audited
    expect(await audited()).toEqual([]);
    const res = await app.api.post(
      '/streams/v1/queries',
      { name: 'reg-audit', source_queue: 'reg-audit.src', config_hash: HASH_B, reset: true },
      { headers: { 'x-queen-actor': 'deployer' } },
    );
    expect(res.body).toMatchObject({ reset: true, fresh: false });
    expect(await audited()).toEqual([
      {
        actor: 'deployer',
        target: 'reg-audit',
        reason: null,
        result: 'reset',
        details: {
          queryId: first.body.query_id,
          query: 'reg-audit',
          via: 'registration',
          queue: 'reg-audit.src',
          sinkQueue: null,
          configHash: HASH_B,
          previousConfigHash: HASH_A,
          previousQueue: 'reg-audit.src',
          rowsDeleted: 2,
          shards: 1,
        },
      },
    ]);
  });

  it('serializes racing first registrations: exactly one is fresh, the others are judged against its hash', async () => {
    const hashes = [HASH_A, HASH_A, HASH_B, HASH_A, HASH_B, HASH_A];
    const results = await Promise.all(hashes.map((h) => register('reg-race', { config_hash: h })));
    const fresh = results.filter((r) => r.body.fresh === true);
    expect(fresh).toHaveLength(1);
    const winner = fresh[0].body.config_hash;
    results.forEach((r, i) => expect(r.status).toBe(hashes[i] === winner ? 200 : 409));
    expect(new Set(results.map((r) => r.body.query_id)).size).toBe(1);
  });

  it('refuses bad bodies with a 400 naming the field, before any database work', async () => {
    const cases: [unknown, string][] = [
      [undefined, 'body'],
      [[], 'body'],
      ['"text"', 'body'],
      [{ source_queue: 's', config_hash: 'h' }, 'name'],
      [{ name: '', source_queue: 's', config_hash: 'h' }, 'name'],
      [{ name: 7, source_queue: 's', config_hash: 'h' }, 'name'],
      [{ name: 'n', config_hash: 'h' }, 'source_queue'],
      [{ name: 'n', source_queue: 's', config_hash: '' }, 'config_hash'],
      [{ name: 'n', source_queue: 's', config_hash: 'h', reset: 'yes' }, 'reset'],
      [{ name: 'n', source_queue: 's', config_hash: 'h', sink_queue: 5 }, 'sink_queue'],
      [{ name: 'x'.repeat(513), source_queue: 's', config_hash: 'h' }, 'name'],
    ];
    for (const [body, field] of cases) {
      const res = await app.api.post('/streams/v1/queries', body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error.startsWith(`${field}: `), res.text).toBe(true);
    }
    expect(await app.db.query("select 1 from queen_streams.queries where name = 'n'")).toEqual([]);
  });

  it('answers 405 to other methods', async () => {
    for (const path of ['/streams/v1/queries', '/streams/v1/cycle', '/streams/v1/state/get'])
      expect((await app.api.get(path)).status).toBe(405);
  });
});

describe('with JWT on', () => {
  let secured: TestApp;
  beforeAll(async () => {
    secured = await startApp({ JWT_ENABLED: 'true', JWT_SECRET: SECRET, JWT_ISSUER: ISSUER, JWT_AUDIENCE: AUDIENCE });
  });
  afterAll(() => secured.stop());

  it('a client without a token gets a JSON 401, not a redirect; state/get needs read-only, the others read-write', async () => {
    const body = { name: 'jwt-q', source_queue: 's', config_hash: 'h' };
    const none = await secured.api.post('/streams/v1/queries', body);
    expect(none.status).toBe(401);
    expect(none.body.error).toEqual(expect.any(String));
    const reader = bearer(await mint(hs256(), { role: 'read-only' }));
    const writer = bearer(await mint(hs256(), { role: 'read-write' }));
    expect((await secured.api.post('/streams/v1/queries', body, { headers: reader })).status).toBe(403);
    const reg = await secured.api.post('/streams/v1/queries', body, { headers: writer });
    expect(reg.status).toBe(200);
    const pushed = await secured.api.post(
      '/api/v1/push',
      { items: [{ queue: 's', partition: 'p', payload: 0 }] },
      {
        headers: writer,
      },
    );
    expect(pushed.status).toBe(201);
    const p = pushed.body[0].partition_id;
    expect(
      (
        await secured.api.post(
          '/streams/v1/cycle',
          { query_id: reg.body.query_id, partition_id: p },
          { headers: reader },
        )
      ).status,
    ).toBe(403);
    expect(
      (
        await secured.api.post(
          '/streams/v1/cycle',
          { query_id: reg.body.query_id, partition_id: p },
          { headers: writer },
        )
      ).status,
    ).toBe(200);
    expect(
      (
        await secured.api.post(
          '/streams/v1/state/get',
          { query_id: reg.body.query_id, partition_id: p },
          { headers: reader },
        )
      ).body,
    ).toEqual({ success: true, rows: [] });
  });
});

describe('POST /streams/v1/state/get', () => {
  let queryId: string;
  let partitionId: string;
  beforeAll(async () => {
    queryId = (await register('state-reads')).body.query_id;
    partitionId = await partitionOf('state-reads.src');
    const res = await cycle({
      query_id: queryId,
      partition_id: partitionId,
      state_ops: [
        { type: 'upsert', key: 'win\u001f1', value: { windowEnd: 1000, n: 1 } },
        { type: 'upsert', key: 'win\u001f2', value: { windowEnd: 2000, n: 2 } },
        { type: 'upsert', key: 'win\u001f3', value: { windowEnd: '1500' } },
        { type: 'upsert', key: 'a_b', value: [1, 2] },
        { type: 'upsert', key: 'axb', value: 'text' },
        { type: 'upsert', key: 'B', value: null },
        { type: 'upsert', key: 'é' },
        { type: 'upsert', key: '__wm__', value: 1500 },
      ],
    });
    expect(res.body).toMatchObject({ success: true, state_ops_applied: 8 });
  });

  const keysOf = (res: any) => res.body.rows.map((r: any) => r.key);

  it('returns the whole shard in byte order of key, each with its value and a UTC updated_at', async () => {
    const res = await stateGet({ query_id: queryId, partition_id: partitionId });
    expect(res.status).toBe(200);
    expect(res.body.success).toBe(true);
    expect(keysOf(res)).toEqual(['B', '__wm__', 'a_b', 'axb', 'win\u001f1', 'win\u001f2', 'win\u001f3', 'é']);
    const byKey = Object.fromEntries(res.body.rows.map((r: any) => [r.key, r]));
    expect(byKey.B.value).toBeNull();
    expect(byKey['é'].value).toEqual({}); // value absent: {}
    expect(byKey.a_b.value).toEqual([1, 2]);
    expect(byKey.B.updated_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
  });

  it('filters by keys (missing ones absent), by a literal prefix, by ripeness, and all of them together', async () => {
    expect(
      keysOf(await stateGet({ query_id: queryId, partition_id: partitionId, keys: ['axb', 'missing', 'B'] })),
    ).toEqual(['B', 'axb']);
    expect(keysOf(await stateGet({ query_id: queryId, partition_id: partitionId, keys: [] }))).toHaveLength(8);
    // `_` is no wildcard: a_ does not match axb
    expect(keysOf(await stateGet({ query_id: queryId, partition_id: partitionId, key_prefix: 'a_' }))).toEqual(['a_b']);
    expect(keysOf(await stateGet({ query_id: queryId, partition_id: partitionId, key_prefix: '%' }))).toEqual([]);
    expect(keysOf(await stateGet({ query_id: queryId, partition_id: partitionId, key_prefix: '' }))).toHaveLength(8);
    // only objects whose windowEnd is a JSON number at or before the bound
    expect(keysOf(await stateGet({ query_id: queryId, partition_id: partitionId, ripe_at_or_before: 1999 }))).toEqual([
      'win\u001f1',
    ]);
    expect(keysOf(await stateGet({ query_id: queryId, partition_id: partitionId, ripe_at_or_before: 2000 }))).toEqual([
      'win\u001f1',
      'win\u001f2',
    ]);
    expect(
      keysOf(
        await stateGet({
          query_id: queryId,
          partition_id: partitionId,
          key_prefix: 'win',
          ripe_at_or_before: 5000,
          keys: ['win\u001f2', 'axb'],
        }),
      ),
    ).toEqual(['win\u001f2']);
  });

  it('an unknown query or partition gives no rows', async () => {
    expect(
      (await stateGet({ query_id: '01a2291d-98d7-78cc-b1bd-7f3819ba7799', partition_id: partitionId })).body,
    ).toEqual({ success: true, rows: [] });
    expect((await stateGet({ query_id: queryId, partition_id: '01a2291d-98d7-78cc-b1bd-7f3819ba7799' })).body).toEqual({
      success: true,
      rows: [],
    });
  });

  it('refuses bad fields with a 400 naming them', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ query_id: 'nope', partition_id: partitionId }, 'query_id'],
      [{ query_id: queryId }, 'partition_id'],
      [{ query_id: queryId, partition_id: partitionId, keys: 'axb' }, 'keys'],
      [{ query_id: queryId, partition_id: partitionId, keys: [1] }, 'keys[0]'],
      [
        { query_id: queryId, partition_id: partitionId, keys: Array.from({ length: 10_001 }, (_, i) => `k${i}`) },
        'keys',
      ],
      [{ query_id: queryId, partition_id: partitionId, ripe_at_or_before: '5' }, 'ripe_at_or_before'],
      [{ query_id: queryId, partition_id: partitionId, key_prefix: 3 }, 'key_prefix'],
    ];
    for (const [body, field] of cases) {
      const res = await stateGet(body);
      expect(res.status, String(JSON.stringify(body)).slice(0, 200)).toBe(400);
      expect(res.body.error.startsWith(`${field}: `), res.text).toBe(true);
    }
  });
});

describe('POST /streams/v1/cycle', () => {
  it('commits state ops, sink pushes and the ack together, and answers every field', async () => {
    const { queryId, popped, partitionId } = await setUp('cyc-ok', 3);
    const m3 = popped.body.messages[2];
    const res = await cycle({
      query_id: queryId,
      partition_id: partitionId,
      consumer_group: 'streams.cyc-ok',
      state_ops: [
        { type: 'upsert', key: 'count', value: 1 },
        { type: 'upsert', key: 'gone', value: 1 },
        { type: 'upsert', key: 'count', value: 3 }, // later ops on a key win
        { type: 'delete', key: 'gone' },
      ],
      push_items: [
        { queue: 'cyc-ok.sink', payload: { total: 3 }, transactionId: 'out-1' },
        { queue: 'cyc-ok.sink', partition: 'x' },
      ],
      ack: ackOf(m3),
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      success: true,
      query_id: queryId,
      partition_id: partitionId,
      queueName: 'cyc-ok.src',
      state_ops_applied: 4,
      push_results: [
        {
          index: 0,
          transaction_id: 'out-1',
          status: 'queued',
          message_id: expect.any(String),
          partition_id: expect.any(String),
          trace_id: null,
          queueName: 'cyc-ok.sink',
        },
        {
          index: 1,
          transaction_id: expect.any(String),
          status: 'queued',
          message_id: expect.any(String),
          partition_id: expect.any(String),
          trace_id: null,
          queueName: 'cyc-ok.sink',
        },
      ],
      ack_result: { success: true, count: 3, lease_released: true, dlq: false },
    });
    expect(await stateRows(queryId)).toEqual([{ partition_id: partitionId, key: 'count', value: 3 }]);
    expect(await cursorOf(partitionId, 'streams.cyc-ok')).toMatchObject({ committed: 3, lease_id: null });
    expect(await sinkCount('cyc-ok.sink')).toBe(2);
    // a sink push with a known transactionId is a duplicate, as on /api/v1/push
    const dup = await cycle({
      query_id: queryId,
      partition_id: partitionId,
      push_items: [{ queue: 'cyc-ok.sink', payload: 1, transactionId: 'out-1' }],
    });
    expect(dup.body.push_results[0]).toMatchObject({
      status: 'duplicate',
      message_id: res.body.push_results[0].message_id,
    });
    expect(await sinkCount('cyc-ok.sink')).toBe(2);
    const shard = await app.db.query<any>(
      'select cycles::int, state_keys::int, consumer_group from queen_streams.shards where query_id = $1',
      [queryId],
    );
    expect(shard).toEqual([{ cycles: 2, state_keys: 1, consumer_group: 'streams.cyc-ok' }]);
  });

  it('a replay of a committed cycle is refused with no effect (o ≤ committed), whatever release_lease said', async () => {
    const { queryId, popped, partitionId } = await setUp('cyc-replay', 4);
    const msgs = popped.body.messages;
    const body = {
      query_id: queryId,
      partition_id: partitionId,
      consumer_group: 'streams.cyc-replay',
      release_lease: false,
      state_ops: [{ type: 'upsert', key: 'n', value: 2 }],
      push_items: [{ queue: 'cyc-replay.sink', payload: 'x' }],
      ack: ackOf(msgs[1]),
    };
    const first = await cycle(body);
    expect(first.body).toMatchObject({ success: true, ack_result: { count: 2, lease_released: false } });
    expect(await cursorOf(partitionId, 'streams.cyc-replay')).toMatchObject({
      committed: 2,
      lease_id: popped.body.leaseId,
    });
    const replay = await cycle({ ...body, state_ops: [{ type: 'upsert', key: 'n', value: 99 }] });
    expect(replay.status).toBe(200);
    expect(replay.body).toEqual({
      success: false,
      query_id: queryId,
      partition_id: partitionId,
      queueName: 'cyc-replay.src',
      error: 'Message already acknowledged',
      state_ops_applied: 0,
      push_results: [],
      ack_result: null,
    });
    expect(await stateRows(queryId)).toEqual([{ partition_id: partitionId, key: 'n', value: 2 }]);
    expect(await sinkCount('cyc-replay.sink')).toBe(1);
    // the same lease goes on: the last message covers the rest and releases it
    const last = await cycle({
      query_id: queryId,
      partition_id: partitionId,
      consumer_group: 'streams.cyc-replay',
      release_lease: false,
      ack: ackOf(msgs[3]),
    });
    expect(last.body.ack_result).toEqual({ success: true, count: 2, lease_released: true, dlq: false });
    expect(
      (await app.db.query<any>('select refused::int from queen_streams.shards where query_id = $1', [queryId]))[0]
        .refused,
    ).toBe(1);
  });

  it('a failing sink push rolls back the state ops and the ack', async () => {
    const { queryId, popped, partitionId } = await setUp('cyc-atomic', 2);
    await app.api.post('/api/v1/configure', { queue: 'cyc-atomic.sink', options: { maxSize: 1 } });
    const res = await cycle({
      query_id: queryId,
      partition_id: partitionId,
      consumer_group: 'streams.cyc-atomic',
      state_ops: [{ type: 'upsert', key: 'n', value: 1 }],
      push_items: [
        { queue: 'cyc-atomic.sink', payload: 1 },
        { queue: 'cyc-atomic.sink', payload: 2 },
      ],
      ack: ackOf(popped.body.messages[1]),
    });
    expect(res.body).toMatchObject({
      success: false,
      queueName: 'cyc-atomic.src',
      state_ops_applied: 0,
      push_results: [],
      ack_result: null,
    });
    expect(res.body.error).toMatch(/queue "cyc-atomic.sink" is full/);
    expect(await stateRows(queryId)).toEqual([]);
    expect(await sinkCount('cyc-atomic.sink')).toBe(0);
    expect(await cursorOf(partitionId, 'streams.cyc-atomic')).toMatchObject({
      committed: 0,
      lease_id: popped.body.leaseId,
    });
    // and the same cycle, once the sink has room, commits
    await app.api.post('/api/v1/configure', { queue: 'cyc-atomic.sink', options: { maxSize: 0 } });
    const retry = await cycle({
      query_id: queryId,
      partition_id: partitionId,
      consumer_group: 'streams.cyc-atomic',
      state_ops: [{ type: 'upsert', key: 'n', value: 1 }],
      push_items: [{ queue: 'cyc-atomic.sink', payload: 1 }],
      ack: ackOf(popped.body.messages[1]),
    });
    expect(retry.body.success).toBe(true);
  });

  it('fencing: an expired lease, a re-claimed span and a released lease are refused with no effect', async () => {
    const { queryId, popped, partitionId } = await setUp('cyc-fence', 2, { leaseSeconds: 1 });
    const group = 'streams.cyc-fence';
    const stale = {
      query_id: queryId,
      partition_id: partitionId,
      consumer_group: group,
      state_ops: [{ type: 'upsert', key: 'n', value: 'stale' }],
      push_items: [{ queue: 'cyc-fence.sink', payload: 1 }],
      ack: ackOf(popped.body.messages[1]),
    };
    await sleep(1200);
    expect((await cycle(stale)).body).toMatchObject({ success: false, error: 'Invalid or expired lease' });
    // another worker claims the span again: a new lease id
    const again = await popQueue(app.api, 'cyc-fence.src', { consumerGroup: group, batch: 2 });
    expect(again.body.leaseId).not.toBe(popped.body.leaseId);
    expect((await cycle(stale)).body).toMatchObject({ success: false, error: 'Invalid or expired lease' });
    expect((await cycle({ ...stale, ack: ackOf(again.body.messages[1], { leaseId: 'not-a-uuid' }) })).body.error).toBe(
      'Invalid or expired lease',
    );
    // the operator force-releases it: its holder's cycle is refused too
    expect((await app.api.post(`/api/v1/leases/${again.body.leaseId}/release`, { reason: 'test' })).status).toBe(200);
    expect((await cycle({ ...stale, ack: ackOf(again.body.messages[1]) })).body).toMatchObject({
      success: false,
      error: 'Invalid or expired lease',
    });
    expect(await stateRows(queryId)).toEqual([]);
    expect(await sinkCount('cyc-fence.sink')).toBe(0);
    expect(await cursorOf(partitionId, group)).toMatchObject({ committed: 0 });
  });

  it('refuses an unknown message, a message past the lease, an unknown query, and a cycle of another group', async () => {
    const { queryId, partitionId } = await setUp('cyc-reasons', 1);
    await pushMany(app.api, 'cyc-reasons.src', 'p', 2, 'later', 0);
    const base = { query_id: queryId, partition_id: partitionId, consumer_group: 'streams.cyc-reasons' };
    const lease = (
      await app.db.query<any>('select lease_id from queen.cursors where partition_id = $1 and consumer_group = $2', [
        partitionId,
        'streams.cyc-reasons',
      ])
    )[0].lease_id;
    expect((await cycle({ ...base, ack: { transactionId: 'nope', leaseId: lease } })).body.error).toBe(
      'Message not found',
    );
    expect((await cycle({ ...base, ack: { transactionId: 'later-1', leaseId: lease } })).body.error).toBe(
      'Message not in lease',
    );
    expect(
      (
        await cycle({
          ...base,
          consumer_group: 'someone-else',
          ack: { transactionId: 'cyc-reasons-0', leaseId: lease },
        })
      ).body.error,
    ).toBe('Invalid or expired lease');
    const unknown = await cycle({ ...base, query_id: '01a2291d-98d7-78cc-b1bd-7f3819ba7700' });
    expect(unknown.body).toMatchObject({ success: false, error: 'Query not found', queueName: 'cyc-reasons.src' });
  });

  it('release_lease:false keeps the lease and its expiry; the rest redelivers, in order, once it expires', async () => {
    const { queryId, popped, partitionId } = await setUp('cyc-keep', 3, { leaseSeconds: 1 });
    const group = 'streams.cyc-keep';
    const before = await app.db.query<any>(
      'select lease_expires_at from queen.cursors where partition_id = $1 and consumer_group = $2',
      [partitionId, group],
    );
    const res = await cycle({
      query_id: queryId,
      partition_id: partitionId,
      consumer_group: group,
      release_lease: false,
      ack: ackOf(popped.body.messages[0]),
    });
    expect(res.body.ack_result).toEqual({ success: true, count: 1, lease_released: false, dlq: false });
    expect(
      await app.db.query('select lease_expires_at from queen.cursors where partition_id = $1 and consumer_group = $2', [
        partitionId,
        group,
      ]),
    ).toEqual(before);
    expect((await popQueue(app.api, 'cyc-keep.src', { consumerGroup: group })).status).toBe(204);
    await sleep(1200);
    const redelivered = await popQueue(app.api, 'cyc-keep.src', { consumerGroup: group });
    expect(redelivered.body.messages.map((m: any) => m.transactionId)).toEqual(['cyc-keep-1', 'cyc-keep-2']);
  });

  it('release_lease:true ends the lease now: the rest of the span is claimable at once, no expiry counted', async () => {
    const { queryId, popped, partitionId } = await setUp('cyc-release', 3);
    const group = 'streams.cyc-release';
    const res = await cycle({
      query_id: queryId,
      partition_id: partitionId,
      consumer_group: group,
      ack: ackOf(popped.body.messages[0]),
    });
    expect(res.body.ack_result).toEqual({ success: true, count: 1, lease_released: true, dlq: false });
    const next = await popQueue(app.api, 'cyc-release.src', { consumerGroup: group });
    expect(next.body.messages.map((m: any) => m.transactionId)).toEqual(['cyc-release-1', 'cyc-release-2']);
    expect(
      (
        await app.db.query<any>(
          'select lease_expiries::int from queen.cursors where partition_id = $1 and consumer_group = $2',
          [partitionId, group],
        )
      )[0].lease_expiries,
    ).toBe(0);
  });

  it('failed (or dlq): the offsets before are done, the message dead-letters at once whatever retryLimit, the lease ends', async () => {
    const { queryId, popped, partitionId } = await setUp('cyc-failed', 3);
    const group = 'streams.cyc-failed';
    const res = await cycle({
      query_id: queryId,
      partition_id: partitionId,
      consumer_group: group,
      ack: ackOf(popped.body.messages[1], { status: 'dlq', error: 'bad window' }),
    });
    expect(res.body.ack_result).toEqual({ success: true, count: 2, lease_released: true, dlq: true });
    expect(await cursorOf(partitionId, group)).toMatchObject({
      committed: 2,
      lease_id: null,
      failures: 1,
      dead_letters: 1,
    });
    expect(
      await app.db.query(
        'select "offset"::int, error_message from queen.dead_letters where partition_id = $1 and consumer_group = $2',
        [partitionId, group],
      ),
    ).toEqual([{ offset: 2, error_message: 'bad window' }]);
    const next = await popQueue(app.api, 'cyc-failed.src', { consumerGroup: group });
    expect(next.body.messages.map((m: any) => m.transactionId)).toEqual(['cyc-failed-2']);
    const res2 = await cycle({
      query_id: queryId,
      partition_id: partitionId,
      consumer_group: group,
      ack: ackOf(next.body.messages[0], { status: 'failed' }),
    });
    expect(res2.body.ack_result.dlq).toBe(true);
    expect(
      await app.db.query('select error_message from queen.dead_letters where partition_id = $1 and "offset" = 3', [
        partitionId,
      ]),
    ).toEqual([{ error_message: 'Streaming cycle reported failure' }]);
  });

  it('an ack-less cycle is not fenced: state and sink pushes commit with no lease', async () => {
    const queryId = (await register('cyc-flush')).body.query_id;
    const partitionId = await partitionOf('cyc-flush.src');
    const res = await cycle({
      query_id: queryId,
      partition_id: partitionId,
      state_ops: [{ type: 'delete', key: 'never-there' }],
      push_items: [{ queue: 'cyc-flush.sink', payload: 1 }],
    });
    expect(res.body).toMatchObject({
      success: true,
      queueName: 'cyc-flush.src',
      state_ops_applied: 1,
      ack_result: null,
    });
    expect(await sinkCount('cyc-flush.sink')).toBe(1);
  });

  it("a partition outside the query's source queue is a 400 naming partition_id, and nothing is written", async () => {
    const { queryId, popped, partitionId } = await setUp('cyc-own', 1);
    const elsewhere = await partitionOf('cyc-own.elsewhere');
    const other = await setUp('cyc-own-other', 1); // another query's source partition, with a live lease
    const shardsOf = (id: string) =>
      app.db.query('select partition_id from queen_streams.shards where query_id = $1 order by 1', [id]);
    for (const p of [elsewhere, other.partitionId, '01a2291d-98d7-78cc-b1bd-7f3819ba7703']) {
      const res = await cycle({
        query_id: queryId,
        partition_id: p,
        consumer_group: 'streams.cyc-own-other',
        state_ops: [{ type: 'upsert', key: 'k', value: 1 }],
        push_items: [{ queue: 'cyc-own.sink', payload: 1 }],
        ack: ackOf(other.popped.body.messages[0]),
      });
      expect(res.status, p).toBe(400);
      expect(res.body.error).toBe(`partition_id: not a partition of the query's source queue "cyc-own.src"`);
    }
    expect(await shardsOf(queryId)).toEqual([]);
    expect(await stateRows(queryId)).toEqual([]);
    expect(await sinkCount('cyc-own.sink')).toBe(0);
    expect(await cursorOf(other.partitionId, 'streams.cyc-own-other')).toMatchObject({
      committed: 0,
      lease_id: other.popped.body.leaseId,
    });
    // its own partition commits
    const own = await cycle({
      query_id: queryId,
      partition_id: partitionId,
      consumer_group: 'streams.cyc-own',
      state_ops: [{ type: 'upsert', key: 'k', value: 1 }],
      ack: ackOf(popped.body.messages[0]),
    });
    expect(own.body).toMatchObject({ success: true, queueName: 'cyc-own.src' });
    expect(await shardsOf(queryId)).toEqual([{ partition_id: partitionId }]);
  });

  it('refuses bad bodies with a 400 naming the field, autoAck pops included (empty leaseId)', async () => {
    const { queryId, partitionId } = await setUp('cyc-400', 1, { autoAck: 'true' });
    const base = { query_id: queryId, partition_id: partitionId };
    const cases: [unknown, string][] = [
      [undefined, 'body'],
      [[1], 'body'],
      [{ partition_id: partitionId }, 'query_id'],
      [{ query_id: 'x', partition_id: partitionId }, 'query_id'],
      [{ query_id: queryId, partition_id: 'not-a-uuid' }, 'partition_id'],
      [{ ...base, ack: { transactionId: 'cyc-400-0', leaseId: '' } }, 'ack.leaseId'],
      [{ ...base, ack: { transactionId: 'cyc-400-0' } }, 'ack.leaseId'],
      [{ ...base, ack: { transactionId: 'cyc-400-0', leaseId: 'x', status: 'weird' } }, 'ack.status'],
      [{ ...base, state_ops: [{ type: 'merge', key: 'k' }] }, 'state_ops[0].type'],
      [{ ...base, state_ops: [{ type: 'upsert', key: 'k'.repeat(1025) }] }, 'state_ops[0].key'],
      [{ ...base, state_ops: 'x' }, 'state_ops'],
      [{ ...base, push_items: [{ payload: 1 }] }, 'push_items[0].queue'],
      [{ ...base, push_items: Array.from({ length: 10_001 }, () => ({ queue: 'q' })) }, 'push_items'],
      [{ ...base, release_lease: 'no' }, 'release_lease'],
      [{ ...base, consumer_group: 5 }, 'consumer_group'],
    ];
    for (const [body, field] of cases) {
      const res = await cycle(body as Record<string, unknown>);
      expect(res.status, String(JSON.stringify(body)).slice(0, 200)).toBe(400);
      expect(res.body.error.startsWith(`${field}: `), res.text).toBe(true);
    }
    expect(await stateRows(queryId)).toEqual([]);
    const empty = await app.api.request('POST', '/streams/v1/cycle', '');
    expect(empty.status).toBe(400);
  });
});

describe('interactions', () => {
  it("a multi-partition lease: only the cycle partition's cursor moves; the others keep the lease", async () => {
    const queryId = (await register('int-multi')).body.query_id;
    for (const p of ['a', 'b']) await pushMany(app.api, 'int-multi.src', p, 2, p);
    const popped = await popQueue(app.api, 'int-multi.src', { consumerGroup: 'streams.int-multi', partitions: 2 });
    const parts = [...new Set(popped.body.messages.map((m: any) => m.partitionId))] as string[];
    expect(parts).toHaveLength(2);
    const first = popped.body.messages.filter((m: any) => m.partitionId === parts[0]);
    const res = await cycle({
      query_id: queryId,
      partition_id: parts[0],
      consumer_group: 'streams.int-multi',
      ack: ackOf(first[first.length - 1]),
    });
    expect(res.body.ack_result).toMatchObject({ success: true, count: 2, lease_released: true });
    expect(await cursorOf(parts[1], 'streams.int-multi')).toMatchObject({
      committed: 0,
      lease_id: popped.body.leaseId,
    });
  });

  it('pause and pop maintenance stop pops, not cycles: a live lease still commits', async () => {
    const { queryId, popped, partitionId } = await setUp('int-pause', 2);
    const group = 'streams.int-pause';
    await app.api.post(`/api/v1/cursors/${partitionId}/${group}/pause`, { paused: true, reason: 'look at it' });
    await app.api.post('/api/v1/system/maintenance/pop', { enabled: true, reason: 'test' });
    try {
      const res = await cycle({
        query_id: queryId,
        partition_id: partitionId,
        consumer_group: group,
        state_ops: [{ type: 'upsert', key: 'n', value: 1 }],
        ack: ackOf(popped.body.messages[0]),
      });
      expect(res.body).toMatchObject({ success: true, ack_result: { count: 1 } });
    } finally {
      await app.api.post('/api/v1/system/maintenance/pop', { enabled: false, reason: 'test' });
    }
  });

  it('a seek ends the lease (the next cycle is refused) and does not rewind the state', async () => {
    const { queryId, popped, partitionId } = await setUp('int-seek', 2);
    const group = 'streams.int-seek';
    await cycle({
      query_id: queryId,
      partition_id: partitionId,
      consumer_group: group,
      release_lease: false,
      state_ops: [{ type: 'upsert', key: 'n', value: 1 }],
      ack: ackOf(popped.body.messages[0]),
    });
    expect(
      (await app.api.post(`/api/v1/consumer-groups/${group}/queues/int-seek.src/seek`, { toEnd: true, reason: 'skip' }))
        .status,
    ).toBe(200);
    const res = await cycle({
      query_id: queryId,
      partition_id: partitionId,
      consumer_group: group,
      state_ops: [{ type: 'upsert', key: 'n', value: 2 }],
      ack: ackOf(popped.body.messages[1]),
    });
    expect(res.body.success).toBe(false);
    expect(await stateRows(queryId)).toEqual([{ partition_id: partitionId, key: 'n', value: 1 }]);
  });

  it('a deleted source queue: its cycles fail Message not found; the state rows stay', async () => {
    const { queryId, popped, partitionId } = await setUp('int-deleted', 1);
    await cycle({ query_id: queryId, partition_id: partitionId, state_ops: [{ type: 'upsert', key: 'n', value: 1 }] });
    expect((await app.api.del('/api/v1/resources/queues/int-deleted.src')).status).toBe(200);
    const res = await cycle({
      query_id: queryId,
      partition_id: partitionId,
      consumer_group: 'streams.int-deleted',
      ack: ackOf(popped.body.messages[0]),
    });
    expect(res.body).toMatchObject({ success: false, error: 'Message not found', queueName: null });
    expect(await stateRows(queryId)).toHaveLength(1);
  });

  it('sink pushes wake a pop parked on the sink queue', async () => {
    const queryId = (await register('int-wake')).body.query_id;
    const parked = popQueue(app.api, 'int-wake.sink', { wait: true, timeout: 30_000 });
    await sleep(300);
    await cycle({
      query_id: queryId,
      partition_id: await partitionOf('int-wake.src'),
      push_items: [{ queue: 'int-wake.sink', payload: 'woke' }],
    });
    const woke = await parked; // the test's own timeout is shorter than the pop's
    expect(woke.body.messages.map((m: any) => m.data)).toEqual(['woke']);
  }, 15_000);

  it('state_ops over the limit are a 400 naming the field', async () => {
    const queryId = (await register('int-limit')).body.query_id;
    const res = await cycle({
      query_id: queryId,
      partition_id: '01a2291d-98d7-78cc-b1bd-7f3819ba7702',
      state_ops: Array.from({ length: 10_001 }, (_, i) => ({ type: 'delete', key: `k${i}` })),
    });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatch(/^state_ops: /);
  });
});

describe('message ids', () => {
  const sortedBySdk = (messages: any[]) =>
    [...messages].sort(
      (a, b) => Date.parse(a.createdAt) - Date.parse(b.createdAt) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0),
    );

  it('increase with the offset: 200 messages pushed in one call keep the pop order when sorted by createdAt, then id', async () => {
    const items = Array.from({ length: 200 }, (_, i) => ({ queue: 'ids.one-call', partition: 'p', payload: { i } }));
    expect((await app.api.push(items)).status).toBe(201);
    const popped: PopReply = await popQueue(app.api, 'ids.one-call', { batch: 200 });
    expect(popped.body.messages).toHaveLength(200);
    expect(sortedBySdk(popped.body.messages).map((m) => m.data.i)).toEqual(
      popped.body.messages.map((m: any) => m.data.i),
    );
  });

  it('increase across calls, transactions and cycle pushes to one partition', async () => {
    await app.api.push(Array.from({ length: 50 }, (_, i) => ({ queue: 'ids.mixed', partition: 'p', payload: { i } })));
    await app.api.post('/api/v1/transaction', {
      operations: [
        {
          type: 'push',
          items: Array.from({ length: 50 }, (_, i) => ({ queue: 'ids.mixed', partition: 'p', payload: { i: 50 + i } })),
        },
      ],
    });
    const queryId = (await register('ids-cycle')).body.query_id;
    await cycle({
      query_id: queryId,
      partition_id: await partitionOf('ids-cycle.src'),
      push_items: Array.from({ length: 50 }, (_, i) => ({
        queue: 'ids.mixed',
        partition: 'p',
        payload: { i: 100 + i },
      })),
    });
    await Promise.all(
      Array.from({ length: 10 }, (_, k) => app.api.push([{ queue: 'ids.mixed', partition: 'p', payload: { k } }])),
    );
    const rows = await app.db.query<{ id: string }>(
      `select m.id from queen.messages m join queen.partitions p on p.id = m.partition_id join queen.queues q on q.id = p.queue_id
       where q.name = 'ids.mixed' order by m."offset"`,
    );
    expect(rows).toHaveLength(160);
    const ids = rows.map((r) => r.id);
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(160);
    for (const id of ids) expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });
});

describe('message id counter', () => {
  it('carries a counter overflow into the millisecond, and counts on from an id ahead of the clock', async () => {
    const [{ id }] = await app.db.query<{ id: string }>(
      `select queen.uuidv7_next(queen.uuidv7_number('0190a0b0-c0d0-7fff-bfff-ffff12345678'), 1)::text as id`,
    );
    expect(id.slice(0, 23)).toBe('0190a0b0-c0d1-7000-8000');
    // the partition's newest id is an hour ahead (another clock, or this one stepped back): later ids still sort after it
    await app.api.push([{ queue: 'ids.ahead', partition: 'p', payload: 0 }]);
    const ahead = `${(Date.now() + 3_600_000)
      .toString(16)
      .padStart(12, '0')
      .replace(/^(.{8})(.{4})$/, '$1-$2')}-7abc-8def-0123456789ab`;
    await app.db.query(
      `update queen.messages m set id = $1 from queen.partitions p join queen.queues q on q.id = p.queue_id
                        where m.partition_id = p.id and q.name = 'ids.ahead'`,
      [ahead],
    );
    const pushed = await app.api.push(
      Array.from({ length: 3 }, (_, i) => ({ queue: 'ids.ahead', partition: 'p', payload: i + 1 })),
    );
    const ids = pushed.body.map((r: any) => r.message_id);
    expect([ahead, ...ids]).toEqual([ahead, ...ids].sort());
    expect(ids[0].slice(0, 18)).toBe(ahead.slice(0, 18)); // same millisecond, counter + 1
  });
});

describe('the operator reset and the metrics', () => {
  it('drops every state row of the query, needs a reason, and is audited', async () => {
    const queryId = (await register('ops-reset')).body.query_id;
    for (const p of [await partitionOf('ops-reset.src', 'a'), await partitionOf('ops-reset.src', 'b')]) {
      await cycle({
        query_id: queryId,
        partition_id: p,
        state_ops: [
          { type: 'upsert', key: 'a', value: 1 },
          { type: 'upsert', key: 'b', value: 'xy' },
        ],
      });
    }
    expect((await app.api.post(`/api/v1/streams/queries/${queryId}/reset`, {})).status).toBe(400);
    expect(
      (await app.api.post('/api/v1/streams/queries/01a2291d-98d7-78cc-b1bd-7f3819ba7700/reset', { reason: 'r' }))
        .status,
    ).toBe(404);
    const res = await app.api.post(
      `/api/v1/streams/queries/${queryId}/reset`,
      { reason: 'windows corrupted' },
      { headers: { 'x-queen-actor': 'alice' } },
    );
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ reset: true, queryId, query: 'ops-reset', rowsDeleted: 4, shards: 2 });
    expect(await stateRows(queryId)).toEqual([]);
    const audit = await app.api.get('/api/v1/audit?action=streams.reset');
    expect(audit.body.entries[0]).toMatchObject({
      actor: 'alice',
      action: 'streams.reset',
      target: 'ops-reset',
      reason: 'windows corrupted',
      result: 'reset',
    });
    const page = await app.api.get('/api/dashboard/streams');
    const q = page.body.queries.find((x: any) => x.name === 'ops-reset');
    expect(q).toMatchObject({ stateKeys: 0, stateBytes: 0, cycles: 2 });
  });

  it('counts cycles committed and refused per query, state rows, and cycle latency', async () => {
    const queryId = (await register('ops-metrics')).body.query_id;
    const p = await partitionOf('ops-metrics.src');
    await cycle({
      query_id: queryId,
      partition_id: p,
      state_ops: [
        { type: 'upsert', key: 'a', value: 1 },
        { type: 'upsert', key: 'b', value: 2 },
      ],
    });
    await cycle({
      query_id: queryId,
      partition_id: p,
      ack: { transactionId: 'none', leaseId: '01a2291d-98d7-78cc-b1bd-7f3819ba7782' },
    });
    await sleep(200); // the refusal is counted after its rollback
    const families = parsePrometheus((await app.api.get('/metrics/prometheus')).text);
    expect(valueOf(families, 'queen_stream_cycles_total', { query: 'ops-metrics', outcome: 'committed' })).toBe(1);
    expect(valueOf(families, 'queen_stream_cycles_total', { query: 'ops-metrics', outcome: 'refused' })).toBe(1);
    expect(valueOf(families, 'queen_stream_state_rows', { query: 'ops-metrics' })).toBe(2);
    expect(valueOf(families, 'queen_stream_cycle_duration_seconds_count', { outcome: 'committed' })).toBeGreaterThan(0);
    expect(valueOf(families, 'queen_stream_cycle_duration_seconds_count', { outcome: 'refused' })).toBeGreaterThan(0);
  });
});
