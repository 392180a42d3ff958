// One vocabulary for why a pop found nothing (lib/broker/empty-reasons.ts, issue 31): the pop's
// answer (X-Queen-Empty), a parked pop's answer at its deadline and the console's dry run (`empty`,
// and `why.reason` for what an idle answer hides) say the same word in the same situation.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EMPTY_REASONS, IDLE_BECAUSE } from '@/lib/broker/empty-reasons';
import { startApp, type TestApp } from './support/app';
import { ackAll, partitionIdsOf, pop, pushMany } from './support/broker';

let app: TestApp;
beforeAll(async () => {
  app = await startApp();
});
afterAll(() => app?.stop());

/** What each path answers for the same pop: [the pop, the parked pop, the dry run]. */
async function threeWays(queue: string, partition: string | undefined, group: string) {
  const route = `/queue/${queue}${partition ? `/partition/${partition}` : ''}`;
  const now = await pop(app.api, route, { consumerGroup: group });
  const parked = await pop(app.api, route, { consumerGroup: group, wait: true, timeout: 300 });
  const qs = new URLSearchParams({ queue, consumerGroup: group, ...(partition ? { partition } : {}) });
  const dry = await app.api.get(`/api/dashboard/pop-preview?${qs}`);
  expect([now.status, parked.status, dry.body.status]).toEqual([204, 204, 204]);
  return { reasons: [now.empty, parked.empty, dry.body.empty], why: dry.body.why?.reason ?? null };
}

describe('why a pop is empty, said the same way by every path', () => {
  it('idle: nothing pushed', async () => {
    await pushMany(app.api, 'er.idle', 'p', 1);
    expect((await pop(app.api, '/queue/er.idle', { consumerGroup: 'g', autoAck: true })).status).toBe(200);
    expect(await threeWays('er.idle', undefined, 'g')).toEqual({ reasons: ['idle', 'idle', 'idle'], why: null });
  });

  it('leased: held by a lease of another holder (the dry run names it)', async () => {
    await pushMany(app.api, 'er.leased', 'p', 1);
    expect((await pop(app.api, '/queue/er.leased', { consumerGroup: 'g', leaseSeconds: 120 })).status).toBe(200);
    expect(await threeWays('er.leased', undefined, 'g')).toEqual({
      reasons: ['leased', 'leased', 'leased'],
      why: 'leased',
    });
    expect((await threeWays('er.leased', 'p', 'g')).reasons).toEqual(['leased', 'leased', 'leased']);
  });

  it('retry-delay: a failed batch waits out retryDelay', async () => {
    await app.api.post('/api/v1/configure', { queue: 'er.retry', options: { retryDelay: 120_000, retryLimit: 5 } });
    await pushMany(app.api, 'er.retry', 'p', 1);
    const popped = await pop(app.api, '/queue/er.retry', { consumerGroup: 'g' });
    await ackAll(app.api, popped, 'failed', 'try later');
    expect(await threeWays('er.retry', undefined, 'g')).toEqual({
      reasons: ['retry-delay', 'retry-delay', 'retry-delay'],
      why: null,
    });
  });

  it('window-buffer and delayed: the queue options that hold fresh messages back', async () => {
    await app.api.post('/api/v1/configure', { queue: 'er.window', options: { windowBuffer: 120 } });
    await pushMany(app.api, 'er.window', 'p', 1);
    expect((await threeWays('er.window', undefined, 'g')).reasons).toEqual([
      'window-buffer',
      'window-buffer',
      'window-buffer',
    ]);
    await app.api.post('/api/v1/configure', { queue: 'er.delayed', options: { delayedProcessing: 120 } });
    await pushMany(app.api, 'er.delayed', 'p', 1);
    expect((await threeWays('er.delayed', 'p', 'g')).reasons).toEqual(['delayed', 'delayed', 'delayed']);
  });

  it('the block that ends first names the answer: a lease ending before a retry delay says leased', async () => {
    await app.api.post('/api/v1/configure', { queue: 'er.first', options: { retryDelay: 600_000, retryLimit: 5 } });
    for (const p of ['a', 'b']) await pushMany(app.api, 'er.first', p, 1);
    await ackAll(app.api, await pop(app.api, '/queue/er.first/partition/a', { consumerGroup: 'g' }), 'failed', 'x');
    expect((await pop(app.api, '/queue/er.first', { consumerGroup: 'g', leaseSeconds: 60 })).status).toBe(200);
    expect((await threeWays('er.first', undefined, 'g')).reasons).toEqual(['leased', 'leased', 'leased']);
  });

  it('paused: the partition asked for is paused', async () => {
    await pushMany(app.api, 'er.paused', 'x', 1);
    const ids = await partitionIdsOf(app.api, 'er.paused');
    expect((await app.api.post(`/api/v1/cursors/${ids.x}/g/pause`, { paused: true, reason: 'test' })).status).toBe(200);
    expect(await threeWays('er.paused', 'x', 'g')).toEqual({ reasons: ['paused', 'paused', 'paused'], why: null });
    expect(await threeWays('er.paused', undefined, 'g')).toEqual({
      reasons: ['paused', 'paused', 'paused'],
      why: null,
    });
  });

  it('maintenance: pop maintenance is on', async () => {
    await pushMany(app.api, 'er.maint', 'p', 1);
    expect((await app.api.post('/api/v1/system/maintenance/pop', { enabled: true, reason: 'test' })).status).toBe(200);
    try {
      expect(await threeWays('er.maint', undefined, 'g')).toEqual({
        reasons: ['maintenance', 'maintenance', 'maintenance'],
        why: null,
      });
    } finally {
      await app.api.post('/api/v1/system/maintenance/pop', { enabled: false, reason: 'done' });
    }
  });

  it("a queue or partition that does not exist: idle, and the dry run's reason says which", async () => {
    const dry = await app.api.get('/api/dashboard/pop-preview?queue=er.nowhere&consumerGroup=g');
    expect([dry.body.empty, dry.body.why.reason]).toEqual(['idle', 'no-queue']);
    await pushMany(app.api, 'er.parts', 'p', 1);
    const part = await app.api.get('/api/dashboard/pop-preview?queue=er.parts&partition=nope&consumerGroup=g');
    expect([part.body.empty, part.body.why.reason]).toEqual(['idle', 'no-partition']);
    expect(Object.keys(IDLE_BECAUSE).sort()).toEqual(['no-partition', 'no-queue']);
    expect(Object.keys(EMPTY_REASONS).sort()).toEqual([
      'delayed',
      'error',
      'idle',
      'leased',
      'maintenance',
      'paused',
      'retry-delay',
      'shutdown',
      'window-buffer',
    ]);
  });
});
