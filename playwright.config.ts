import { defineConfig, devices } from '@playwright/test';
import { AUTH_PORT, E2E_JWT_SECRET, PORT } from './e2e/support';

// Run through `npm test` / `npm run test:e2e`, which provide a fresh database and a Chromium.

const databaseUrl = process.env.E2E_DATABASE_URL;
const chromium = process.env.CHROMIUM_PATH;
if (!databaseUrl || !chromium || !process.env.E2E_PORT) {
  throw new Error(
    'Run the browser tests with `npm test` or `npm run test:e2e`: they provide E2E_DATABASE_URL, CHROMIUM_PATH and the ports (E2E_PORT, E2E_AUTH_PORT).',
  );
}

export default defineConfig({
  testDir: './e2e',
  workers: 1,
  reporter: [['list']],
  outputDir: 'test-results',
  use: {
    ...devices['Desktop Chrome'],
    baseURL: `http://127.0.0.1:${PORT}`,
    launchOptions: {
      executablePath: chromium,
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        '--no-first-run',
        '--disable-quic',
      ],
    },
  },
  // The app as most tests see it (auth off), and a second instance of it with auth on (e2e/auth.spec.ts).
  webServer: [
    {
      command: 'node scripts/serve.mjs',
      url: `http://127.0.0.1:${PORT}/health`,
      reuseExistingServer: false,
      timeout: 60_000,
      env: { DATABASE_URL: databaseUrl, HOST: '127.0.0.1', PORT: String(PORT), NEXT_TELEMETRY_DISABLED: '1' },
    },
    {
      command: 'node scripts/serve.mjs',
      url: `http://127.0.0.1:${AUTH_PORT}/health`,
      reuseExistingServer: false,
      timeout: 60_000,
      env: {
        DATABASE_URL: databaseUrl,
        HOST: '127.0.0.1',
        PORT: String(AUTH_PORT),
        NEXT_TELEMETRY_DISABLED: '1',
        JWT_ENABLED: 'true',
        JWT_SECRET: E2E_JWT_SECRET,
      },
    },
  ],
});
