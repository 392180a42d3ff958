// The Streams page against the database: a query's queues, its group's lag, its state per
// partition, its last cycle, and the reset (confirmed with a reason, audited).
import { confirmWithReason, expect, pop, push, screenshot, sql, test } from './support';

const stamp = () => Date.now().toString(36);

test('shows each streaming query as the database has it, and resets its state with a reason', async ({
  page,
  request,
}) => {
  const name = `e2e-stream-${stamp()}`;
  const source = `${name}.src`;
  const reg = await request.post('/streams/v1/queries', {
    data: { name, source_queue: source, sink_queue: `${name}.sink`, config_hash: 'e'.repeat(64) },
  });
  expect(reg.status()).toBe(200);
  const queryId = (await reg.json()).query_id;
  await push(request, source, 'p', 5);
  const popped = await pop(request, `/queue/${source}`, { consumerGroup: `streams.${name}`, batch: 3 });
  expect(popped.status).toBe(200);
  const last = popped.body.messages[2];
  const committed = await request.post('/streams/v1/cycle', {
    data: {
      query_id: queryId,
      partition_id: popped.body.partitionId,
      consumer_group: `streams.${name}`,
      state_ops: [
        { type: 'upsert', key: 'a', value: { windowEnd: 1, n: 3 } },
        { type: 'upsert', key: 'b', value: 2 },
        { type: 'upsert', key: '__wm__', value: 1 },
      ],
      push_items: [{ queue: `${name}.sink`, payload: { n: 3 } }],
      ack: { transactionId: last.transactionId, leaseId: last.leaseId },
    },
  });
  expect((await committed.json()).success).toBe(true);
  // state whose source partition is gone (state outlives it; a cycle names only its source queue's
  // partitions): a shard without a partition name
  const other = '01a2291d-98d7-78cc-b1bd-7f3819ba7e2e';
  await sql(`insert into queen_streams.state (query_id, partition_id, key, value) values ($1, $2, 'x', '"y"')`, [
    queryId,
    other,
  ]);
  await sql(
    `insert into queen_streams.shards (query_id, partition_id, cycles, state_keys, state_bytes, last_cycle_at)
     values ($1, $2, 1, 1, 4, now())`,
    [queryId, other],
  );

  await page.goto('/streams');
  const card = page.getByTestId(`stream-${name}`);
  await expect(card.getByTestId('source')).toHaveText(source);
  await expect(card.getByTestId('sink')).toHaveText(`${name}.sink`);
  await expect(card.getByTestId('group')).toHaveText(`streams.${name}`);

  const [lag] = await sql<{ n: number }>(
    `select (select sum(messages) from queen.queue_stats s join queen.queues q on q.id = s.queue_id where q.name = $1)::int
            - (select sum(committed) from queen.group_stats s join queen.queues q on q.id = s.queue_id where q.name = $1 and s.consumer_group = $2)::int as n`,
    [source, `streams.${name}`],
  );
  expect(lag.n).toBe(2);
  await expect(card.getByTestId('lag')).toHaveText(String(lag.n));

  // the maintained figures equal what the state rows hold
  const shards = await sql<{ partition_id: string; keys: number; bytes: number }>(
    `select partition_id, count(*)::int as keys, sum(octet_length(key) + octet_length(value::text))::int as bytes
     from queen_streams.state where query_id = $1 group by partition_id`,
    [queryId],
  );
  expect(shards).toHaveLength(2);
  const keys = shards.reduce((n, s) => n + s.keys, 0);
  const bytes = shards.reduce((n, s) => n + s.bytes, 0);
  await expect(card.getByTestId('state')).toHaveText(`${keys} keys, ${bytes} B`);
  for (const s of shards) {
    const row = card.getByTestId(`shard-${s.partition_id}`);
    await expect(row.getByTestId('keys')).toHaveText(String(s.keys));
    await expect(row.getByTestId('bytes')).toHaveText(String(s.bytes));
  }
  await expect(card.getByTestId(`shard-${other}`)).toContainText('unknown partition');
  await expect(card.getByTestId('cycles')).toHaveText('2 committed, 0 refused');
  const [cycleAt] = await sql<{ at: string }>(
    `select to_char(max(last_cycle_at) at time zone 'UTC', 'YYYY-MM-DD HH24:MI:SS') || ' UTC' as at from queen_streams.shards where query_id = $1`,
    [queryId],
  );
  await expect(card.getByTestId('last-cycle')).toHaveText(cycleAt.at);
  await screenshot(page, 'streaming-queries');

  await confirmWithReason(
    page,
    card.getByRole('button', { name: `Reset state of ${name}` }),
    'windows double counted after a bad deploy',
    'Reset state',
  );
  await expect(card.getByTestId('state')).toHaveText('0 keys, 0 B');
  expect(await sql('select 1 from queen_streams.state where query_id = $1', [queryId])).toEqual([]);
  const audit = await sql<{ reason: string; target: string; rows: number }>(
    `select reason, target, (details->>'rowsDeleted')::int as rows from queen.audit_log where action = 'streams.reset' and details->>'queryId' = $1`,
    [queryId],
  );
  expect(audit).toEqual([{ reason: 'windows double counted after a bad deploy', target: name, rows: keys }]);
  // the cursor stays where the cycle left it
  await expect(card.getByTestId('lag')).toHaveText('2');
});
