// `npm run test:ha`: the production topologies (tests/ha/*.ha.ts), with real PgBouncer, HAProxy,
// etcd and Patroni (Debian packages; .ci/run installs them). Not part of `npm test`'s Vitest run:
// they need those packages and, for the failover, a few minutes of their own. One file at a time:
// they start clusters and load on this machine's cores.
import path from 'node:path';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  root: path.join(import.meta.dirname, '..', '..'),
  resolve: { tsconfigPaths: true },
  test: {
    environment: 'node',
    include: ['tests/ha/**/*.ha.ts'],
    pool: 'forks',
    fileParallelism: false,
    testTimeout: 240_000,
    hookTimeout: 240_000,
    globalSetup: ['tests/support/global-setup.ts'],
  },
});
