// The dashboard's controls: figures that link to what they count, dialogs, history, narrow screens, accessibility.
import type { Locator, Page } from '@playwright/test';
import { expect, pop, push, sql, test } from './support';

const unique = (name: string) => `e2e.ui.${name}.${Date.now().toString(36)}`;

const figure = async (page: Page, queue: string, testId: string) =>
  Number((await page.getByTestId(`queue-row-${queue}`).getByTestId(testId).textContent())!.replace(/\D/g, ''));

test('every overview count links to the page that lists those things, and a stuck lease is 2 clicks away', async ({
  page,
  request,
}) => {
  const queue = unique('links');
  for (const p of ['p-1', 'p-2', 'p-3', 'p-4']) await push(request, queue, p, 3);
  // two leases that expire unreclaimed, one live, and one redelivery on p-4
  await pop(request, `/queue/${queue}/partition/p-4`, { consumerGroup: 'billing', leaseSeconds: 1, batch: 1 });
  await pop(request, `/queue/${queue}/partition/p-1`, { consumerGroup: 'billing', leaseSeconds: 1, batch: 1 });
  await pop(request, `/queue/${queue}/partition/p-2`, { consumerGroup: 'billing', leaseSeconds: 1, batch: 1 });
  await pop(request, `/queue/${queue}/partition/p-3`, { consumerGroup: 'billing', leaseSeconds: 600, batch: 1 });
  await new Promise((r) => setTimeout(r, 1300));
  expect(
    (await pop(request, `/queue/${queue}/partition/p-4`, { consumerGroup: 'billing', leaseSeconds: 600, batch: 1 }))
      .status,
  ).toBe(200);

  const [db] = await sql(
    `select count(*) filter (where c.lease_id is not null and c.lease_expires_at <= now())::int as expired,
            count(*) filter (where c.lease_id is not null and c.lease_expires_at > now())::int as live,
            sum(c.redeliveries)::int as redeliveries, max(p.head_offset - c.committed_offset)::int as "maxLag",
            sum(p.head_offset - c.committed_offset)::int as pending, count(distinct p.id)::int as partitions
     from queen.cursors c join queen.partitions p on p.id = c.partition_id join queen.queues q on q.id = c.queue_id
     where q.name = $1 and c.consumer_group = 'billing'`,
    [queue],
  );
  expect(db).toMatchObject({ expired: 2, live: 2, partitions: 4 });
  expect(db.redeliveries).toBeGreaterThan(0);

  await page.goto('/');
  const row = page.getByTestId(`queue-row-${queue}`);
  expect(await figure(page, queue, 'expired-leases')).toBe(db.expired);
  expect(await figure(page, queue, 'live-leases')).toBe(db.live);
  expect(await figure(page, queue, 'redeliveries')).toBe(db.redeliveries);
  expect(await figure(page, queue, 'pending')).toBe(db.pending); // one group: its lag is the queue's pending
  expect(await figure(page, queue, 'partitions')).toBe(db.partitions);
  await expect(row.getByTestId('dead-letters').getByRole('link')).toHaveAttribute(
    'href',
    `/dead-letters?queue=${encodeURIComponent(queue)}`,
  );
  await expect(row.getByRole('link', { name: '2 leases expired, not yet reclaimed' })).toHaveAttribute(
    'href',
    `/leases?queue=${encodeURIComponent(queue)}&state=expired`,
  );

  // the stuck figure → `state=stuck`, whose count is the figure (past its current expiry, or redelivered: issue 20)
  const [{ stuck }] = await sql(
    `select count(*)::int as stuck from queen.cursors c join queen.queues q on q.id = c.queue_id
     left join queen.message_attempts a on a.partition_id = c.partition_id and a.consumer_group = c.consumer_group and a."offset" = c.committed_offset + 1
     where q.name = $1 and c.lease_id is not null
       and (c.lease_expires_at <= now() or coalesce(a.deliveries, 1) > 3)`,
    [queue],
  );
  expect(stuck).toBeGreaterThanOrEqual(db.expired);
  const stuckLink = row.getByRole('link', {
    name: `${stuck} stuck leases (past their expiry, or first message delivered over 3 times)`,
  });
  await expect(stuckLink).toHaveAttribute('href', `/leases?queue=${encodeURIComponent(queue)}&state=stuck`);
  await stuckLink.click();
  await expect(page.getByTestId('lease-count')).toHaveText(`${stuck} leases`);
  await page.goBack();

  // live leases → the live leases of this queue
  await row.getByTestId('live-leases').getByRole('link').click();
  await expect(page).toHaveURL(`/leases?queue=${encodeURIComponent(queue)}&state=live`);
  await expect(page.getByTestId('lease-count')).toHaveText(`${db.live} leases`);
  await expect(page.locator('tbody tr')).toHaveCount(db.live);

  // pending, partitions and redeliveries → the queue page, whose rows add up to the figure
  await page.goBack();
  await row.getByTestId('pending').getByRole('link').click();
  await expect(page).toHaveURL(`/queues/${encodeURIComponent(queue)}?sort=lag`);
  await expect(page.getByTestId('row-range')).toHaveText(`rows 1–${db.partitions} of ${db.partitions}`);
  const lags = (await page.getByTestId('lag').allTextContents()).map(Number);
  expect(lags.reduce((a, b) => a + b, 0)).toBe(db.pending);
  await page.goBack();
  await row.getByTestId('redeliveries').getByRole('link').click();
  await expect(page).toHaveURL(`/queues/${encodeURIComponent(queue)}`);
  const counters = await page.locator('tbody tr td:nth-child(6)').allTextContents(); // acked · redel. · fail · DLQ
  expect(counters.map((t) => Number(t.split('·')[1])).reduce((a, b) => a + b, 0)).toBe(db.redeliveries);

  // the stuck-lease journey: the expired count, then Force release on the lease
  await page.goto('/');
  await row.getByTestId('expired-leases').getByRole('link').click(); // click 1
  await expect(page).toHaveURL(`/leases?queue=${encodeURIComponent(queue)}&state=expired`);
  await expect(page.getByTestId('lease-count')).toHaveText(`${db.expired} leases`);
  await expect(page.locator('tbody tr')).toHaveCount(db.expired);
  const [lease] = await sql(
    `select c.lease_id as id from queen.cursors c join queen.partitions p on p.id = c.partition_id join queen.queues q on q.id = p.queue_id where q.name = $1 and p.name = 'p-1'`,
    [queue],
  );
  await page.getByRole('button', { name: `Force release lease ${lease.id} on p-1/billing` }).click(); // click 2
  await expect(page.getByRole('dialog').getByTestId('release-partition')).toHaveText(
    `${queue} / p-1, group billing: offsets 1–1 (1, 0 acked), expired`,
  );
});

