// Issue 34, the low findings: the nav search finds holders, groups and partitions; a malformed
// filter shows its error and no list; a queue page renders its dialogs on demand; words break at
// word boundaries (overflow-wrap anywhere only on code-like, monospace text).
import { expect, pop, push, sql, test } from './support';

const unique = (name: string) => `e2e.low.${name}.${Date.now().toString(36)}`;

test('the nav search finds a lease holder, a consumer group and a partition by name', async ({ page, request }) => {
  const queue = unique('search');
  const partition = `part-${Date.now().toString(36)}`;
  const group = `grp-${Date.now().toString(36)}`;
  const holder = `holder-${Date.now().toString(36)}`;
  await push(request, queue, partition, 2);
  const leased = await request.get(`/api/v1/pop/queue/${queue}?consumerGroup=${group}&batch=1`, {
    headers: { 'x-queen-consumer': holder },
  });
  expect(leased.status()).toBe(200);
  await page.goto('/');
  const box = page.getByLabel('Find by lease id, message id, transaction id, holder, group, partition or queue name');

  await box.fill(holder);
  await box.press('Enter');
  await expect(page).toHaveURL(new RegExp(`/leases\\?holderIs=${holder}$`));
  const [{ n }] = await sql<{ n: number }>(
    'select count(*)::int as n from queen.cursors where lease_holder = $1 and lease_id is not null',
    [holder],
  );
  await expect(page.getByTestId('lease-count')).toHaveText(`${n} leases`);

  await box.fill(group);
  await box.press('Enter');
  await expect(page).toHaveURL(new RegExp(`/groups\\?group=${group}$`));

  await box.fill(partition);
  await box.press('Enter');
  await expect(page).toHaveURL(new RegExp(`/queues/${queue.replace(/\./g, '\\.')}\\?partitionIs=${partition}$`));
  await expect(page.getByTestId(`cursor-${partition}-${group}`)).toBeVisible();
});

test('a malformed filter shows its error and no list, on Dead letters, Leases and Audit', async ({ page, request }) => {
  const queue = unique('filter');
  await push(request, queue, 'p', 1);
  await pop(request, `/queue/${queue}`, { consumerGroup: 'g' }); // a lease and a row the unfiltered list would show
  for (const [path, count] of [
    ['/dead-letters?since=yesterday', 'dead-letter-count'],
    ['/leases?minDeliveries=lots&state=redelivered', 'lease-count'],
  ] as const) {
    await page.goto(path);
    await expect(page.getByTestId('filter-error')).toBeVisible();
    await expect(page.getByRole('table')).toBeHidden();
    await expect(page.getByTestId(count)).toBeHidden();
  }
  await page.goto('/audit?before=not-a-number');
  await expect(page.getByTestId('filter-error')).toBeVisible();
  await expect(page.getByRole('table')).toBeHidden();
});

test('a queue page of 50 rows carries no dialog until one is asked for, then exactly that one', async ({
  page,
  request,
}) => {
  const queue = unique('dialogs');
  for (let i = 0; i < 50; i++) await push(request, queue, `p-${String(i).padStart(2, '0')}`, 1);
  await pop(request, `/queue/${queue}`, { consumerGroup: 'g', batch: 1 });
  const html = await (await request.get(`/queues/${queue}`)).text();
  expect(html.match(/data-testid="cursor-/g)?.length).toBe(50);
  expect(html.match(/<dialog/g) ?? []).toHaveLength(0);
  await page.goto(`/queues/${queue}`);
  await page.getByRole('button', { name: 'Pause p-07/g' }).click();
  await expect(page.getByRole('dialog')).toContainText('Pause consumption of partition p-07 by group g');
  expect(await page.locator('dialog').count()).toBe(1);
  await page.getByRole('dialog').getByRole('button', { name: 'Cancel' }).click();
  await expect(page.getByRole('dialog')).toBeHidden();
});

test('words break at word boundaries: no break-all, and overflow-wrap anywhere only on monospace text', async ({
  page,
  request,
}) => {
  const queue = unique('words');
  await request.post('/api/v1/configure', { data: { queue, options: { retryLimit: 0, retryDelay: 0 } } });
  await push(request, queue, 'p', 1);
  const r = await pop(request, `/queue/${queue}`, { consumerGroup: 'g' });
  const m = r.body.messages[0];
  await request.post('/api/v1/ack/batch', {
    data: {
      consumerGroup: 'g',
      acknowledgments: [
        {
          transactionId: m.transactionId,
          partitionId: m.partitionId,
          leaseId: m.leaseId,
          status: 'failed',
          error: 'The billing service answered with an unexpected status',
        },
      ],
    },
  });
  await page.setViewportSize({ width: 390, height: 800 });
  for (const path of [
    `/queues/${queue}`,
    `/dead-letters?queue=${queue}`,
    '/audit',
    `/messages/${m.partitionId}/p-0`,
    `/messages?queue=${queue}`,
    '/system',
  ]) {
    await page.goto(path);
    await expect(page.locator('main')).toBeVisible();
    const offenders = await page.evaluate(() =>
      [...document.querySelectorAll('main *')]
        .filter((e) => {
          const s = getComputedStyle(e);
          return s.wordBreak === 'break-all' || (s.overflowWrap === 'anywhere' && !/mono/i.test(s.fontFamily));
        })
        .map((e) => `${e.tagName}.${e.className}`),
    );
    expect(offenders, path).toEqual([]);
  }
});
