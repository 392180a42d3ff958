// The dashboard with auth on (the second web server of playwright.config.ts), and a cross-site
// attack on the one with auth off.
import http from 'node:http';
import { SignJWT } from 'jose';
import { AUTH_PORT, E2E_JWT_SECRET, confirmWithReason, expect, sql, test } from './support';

const AUTH = `http://127.0.0.1:${AUTH_PORT}`;
// unique per run: beforeAll runs again when a worker restarts after a failure
const QUEUE = `e2e.auth.${Date.now().toString(36)}`;

const mint = (role: string, sub: string) =>
  new SignJWT({ role })
    .setProtectedHeader({ alg: 'HS256' })
    .setSubject(sub)
    .setIssuedAt()
    .setExpirationTime('1h')
    .sign(new TextEncoder().encode(E2E_JWT_SECRET));

test.describe('auth on', () => {
  test.use({ baseURL: AUTH });

  test.beforeAll(async ({ playwright }) => {
    // a queue with one leased partition and one idle one, for group g
    const api = await playwright.request.newContext({
      baseURL: AUTH,
      extraHTTPHeaders: { authorization: `Bearer ${await mint('read-write', 'seeder')}` },
    });
    const items = ['a', 'b'].flatMap((p) =>
      [0, 1].map((i) => ({ queue: QUEUE, partition: p, payload: { i }, transactionId: `${p}${i}` })),
    );
    expect((await api.post('/api/v1/push', { data: { items } })).status()).toBe(201);
    expect(
      (
        await api.get(`/api/v1/pop/queue/${QUEUE}/partition/a?consumerGroup=g&batch=1&wait=false&leaseSeconds=600`, {
          headers: { 'x-queen-consumer': 'worker-a' },
        })
      ).status(),
    ).toBe(200);
    await api.dispose();
  });

  async function signIn(page: import('@playwright/test').Page, token: string, next = '/') {
    await page.goto(next);
    await expect(page).toHaveURL(/\/sign-in\?next=/);
    await page.getByLabel('Token').fill(token);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect(page.getByTestId('identity')).toBeVisible();
  }

  test('signed out, every page sends the browser to sign in', async ({ page }) => {
    await page.goto('/leases?state=live');
    await expect(page).toHaveURL(`${AUTH}/sign-in?next=%2Fleases%3Fstate%3Dlive`);
    await expect(page.getByRole('heading', { name: 'Sign in to Queen' })).toBeVisible();
    await page.getByLabel('Token').fill(await mint('superuser', 'nobody'));
    await page.getByRole('button', { name: 'Sign in' }).click();
    // Next's route announcer is an alert too
    await expect(page.getByRole('alert').filter({ hasText: /has no role/ })).toBeVisible();
  });

  test('read-only sees everything and every action is disabled with the reason', async ({ page }) => {
    await signIn(page, await mint('read-only', 'viewer'), `/queues/${QUEUE}`);
    await expect(page).toHaveURL(`${AUTH}/queues/${QUEUE}`);
    await expect(page.getByTestId('identity')).toContainText('viewer');
    await expect(page.getByTestId('identity')).toContainText('read-only');
    const why = 'needs the admin role; you are read-only';
    for (const name of [/^Force release lease /, /^Pause a\/g$/]) {
      const button = page.getByTestId('cursor-a-g').getByRole('button', { name });
      await expect(button).toBeDisabled();
      await expect(button).toHaveAttribute('title', why);
    }
    for (const name of [`Configure queue ${QUEUE}`, `Delete queue ${QUEUE}`]) {
      const button = page.getByRole('button', { name, exact: true });
      await expect(button).toBeDisabled();
      await expect(button).toHaveAttribute('title', why);
    }
    await page.goto('/');
    const maintenance = page.getByRole('button', { name: 'Turn pop maintenance on' });
    await expect(maintenance).toBeDisabled();
    await expect(maintenance).toHaveAttribute('title', why);
    await page.goto('/console');
    await expect(page.getByRole('button', { name: 'Pop (leases real messages)' })).toHaveAttribute(
      'title',
      'needs the read-write role; you are read-only',
    );
    await expect(page.getByRole('button', { name: 'Dry run' })).toBeEnabled();
    await page.goto('/console/push');
    await page.getByLabel('Queue', { exact: true }).fill(QUEUE);
    const pushButton = page.getByRole('button', { name: 'Push 1 message' });
    await expect(pushButton).toBeDisabled();
    await expect(pushButton).toHaveAttribute('title', 'needs the read-write role; you are read-only');
  });

  test('admin acts, and the audit log shows the token subject', async ({ page }) => {
    await signIn(page, await mint('admin', 'alice@ops'), `/queues/${QUEUE}`);
    await confirmWithReason(
      page,
      page.getByTestId('cursor-b-g').getByRole('button', { name: 'Pause b/g', exact: true }),
      'auth drill',
      'Pause',
    );
    await expect(page.getByTestId('cursor-b-g').getByTestId('paused')).toBeVisible();
    const rows = await sql(`select actor from queen.audit_log where action = 'cursor.pause' and reason = 'auth drill'`);
    expect(rows).toEqual([{ actor: 'alice@ops' }]);
    await page.goto('/audit');
    await expect(page.getByRole('row').filter({ hasText: 'auth drill' })).toContainText('alice@ops');
  });

  test('after sign-in, every form of next= lands on the app, never on another site', async ({ page }) => {
    const token = await mint('read-only', 'viewer');
    // the report's forms (a tab, a newline, a carriage return after the first slash), and friends
    for (const next of [
      '%2F%09%2Fevil.example%2Fphish',
      '%2F%0A%2Fevil.example%2Fphish',
      '%2F%0D%2Fevil.example%2Fphish',
      '%2F%2Fevil.example%2Fphish',
      '%2F%5Cevil.example',
      'https%3A%2F%2Fevil.example%2F',
      '%2F.%2F%2Fevil.example',
    ]) {
      await page.context().clearCookies();
      await page.goto(`/sign-in?next=${next}`);
      await page.getByLabel('Token').fill(token);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await expect(page.getByTestId('identity')).toBeVisible();
      expect(new URL(page.url()).origin, next).toBe(AUTH);
    }
    await page.context().clearCookies();
    await page.goto('/sign-in?next=%2Fleases%3Fstate%3Dlive');
    await page.getByLabel('Token').fill(token);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect(page).toHaveURL(`${AUTH}/leases?state=live`);
  });

  test('the Leases page shows the holder the consumer named and the subject of its token', async ({ page }) => {
    await signIn(page, await mint('read-only', 'viewer'), `/leases?queue=${QUEUE}`);
    const holder = page.getByTestId('lease-holder');
    await expect(holder).toHaveCount(1);
    await expect(holder).toContainText('worker-a');
    await expect(holder).toContainText('token: seeder');
  });

  test('sign out ends the session', async ({ page }) => {
    await signIn(page, await mint('admin', 'alice@ops'));
    await page.getByRole('button', { name: 'Sign out' }).click();
    await expect(page).toHaveURL(/\/sign-in/);
    await page.goto('/leases');
    await expect(page).toHaveURL(/\/sign-in\?next=%2Fleases/);
  });
});

test('a cross-site form post to an action is refused, even with auth off', async ({ page, baseURL }) => {
  const target = `${baseURL}/api/v1/system/maintenance/pop`;
  // the attacker's page, on another origin: a text/plain form needs no CORS preflight
  const evil = http.createServer((_, res) => {
    res
      .writeHead(200, { 'content-type': 'text/html' })
      .end(`<form id="f" method="POST" action="${target}" enctype="text/plain">
      <input name='{"enabled":true,"reason":"pwned","x":"' value='"}'></form><script>document.getElementById('f').submit()</script>`);
  });
  await new Promise<void>((r) => evil.listen(0, 'localhost', r));
  const before = await sql(
    `select (select count(*) from queen.audit_log)::int as audit, (select value from queen.system_state where key = 'pop_maintenance') as m`,
  );
  try {
    const answer = page.waitForResponse(target);
    await page.goto(`http://localhost:${(evil.address() as { port: number }).port}/`);
    expect((await answer).status()).toBe(403);
  } finally {
    evil.close();
  }
  expect(
    await sql(
      `select (select count(*) from queen.audit_log)::int as audit, (select value from queen.system_state where key = 'pop_maintenance') as m`,
    ),
  ).toEqual(before);
});
