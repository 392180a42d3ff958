// minPopWaitTime (pop-routes.md, Visibility delays): a non-empty but under-full batch may be held
// back so that one commit carries more messages, within the caller's timeout.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from './support/app';
import { pop, popQueue, pushMany, sleep } from './support/broker';

// The holds below are 20 s, longer than these tests may take: a pop that waited for one fails by
// its test's timeout; no test measures how fast an answer came.
const BEFORE_THE_HOLD = 15_000;

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
    expect(ms).toBeGreaterThanOrEqual(1400); // a lower bound: a timer never fires early
  });

  it(
    'ends as soon as the batch fills',
    async () => {
      await queue('mpw.fill', 20000);
      const parked = popQueue(app.api, 'mpw.fill', { wait: true, batch: 10, timeout: 30000 });
      await sleep(300);
      await pushMany(app.api, 'mpw.fill', 'p', 7, 'p', 3);
      const result = await parked;
      expect(result.body.messages.map((m: any) => m.data.seq)).toEqual([...Array(10).keys()]);
    },
    BEFORE_THE_HOLD,
  );

  it(
    "never outlives the caller's timeout",
    async () => {
      await queue('mpw.timeout', 20000);
      const result = await popQueue(app.api, 'mpw.timeout', { wait: true, batch: 10, timeout: 600 });
      expect(result.body.messages).toHaveLength(3);
    },
    BEFORE_THE_HOLD,
  );

  it(
    'never applies when wait=false, when batch is 1, or on the single-partition route',
    async () => {
      await queue('mpw.never', 20000);
      expect((await popQueue(app.api, 'mpw.never', { batch: 10 })).body.messages).toHaveLength(3);
      await queue('mpw.never1', 20000);
      expect(
        (await popQueue(app.api, 'mpw.never1', { wait: true, batch: 1, timeout: 30000 })).body.messages,
      ).toHaveLength(1);
      await queue('mpw.single', 20000);
      expect(
        (await pop(app.api, '/queue/mpw.single/partition/p', { wait: true, batch: 10, timeout: 30000 })).body.messages,
      ).toHaveLength(3);
    },
    BEFORE_THE_HOLD,
  );

  it(
    "never delays an empty queue: that is the long poll's case, which a filling push answers at once",
    async () => {
      await app.api.post('/api/v1/configure', { queue: 'mpw.empty', options: { minPopWaitTime: 20000 } });
      expect((await popQueue(app.api, 'mpw.empty', { wait: true, batch: 10, timeout: 700 })).status).toBe(204);
      const parked = popQueue(app.api, 'mpw.empty', { wait: true, batch: 10, timeout: 30000 });
      await sleep(300);
      await pushMany(app.api, 'mpw.empty', 'p', 10);
      expect((await parked).body.messages).toHaveLength(10);
    },
    BEFORE_THE_HOLD,
  );

  it('is off (0) by default', async () => {
    await pushMany(app.api, 'mpw.default', 'p', 3);
    await app.api.post('/api/v1/configure', { queue: 'mpw.default.held', options: { minPopWaitTime: 10000 } });
    await pushMany(app.api, 'mpw.default.held', 'p', 3);
    // One pop held back 10 s and one not: the default one must answer first, whatever the machine's load.
    const order: string[] = [];
    const held = popQueue(app.api, 'mpw.default.held', { wait: true, batch: 10, timeout: 30000 }).then(
      (r) => (order.push('held'), r),
    );
    const plain = popQueue(app.api, 'mpw.default', { wait: true, batch: 10, timeout: 30000 }).then(
      (r) => (order.push('default'), r),
    );
    expect((await plain).body.messages).toHaveLength(3);
    expect(order).toEqual(['default']);
    expect((await held).body.messages).toHaveLength(3);
  }, 40_000);
});