test('a dialog opens centred, names what it acts on, confirms success, keeps the row in place and gives focus back', async ({
  page,
  request,
}) => {
  const queue = unique('dialog');
  const partitions = ['p-1', 'p-2', 'p-3', 'p-4', 'p-5', 'p-6', 'p-7', 'p-8'];
  for (const p of partitions) await push(request, queue, p, 1);
  await pop(request, `/queue/${queue}`, { consumerGroup: 'billing', subscriptionMode: 'new' }); // cursors, nothing pending
  await page.goto(`/queues/${encodeURIComponent(queue)}?group=billing`);
  const names = async () => (await page.locator('tbody tr td:first-child').allTextContents()).map((t) => t.trim());
  const before = await names();
  expect(before).toEqual(partitions);

  const pause = page.getByRole('button', { name: 'Pause p-7/billing' });
  const dialog = page.getByRole('dialog');
  // a click the page swallowed (seen once in CI, 1 run in 3, the page hydrated and unchanged) is
  // made again, as a user would; the dialog, once open, is not clicked through
  await expect(async () => {
    if (!(await dialog.isVisible())) await pause.click({ timeout: 2_000 });
    await expect(dialog.getByTestId('dialog-description')).toContainText(
      `Pause consumption of partition p-7 by group billing on queue ${queue}`,
      { timeout: 2_000 },
    );
  }).toPass({ timeout: 15_000 });
  const box = (await dialog.boundingBox())!;
  const view = page.viewportSize()!;
  expect(Math.abs(box.x + box.width / 2 - view.width / 2)).toBeLessThanOrEqual(10);
  expect(Math.abs(box.y + box.height / 2 - view.height / 2)).toBeLessThanOrEqual(10);
  await dialog.getByLabel(/Reason/).fill('downstream ledger is down');
  await dialog.getByRole('button', { name: 'Pause', exact: true }).click();
  await expect(dialog).toBeHidden();

  await expect(page.getByRole('status').filter({ hasText: `Paused p-7/billing on ${queue}` })).toBeVisible();
  const row = page.getByTestId('cursor-p-7-billing');
  await expect(row.getByTestId('paused')).toBeVisible();
  await expect(row.getByRole('button', { name: 'Resume p-7/billing' })).toBeFocused(); // Pause became Resume in the same cell
  await page.waitForTimeout(2500); // a refresh or two: the paused row sorts first on the server
  expect(await names()).toEqual(before);
  await page.reload();
  expect((await names())[0]).toBe('p-7'); // only a manual reload moves it

  // Cancel returns focus to the invoking button
  const resume = page.getByRole('button', { name: 'Resume p-7/billing' });
  await resume.click();
  await page.getByRole('dialog').getByRole('button', { name: 'Cancel' }).click();
  await expect(resume).toBeFocused();
});

