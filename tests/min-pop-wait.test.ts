// minPopWaitTime (pop-routes.md, Visibility delays): a non-empty but under-full batch may be held
// back so that one commit carries more messages, within the caller's timeout.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from './support/app';
import { pop, popQueue, pushMany, sleep } from './support/broker';

describe('minPopWaitTime', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startApp();
  });
  afterAll(() => app.stop());

  const queue = async (name: string, minPopWaitTime = 1500) => {
    await app.api.post('/api/v1/configure', { queue: name, options: { minPopWaitTime } });
    await pushMany(app.api, name, 'p', 3);
  };
  const timed = async <T>(f: () => Promise<T>) => {
    const started = Date.now();
    const result = await f();
    return { result, ms: Date.now() - started };
  };

  it('holds an under-full batch back until minPopWaitTime has passed, then delivers it', async () => {
    await queue('mpw.hold');
    const { result, ms } = await timed(() => popQueue(app.api, 'mpw.hold', { wait: true, batch: 10, timeout: 10000 }));
    expect(result.body.messages).toHaveLength(3);
    expect(ms).toBeGreaterThanOrEqual(1400);
    expect(ms).toBeLessThan(6000);
  });

  it('ends as soon as the batch fills', async () => {
    await queue('mpw.fill', 20000);
    const parked = timed(() => popQueue(app.api, 'mpw.fill', { wait: true, batch: 10, timeout: 30000 }));
    await sleep(300);
    await pushMany(app.api, 'mpw.fill', 'p', 7, 'p', 3);
    const { result, ms } = await parked;
    expect(result.body.messages.map((m: any) => m.data.seq)).toEqual([...Array(10).keys()]);
    expect(ms).toBeLessThan(10000);
  });

  it('never outlives the caller\'s timeout', async () => {
    await queue('mpw.timeout', 20000);
    const { result, ms } = await timed(() => popQueue(app.api, 'mpw.timeout', { wait: true, batch: 10, timeout: 600 }));
    expect(result.body.messages).toHaveLength(3);
    expect(ms).toBeLessThan(5000);
  });

  it('never applies when wait=false, when batch is 1, or on the single-partition route', async () => {
    await queue('mpw.never', 20000);
    expect((await timed(() => popQueue(app.api, 'mpw.never', { batch: 10 }))).result.body.messages).toHaveLength(3);
    await queue('mpw.never1', 20000);
    const one = await timed(() => popQueue(app.api, 'mpw.never1', { wait: true, batch: 1, timeout: 30000 }));
    expect(one.result.body.messages).toHaveLength(1);
    expect(one.ms).toBeLessThan(5000);
    await queue('mpw.single', 20000);
    const single = await timed(() => pop(app.api, '/queue/mpw.single/partition/p', { wait: true, batch: 10, timeout: 30000 }));
    expect(single.result.body.messages).toHaveLength(3);
    expect(single.ms).toBeLessThan(5000);
  });

  it('never delays an empty queue: that is the long poll\'s case, which a filling push answers at once', async () => {
    await app.api.post('/api/v1/configure', { queue: 'mpw.empty', options: { minPopWaitTime: 20000 } });
    const empty = await timed(() => popQueue(app.api, 'mpw.empty', { wait: true, batch: 10, timeout: 700 }));
    expect(empty.result.status).toBe(204);
    expect(empty.ms).toBeLessThan(5000);
    const parked = timed(() => popQueue(app.api, 'mpw.empty', { wait: true, batch: 10, timeout: 30000 }));
    await sleep(300);
    await pushMany(app.api, 'mpw.empty', 'p', 10);
    const { result, ms } = await parked;
    expect(result.body.messages).toHaveLength(10);
    expect(ms).toBeLessThan(5000);
  });

  it('is off (0) by default', async () => {
    await pushMany(app.api, 'mpw.default', 'p', 3);
    const { result, ms } = await timed(() => popQueue(app.api, 'mpw.default', { wait: true, batch: 10, timeout: 30000 }));
    expect(result.body.messages).toHaveLength(3);
    expect(ms).toBeLessThan(1400);
  });
});
