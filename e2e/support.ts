import fs from 'node:fs';
import path from 'node:path';
import { test as base, type APIRequestContext, type Locator, type Page } from '@playwright/test';
import pg from 'pg';

/**
 * The app's port, and that of a second instance with auth on, signing with E2E_JWT_SECRET. scripts/test.mjs
 * picks free ones, or E2E_PORT and the next when E2E_PORT is set.
 */
export const PORT = Number(process.env.E2E_PORT);
export const AUTH_PORT = Number(process.env.E2E_AUTH_PORT ?? PORT + 1);
export const E2E_JWT_SECRET = 'e2e-secret-for-the-auth-instance-0123456789';

export { expect } from '@playwright/test';

/**
 * `page.goto` that returns once React has hydrated the app's page: a click on server-rendered HTML
 * before that does nothing. Pages of other origins (a test's attacker page) return at load.
 */
export const test = base.extend({
  page: async ({ page }, use) => {
    const goto = page.goto.bind(page);
    page.goto = async (url, options) => {
      const response = await goto(url, options);
      if (url.startsWith('/') || url.startsWith('http://127.0.0.1:'))
        await page.locator('html[data-hydrated]').waitFor({ state: 'attached' });
      return response;
    };
    await use(page);
  },
});

/** Screenshots land in test-results/screenshots; `npm run screenshots` writes the README's copies. */
const SHOT_DIR = process.env.SCREENSHOT_DIR ?? path.join('test-results', 'screenshots');

export async function screenshot(page: Page, name: string) {
  fs.mkdirSync(SHOT_DIR, { recursive: true });
  await page.screenshot({ path: path.join(SHOT_DIR, `${name}.png`), fullPage: true });
}

export async function push(request: APIRequestContext, queue: string, partition: string, count: number, start = 0) {
  const items = Array.from({ length: count }, (_, i) => ({
    queue,
    partition,
    payload: { seq: start + i },
    transactionId: `${partition}-${start + i}`,
  }));
  const res = await request.post('/api/v1/push', { data: { items } });
  if (res.status() !== 201) throw new Error(`push: ${res.status()}`);
}

export async function pop(
  request: APIRequestContext,
  path: string,
  params: Record<string, string | number | boolean> = {},
) {
  const qs = new URLSearchParams(Object.entries(params).map(([k, v]) => [k, String(v)]));
  const res = await request.get(`/api/v1/pop${path}?${qs}`);
  return { status: res.status(), headers: res.headers(), body: res.status() === 200 ? await res.json() : null };
}

export async function sql<R extends pg.QueryResultRow = any>(text: string, values: unknown[] = []): Promise<R[]> {
  const client = new pg.Client({ connectionString: process.env.E2E_DATABASE_URL });
  await client.connect();
  try {
    return (await client.query<R>(text, values)).rows;
  } finally {
    await client.end();
  }
}

/** Clicks an action that asks for a reason, gives one, and confirms. */
export async function confirmWithReason(
  page: Page,
  button: ReturnType<Page['getByRole']>,
  reason: string,
  confirm: string,
) {
  await button.click();
  const dialog = page.getByRole('dialog');
  await dialog.getByLabel(/Reason/).fill(reason);
  await dialog.getByRole('button', { name: confirm, exact: true }).click();
  await dialog.waitFor({ state: 'hidden' });
}

/** Clicks through `click`, counting them: a journey's cost is its number of clicks. */
export function clickCounter() {
  let n = 0;
  const click = async (target: Locator) => {
    n++;
    await target.click();
  };
  return { click, count: () => n };
}