test('a force release on the leases page is announced and its row stays, marked released', async ({
  page,
  request,
}) => {
  const queue = unique('release');
  for (const p of ['p-1', 'p-2', 'p-3']) await push(request, queue, p, 2);
  const leases = [];
  for (const p of ['p-1', 'p-2', 'p-3'])
    leases.push(
      (await pop(request, `/queue/${queue}/partition/${p}`, { consumerGroup: 'billing', leaseSeconds: 600, batch: 1 }))
        .body.leaseId,
    );
  await page.goto(`/leases?queue=${encodeURIComponent(queue)}`);
  const ids = () => page.locator('tbody tr').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-testid')));
  const before = await ids();
  const button = page.getByRole('button', { name: `Force release lease ${leases[1]} on p-2/billing` });
  await button.click();
  await expect(page.getByRole('dialog').getByTestId('release-partition')).toHaveText(
    `${queue} / p-2, group billing: offsets 1–1 (1, 0 acked)`,
  );
  await page
    .getByRole('dialog')
    .getByLabel(/Reason/)
    .fill('holder wedged');
  await page.getByRole('dialog').getByRole('button', { name: 'Release', exact: true }).click();
  await expect(
    page.getByRole('status').filter({ hasText: `Released lease ${leases[1]} on p-2/billing` }),
  ).toBeVisible();
  await expect(page.getByTestId('lease-count')).toHaveText('2 leases');
  await expect(page.getByTestId(`lease-${leases[1]}`).getByTestId('row-mark')).toHaveText('released');
  expect(await ids()).toEqual(before);
  await expect(page.getByTestId(`lease-${leases[1]}`).getByRole('link', { name: /^Audit of lease/ })).toBeFocused();
  const [{ n }] = await sql(`select count(*)::int as n from queen.cursors where lease_id = $1`, [leases[1]]);
  expect(n).toBe(0);
});

