// Issue 30, item 5: a stream cycle's ack passes offsets whose message is gone (deleted, removed by
// retention) as every ack does (queen.passed): with release_lease:false and the tail of the span
// gone, acking the last stored message ends the lease as a full ack would, and the next claim
// counts no lease expiry and redelivers nothing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from './support/app';
import { expireLease, popQueue, pushMany } from './support/broker';

let app: TestApp;
beforeAll(async () => {
  app = await startApp();
});
afterAll(() => app.stop());

const register = async (name: string) => {
  const res = await app.api.post('/streams/v1/queries', {
    name,
    source_queue: `${name}.src`,
    sink_queue: `${name}.sink`,
    config_hash: 'e'.repeat(64),
  });
  expect(res.status).toBe(200);
  return res.body.query_id as string;
};

const cursorOf = async (partitionId: string, group: string) =>
  (
    await app.db.query<{
      committed: number;
      acked: number[];
      lease_id: string | null;
      lease_expiries: number;
      redeliveries: number;
    }>(
      `select c.committed_offset::int as committed, c.acked_offsets::int[] as acked, c.lease_id,
              c.lease_expiries::int,
              (select coalesce(sum(a.deliveries - 1), 0)::int from queen.message_attempts a
               where a.partition_id = c.partition_id and a.consumer_group = c.consumer_group) as redeliveries
       from queen.cursors c where c.partition_id = $1 and c.consumer_group = $2`,
      [partitionId, group],
    )
  )[0];

/** Deletes messages one by one, as the delete-message route does. */
const remove = async (partitionId: string, ...txids: string[]) => {
  for (const t of txids) await app.db.query(`select queen.delete_message($1, $2, 'test', 'test')`, [partitionId, t]);
};

describe('a cycle ack passes removed offsets', () => {
  it('release_lease:false, the tail of the span deleted: the ack of the last stored one ends the lease', async () => {
    const queryId = await register('passes-tail');
    const group = 'streams.passes-tail';
    await pushMany(app.api, 'passes-tail.src', 'p', 5, 't');
    const popped = await popQueue(app.api, 'passes-tail.src', { consumerGroup: group, batch: 5, leaseSeconds: 300 });
    expect(popped.status).toBe(200);
    expect(popped.body.messages).toHaveLength(5);
    const partitionId = popped.body.partitionId as string;
    await remove(partitionId, 't-3', 't-4');

    const res = await app.api.post('/streams/v1/cycle', {
      query_id: queryId,
      partition_id: partitionId,
      consumer_group: group,
      state_ops: [{ type: 'upsert', key: 'k', value: { n: 3 } }],
      ack: { transactionId: 't-2', leaseId: popped.body.leaseId, status: 'completed' },
      release_lease: false,
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ success: true, ack_result: { success: true, lease_released: true, dlq: false } });
    // as /api/v1/ack would leave it: every offset of the span done, no lease
    expect(await cursorOf(partitionId, group)).toMatchObject({ committed: 5, acked: [], lease_id: null });

    // the next claim takes what was pushed since, at once: no expiry waited out, nothing redelivered
    await pushMany(app.api, 'passes-tail.src', 'p', 1, 't', 5);
    const next = await popQueue(app.api, 'passes-tail.src', { consumerGroup: group, batch: 5, leaseSeconds: 300 });
    expect(next.status).toBe(200);
    expect(next.body.messages.map((m: any) => m.transactionId)).toEqual(['t-5']);
    expect(await cursorOf(partitionId, group)).toMatchObject({ lease_expiries: 0, redeliveries: 0 });
  });

  it('release_lease:false, a stored message after the ack: the lease stays, then only that one redelivers', async () => {
    const queryId = await register('passes-mid');
    const group = 'streams.passes-mid';
    await pushMany(app.api, 'passes-mid.src', 'p', 5, 'm');
    const popped = await popQueue(app.api, 'passes-mid.src', { consumerGroup: group, batch: 5, leaseSeconds: 300 });
    const partitionId = popped.body.partitionId as string;
    // m-2 and m-3 deleted, m-4 stored: the ack of m-1 passes m-2 and m-3 and stops before m-4
    await remove(partitionId, 'm-2', 'm-3');
    const res = await app.api.post('/streams/v1/cycle', {
      query_id: queryId,
      partition_id: partitionId,
      consumer_group: group,
      ack: { transactionId: 'm-1', leaseId: popped.body.leaseId },
      release_lease: false,
    });
    expect(res.body).toMatchObject({ success: true, ack_result: { lease_released: false } });
    expect(await cursorOf(partitionId, group)).toMatchObject({ committed: 4, lease_id: popped.body.leaseId });
    await expireLease(app.db, popped.body.leaseId);
    const again = await popQueue(app.api, 'passes-mid.src', { consumerGroup: group, batch: 5, leaseSeconds: 300 });
    expect(again.body.messages.map((m: any) => m.transactionId)).toEqual(['m-4']);
    expect(await cursorOf(partitionId, group)).toMatchObject({ lease_expiries: 1 });
  });

  it('a failed ack whose later offsets are gone passes them too', async () => {
    const queryId = await register('passes-failed');
    const group = 'streams.passes-failed';
    await pushMany(app.api, 'passes-failed.src', 'p', 4, 'f');
    const popped = await popQueue(app.api, 'passes-failed.src', { consumerGroup: group, batch: 4, leaseSeconds: 300 });
    const partitionId = popped.body.partitionId as string;
    await remove(partitionId, 'f-2', 'f-3');
    const res = await app.api.post('/streams/v1/cycle', {
      query_id: queryId,
      partition_id: partitionId,
      consumer_group: group,
      ack: { transactionId: 'f-1', leaseId: popped.body.leaseId, status: 'failed', error: 'bad' },
      release_lease: false,
    });
    expect(res.body).toMatchObject({ success: true, ack_result: { lease_released: true, dlq: true } });
    expect(await cursorOf(partitionId, group)).toMatchObject({ committed: 4, acked: [], lease_id: null });
  });
});
