// The randomized model checker of issue 17 (tests/support/model-run.ts), a short seeded run:
// producers with retried transaction ids, consumers in several groups that ack, fail, let leases
// expire and die mid-batch, groups joining late, operator seeks, deletes and pauses, the lifecycle
// job every second; then a drain, and every invariant of model-check.ts. Issue 30: autoAck
// consumers long-polling with short timeouts while pushes meet their deadlines, payloads carrying
// numbers JavaScript cannot hold, a second app instance on the same database for part of the
// actors, and the figures of /resources/* and /metrics/prometheus against a recount. Longer runs
// and other seeds: `npm run test:model -- --seed N --seconds S`.
import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from './support/app';
import { client } from './support/http';
import { JOB_SECONDS, runModel } from './support/model-run';
import { startServer, type TestServer } from './support/server';

const SEED = Number(process.env.MODEL_SEED ?? 1701);
const SECONDS = Number(process.env.MODEL_SECONDS ?? 15);

describe('model checker', () => {
  let app: TestApp;
  let second: TestServer;
  beforeAll(async () => {
    const env = { RETENTION_INTERVAL_MS: String(JOB_SECONDS * 1000), LOG_LEVEL: 'warn' };
    app = await startApp(env);
    second = await startServer(app.db.url, env);
  });
  afterAll(async () => {
    await second?.stop();
    await app?.stop();
  });

  it(
    `seed ${SEED}, ${SECONDS} s: every retained message reaches every group, in order, under one lease, counted`,
    async () => {
      const result = await runModel(app, {
        seed: SEED,
        seconds: SECONDS,
        log: (l) => console.log(l),
        second: client(second.url),
      });
      console.log(result.report);
      // every violation, for a look at the whole list (the report shows four of each kind)
      if (process.env.MODEL_REPORT) fs.writeFileSync(process.env.MODEL_REPORT, JSON.stringify(result, null, 1));
      expect(result.counts.deliveries).toBeGreaterThan(0);
      expect(result.violations.length, result.report).toBe(0);
    },
    (SECONDS + 120) * 1000,
  );
});