test('the refresh interval and pause survive a reload; Back undoes a filter; text filters match a literal substring in any case', async ({
  page,
  request,
}) => {
  await page.goto('/');
  await page.getByLabel('Refresh interval').selectOption('10000');
  await page.getByRole('button', { name: 'Pause', exact: true }).click();
  await page.reload();
  await page.locator('html[data-hydrated]').waitFor({ state: 'attached' });
  await expect(page.getByLabel('Refresh interval')).toHaveValue('10000');
  await expect(page.getByRole('button', { name: 'Resume', exact: true })).toHaveAttribute('aria-pressed', 'true');
  await expect(page.getByText('refresh paused')).toBeVisible();

  const queue = unique('filters');
  await push(request, queue, 'p-1', 1);
  await push(request, queue, 'p_2', 1);
  await request.get(`/api/v1/pop/queue/${queue}/partition/p-1?consumerGroup=g&leaseSeconds=600`, {
    headers: { 'X-Queen-Consumer': 'Worker-Seven' },
  });
  await request.get(`/api/v1/pop/queue/${queue}/partition/p_2?consumerGroup=g&leaseSeconds=600`, {
    headers: { 'X-Queen-Consumer': 'worker_eight' },
  });
  await page.goto(`/leases?queue=${encodeURIComponent(queue)}`);
  await expect(page.getByTestId('lease-count')).toHaveText('2 leases');
  const holder = page.getByLabel('Holder (contains, any case)');
  await holder.fill('WORKER-');
  await holder.press('Enter');
  await expect(page).toHaveURL(/holder=WORKER-/);
  await expect(page.getByTestId('lease-count')).toHaveText('1 leases');
  await page.goBack();
  await expect(page).not.toHaveURL(/holder=/);
  await expect(page.getByTestId('lease-count')).toHaveText('2 leases');
  await expect(page.getByLabel('Holder (contains, any case)')).toHaveValue('');

  // `_` is a character, not a wildcard, on every free-text filter; names match exactly
  const holders = async (q: string) =>
    (await (await request.get(`/api/v1/leases?queue=${encodeURIComponent(queue)}&holder=${q}`)).json()).total;
  expect(await holders('R_')).toBe(1);
  expect(await holders('r-s')).toBe(1);
  expect(
    (await (await request.get(`/api/dashboard/queues/${encodeURIComponent(queue)}?partition=P_`)).json()).total,
  ).toBe(1);
  expect(
    (await (await request.get(`/api/v1/leases?queue=${encodeURIComponent(queue.toUpperCase())}`)).json()).total,
  ).toBe(0);
});

test('at 390 px no page scrolls sideways, and lease actions stay in view', async ({ page, request }) => {
  const queue = unique('narrow');
  await push(request, queue, 'a-rather-long-partition-name-7', 2);
  await pop(request, `/queue/${queue}`, { consumerGroup: 'billing-reconciliation', leaseSeconds: 600, batch: 1 });
  const [m] = await sql(
    `select m.partition_id as "partitionId", m.transaction_id as "transactionId" from queen.messages m join queen.partitions p on p.id = m.partition_id join queen.queues q on q.id = p.queue_id where q.name = $1 limit 1`,
    [queue],
  );
  // a dead letter with a long error, on the Dead letters page and its Message page (failed attempts, requeue and discard)
  const deadQueue = unique('narrow-dead');
  await request.post('/api/v1/configure', { data: { queue: deadQueue, options: { retryLimit: 0 } } });
  await push(request, deadQueue, 'a-rather-long-partition-name-7', 1);
  const failed = await pop(request, `/queue/${deadQueue}`, { consumerGroup: 'reconciliation-dead-letters', batch: 1 });
  const [dead] = failed.body.messages;
  await request.post('/api/v1/ack', {
    data: {
      transactionId: dead.transactionId,
      partitionId: dead.partitionId,
      leaseId: dead.leaseId,
      consumerGroup: 'reconciliation-dead-letters',
      status: 'failed',
      error: `ValidationError: ${'field_that_is_rather_long.'.repeat(6)}`,
    },
  });
  expect(
    (await sql(`select count(*)::int as n from queen.dead_letters where partition_id = $1`, [dead.partitionId]))[0].n,
  ).toBe(1);
  await page.setViewportSize({ width: 390, height: 844 });
  const sideways = () =>
    page.evaluate(() => document.scrollingElement!.scrollWidth - document.scrollingElement!.clientWidth);
  for (const path of [
    '/',
    `/queues/${encodeURIComponent(queue)}`,
    `/queues/${encodeURIComponent(queue)}/partitions/a-rather-long-partition-name-7?group=billing-reconciliation`,
    `/leases?queue=${encodeURIComponent(queue)}`,
    '/consumers',
    '/live',
    '/console',
    '/console/push',
    '/audit',
    `/messages/${m.partitionId}/${encodeURIComponent(m.transactionId)}`,
    `/dead-letters?queue=${encodeURIComponent(deadQueue)}`,
    `/messages/${dead.partitionId}/${encodeURIComponent(dead.transactionId)}`,
  ]) {
    await page.goto(path);
    expect(await sideways(), path).toBeLessThanOrEqual(0);
  }
  // the search results, open, stay inside the page too
  await page
    .getByLabel('Find by lease id, message id, transaction id, holder, group, partition or queue name')
    .fill(`no-such-id-${queue}`);
  await page.keyboard.press('Enter');
  await expect(page.getByTestId('search-results')).toBeVisible();
  expect(await sideways(), 'search results').toBeLessThanOrEqual(0);
  // the key columns (state, holder, action) in full view, on the overview, the leases page and the queue page
  await page.goto('/');
  const status = page.getByTestId(`queue-row-${queue}`).getByTestId('status-ok');
  await status.scrollIntoViewIfNeeded();
  await expect(status).toBeInViewport({ ratio: 1 });
  await expect(page.getByTestId(`sparkline-${queue}`)).toBeHidden();
  await page.goto(`/leases?queue=${encodeURIComponent(queue)}`);
  // the filters fill the first screen: bring the table up (vertically only; the check is about width)
  await page.locator('tbody').evaluate((e) => window.scrollTo(0, e.getBoundingClientRect().top + window.scrollY - 8));
  for (const key of [
    page.getByTestId('lease-state'),
    page.locator('tbody td').filter({ hasText: 'Mozilla' }),
    page.getByRole('button', { name: /^Force release lease/ }),
  ]) {
    await expect(key).toBeInViewport({ ratio: 1 });
  }
  await page.goto(`/queues/${encodeURIComponent(queue)}`);
  // the rate chart sits above the table: bring the table up, as on the leases page
  await page.locator('tbody').evaluate((e) => window.scrollTo(0, e.getBoundingClientRect().top + window.scrollY - 8));
  for (const key of [
    page.getByTestId('lease-state'),
    page.getByRole('button', { name: /^Force release lease/ }),
    page.getByRole('button', { name: /^Pause / }),
  ]) {
    await expect(key).toBeInViewport({ ratio: 1 });
  }
});

