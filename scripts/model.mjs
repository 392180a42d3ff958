// `npm run test:model -- --seed N --seconds S`: one run of the randomized model checker
// (tests/model.test.ts, tests/support/model-*.ts) with that seed, its actors running S seconds
// before the drain. The same PostgreSQL as `npm test` (DATABASE_URL, else an embedded one).
//   --seed N      the generator's seed (default: a fresh one, printed)
//   --seconds S   how long the actors run (default 60)
//   --runs K      K runs, seeds N, N+1, ... (default 1)
import { spawnSync } from 'node:child_process';
import path from 'node:path';

const args = process.argv.slice(2);
const flag = (name, fallback) => {
  const i = args.indexOf(`--${name}`);
  if (i < 0) return fallback;
  const v = Number(args[i + 1]);
  if (!Number.isInteger(v) || v < 0) {
    console.error(`--${name} needs a whole number`);
    process.exit(2);
  }
  return v;
};
const seed = flag('seed', Math.floor(Math.random() * 1e6));
const seconds = flag('seconds', 60);
const runs = flag('runs', 1);

let status = 0;
for (let k = 0; k < runs; k++) {
  console.log(`[model] seed ${seed + k}, ${seconds} s`);
  const res = spawnSync(
    process.execPath,
    [path.join(import.meta.dirname, 'test.mjs'), '--unit', 'tests/model.test.ts'],
    {
      stdio: 'inherit',
      env: { ...process.env, MODEL_SEED: String(seed + k), MODEL_SECONDS: String(seconds) },
    },
  );
  if (res.status !== 0) {
    console.log(
      `[model] seed ${seed + k}: FAILED (replay: npm run test:model -- --seed ${seed + k} --seconds ${seconds})`,
    );
    status = 1;
  }
}
process.exit(status);