test('each page has its own title, row actions have distinct names, and a skip link leads to the content', async ({
  page,
  request,
}) => {
  const queue = unique('a11y');
  for (const p of ['p-1', 'p-2', 'p-3']) await push(request, queue, p, 2);
  for (const p of ['p-1', 'p-2'])
    await pop(request, `/queue/${queue}/partition/${p}`, { consumerGroup: 'billing', leaseSeconds: 600 });
  const [m] = await sql(
    `select m.partition_id as "partitionId", m.transaction_id as "transactionId" from queen.messages m join queen.partitions p on p.id = m.partition_id join queen.queues q on q.id = p.queue_id where q.name = $1 limit 1`,
    [queue],
  );
  const titles = new Map<string, string>();
  for (const path of [
    '/',
    `/queues/${encodeURIComponent(queue)}`,
    `/queues/${encodeURIComponent(queue)}/partitions/p-1`,
    '/leases',
    '/consumers',
    '/live',
    '/console',
    '/console/push',
    '/audit',
    `/messages/${m.partitionId}/${encodeURIComponent(m.transactionId)}`,
    '/dead-letters',
  ]) {
    await page.goto(path);
    titles.set(path, await page.title());
  }
  expect(new Set(titles.values()).size).toBe(titles.size);
  expect(titles.get('/leases')).toBe('Leases · Queen');
  expect(titles.get('/dead-letters')).toBe('Dead letters · Queen');
  expect(titles.get('/consumers')).toBe('Consumers · Queen');
  expect(titles.get('/console/push')).toBe('Try push · Queen');
  expect(titles.get(`/queues/${encodeURIComponent(queue)}`)).toBe(`Queue ${queue} · Queen`);
  expect(titles.get(`/queues/${encodeURIComponent(queue)}/partitions/p-1`)).toBe(
    `Partition p-1 · Queue ${queue} · Queen`,
  );

  for (const path of [
    `/queues/${encodeURIComponent(queue)}?group=billing`,
    `/leases?queue=${encodeURIComponent(queue)}`,
  ]) {
    await page.goto(path);
    const controls = page.locator('tbody').getByRole('button').or(page.locator('tbody').getByRole('link'));
    const names: string[] = [];
    for (const c of await controls.all())
      names.push((await c.getAttribute('aria-label')) ?? (await c.textContent())!.trim());
    expect(names.length, path).toBeGreaterThan(3);
    const actions = names.filter((n) => /^(Force release|Pause|Resume|Audit)/.test(n));
    expect(new Set(actions).size, `${path}: ${actions.join(', ')}`).toBe(actions.length);
  }

  // the Consumers page: each holder's links say whose leases they open
  await page.goto('/consumers');
  const links = await page
    .locator('tbody')
    .getByRole('link')
    .evaluateAll((all) => all.map((l) => l.getAttribute('aria-label') ?? l.textContent));
  expect(links.length).toBeGreaterThan(0);
  expect(new Set(links).size, links.join(', ')).toBe(links.length);

  await page.goto('/leases');
  await page.keyboard.press('Tab');
  const skip = page.getByRole('link', { name: 'Skip to content' });
  await expect(skip).toBeFocused();
  await expect(skip).toBeVisible();
  await page.keyboard.press('Enter');
  await expect(page).toHaveURL(/#main$/);
  await expect(page.locator('main#main')).toBeFocused();
});

test('labels, table headers, muted text and the ok badge reach 4.5:1 in light and dark', async ({ page, request }) => {
  const queue = unique('contrast');
  await push(request, queue, 'p', 1);
  await pop(request, `/queue/${queue}`, { consumerGroup: 'g', autoAck: true });
  for (const scheme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme: scheme });
    const pages: [string, (page: Page) => Locator[]][] = [
      [
        '/',
        (p) => [
          p.locator('thead th'),
          p.getByTestId(`queue-row-${queue}`).getByText('ok', { exact: true }),
          p.getByText(/^Server time/),
        ],
      ],
      ['/leases', (p) => [p.locator('main label > span'), p.locator('thead th'), p.locator('main h1 + p')]],
      [
        `/queues/${encodeURIComponent(queue)}`,
        (p) => [
          p.locator('main label > span'),
          p.locator('thead th'),
          p.getByTestId('storage'),
          ...['Pushed', 'Delivered', 'Acked', 'Failed', 'Lag'].map((label) =>
            p.getByTestId('rate-legend').getByText(label, { exact: true }),
          ),
        ],
      ],
      ['/consumers', (p) => [p.locator('thead th'), p.locator('main h1 + p'), p.getByTestId('row-range')]],
    ];
    for (const [path, texts] of pages) {
      await page.goto(path);
      for (const text of texts(page)) {
        const ratio = await text.first().evaluate(contrastRatio);
        expect(ratio, `${scheme} ${path} ${text}`).toBeGreaterThanOrEqual(4.5);
      }
    }
  }
});

/** The WCAG contrast ratio of an element's text against the first opaque background behind it (runs in the page). */
function contrastRatio(el: Element): number {
  const ctx = document.createElement('canvas').getContext('2d', { willReadFrequently: true })!;
  const rgba = (color: string) => {
    ctx.clearRect(0, 0, 1, 1);
    ctx.fillStyle = color; // the browser converts oklch() and friends to sRGB
    ctx.fillRect(0, 0, 1, 1);
    return Array.from(ctx.getImageData(0, 0, 1, 1).data);
  };
  const luminance = ([r, g, b]: number[]) => {
    const lin = (c: number) => (c / 255 <= 0.04045 ? c / 255 / 12.92 : ((c / 255 + 0.055) / 1.055) ** 2.4);
    return 0.2126 * lin(r) + 0.7152 * lin(g) + 0.0722 * lin(b);
  };
  let back: number[] | null = null;
  for (let node: Element | null = el; node && !back; node = node.parentElement) {
    const c = rgba(getComputedStyle(node).backgroundColor);
    if (c[3] === 255) back = c;
  }
  const fore = luminance(rgba(getComputedStyle(el).color));
  const behind = luminance(back ?? [255, 255, 255, 255]);
  return (Math.max(fore, behind) + 0.05) / (Math.min(fore, behind) + 0.05);
}
