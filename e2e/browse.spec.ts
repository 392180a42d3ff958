// Issue 8, items 9, 12 and 14: browse a partition by offset, seek with a preview, delete a group by
// typing its name, try pop that asks before creating, and search by id, in a real Chromium.
import { expect, pop, push, screenshot, sql, test } from './support';

const unique = (name: string) => `e2e.${name}.${Date.now().toString(36)}`;

test('a partition browses by offset, with every message state per group and links to the message', async ({
  page,
  request,
}) => {
  const queue = unique('browse');
  await push(request, queue, 'p', 12);
  await pop(request, `/queue/${queue}`, { consumerGroup: 'a', batch: 5, autoAck: true }); // a: 1–5 done
  await pop(request, `/queue/${queue}`, { consumerGroup: 'a', batch: 3 }); // a: 6–8 leased
  await pop(request, `/queue/${queue}`, { consumerGroup: 'b', batch: 2, autoAck: true }); // b: 1–2 done
  await page.goto(`/queues/${queue}?group=a`);
  await page.getByTestId('cursor-p-a').getByRole('link', { name: 'p', exact: true }).click();
  await expect(page).toHaveURL(new RegExp(`/queues/${queue.replace(/\./g, '\\.')}/partitions/p\\?group=a$`));
  const [head] = await sql(
    'select head_offset::int as head from queen.partitions p join queen.queues q on q.id = p.queue_id where q.name = $1',
    [queue],
  );
  await expect(page.getByTestId('window')).toHaveText(`offsets 1–${head.head} of ${head.head}`);
  const expected: Record<number, [string, string]> = {
    2: ['done', 'done'],
    3: ['done', 'pending'],
    7: ['leased', 'pending'],
    10: ['pending', 'pending'],
  };
  for (const [offset, [a, b]] of Object.entries(expected)) {
    const row = page.getByTestId(`offset-${offset}`);
    await expect(row.getByTestId('state-a')).toHaveText(a);
    await expect(row.getByTestId('state-b')).toHaveText(b);
  }
  const [{ n }] = await sql(
    'select count(*)::int as n from queen.messages m join queen.partitions p on p.id = m.partition_id join queen.queues q on q.id = p.queue_id where q.name = $1',
    [queue],
  );
  await expect(page.locator('[data-testid^="offset-"]')).toHaveCount(n);
  await screenshot(page, 'partition');

  await expect(page.getByRole('link', { name: 'Next', exact: true })).toHaveCount(0); // the whole partition is in the window
  await page.getByLabel('Jump to offset').fill('11');
  await page.getByRole('button', { name: 'Go' }).click();
  await expect(page.getByTestId('window')).toHaveText(`offsets 11–12 of 12`);
  await page.getByRole('link', { name: 'Previous', exact: true }).click();
  await expect(page.getByTestId('window')).toHaveText(`offsets 1–12 of 12`);
  await page.getByLabel('Jump to offset').fill('11');
  await page.getByRole('button', { name: 'Go' }).click();
  await expect(page.getByTestId('window')).toHaveText(`offsets 11–12 of 12`);
  await page.getByRole('link', { name: 'p-10' }).click(); // the transaction id: offset 11 holds payload seq 10
  await expect(page).toHaveURL(/\/messages\/[0-9a-f-]+\/p-10$/);
});

test('seek shows what it skips and replays before it is confirmed, and the cursors move by that much', async ({
  page,
  request,
}) => {
  const queue = unique('seekpreview');
  await push(request, queue, 'p1', 6);
  await push(request, queue, 'p2', 4);
  await pop(request, `/queue/${queue}/partition/p1`, { consumerGroup: 'g', batch: 2, autoAck: true });
  const committed = () =>
    sql<{ name: string; committed: number; head: number }>(
      `select p.name, c.committed_offset::int as committed, p.head_offset::int as head from queen.cursors c
     join queen.partitions p on p.id = c.partition_id join queen.queues q on q.id = p.queue_id
     where q.name = $1 and c.consumer_group = 'g' order by p.name`,
      [queue],
    );
  const before = await committed();
  const skip = before.reduce((s, c) => s + c.head - c.committed, 0);
  expect(skip).toBe(8);

  await page.goto(`/queues/${queue}?group=g`);
  await page.getByRole('button', { name: 'Seek…' }).click();
  const dialog = page.getByRole('dialog');
  await expect(dialog.getByTestId('preview-skipped')).toHaveText(String(skip));
  await expect(dialog.getByTestId('preview-replayed')).toHaveText('0');
  await expect(dialog.getByTestId('preview-p1')).toContainText('2 → 6');
  await screenshot(page, 'seek-preview');
  await dialog.getByLabel(/Reason/).fill('obsolete backlog');
  await dialog.getByRole('button', { name: 'Seek', exact: true }).click();
  await dialog.waitFor({ state: 'hidden' });
  const after = await committed();
  expect(after.map((c) => c.committed)).toEqual(after.map((c) => c.head));
  expect(after.reduce((s, c, i) => s + c.committed - before[i].committed, 0)).toBe(skip);

  await page.getByRole('button', { name: 'Seek…' }).click();
  await dialog.getByLabel('Seek target').selectOption('beginning');
  await dialog.getByLabel('Only partition').fill('p2');
  await expect(dialog.getByTestId('preview-replayed')).toHaveText('4');
  await expect(dialog.getByTestId('preview-skipped')).toHaveText('0');
  await dialog.getByLabel(/Reason/).fill('replay p2');
  await dialog.getByRole('button', { name: 'Seek', exact: true }).click();
  await dialog.waitFor({ state: 'hidden' });
  expect((await committed()).map((c) => c.committed)).toEqual([6, 0]);
});

test('deleting a group asks for its name to be typed', async ({ page, request }) => {
  const queue = unique('deletegroup');
  await push(request, queue, 'p', 2);
  await pop(request, `/queue/${queue}`, { consumerGroup: 'retiring', autoAck: true });
  await page.goto(`/queues/${queue}?group=retiring`);
  await page.getByRole('button', { name: 'Delete group here' }).click();
  const dialog = page.getByRole('dialog');
  await dialog.getByLabel(/Reason/).fill('group retired');
  const confirm = dialog.getByRole('button', { name: 'Delete', exact: true });
  await expect(confirm).toBeDisabled();
  await dialog.getByLabel(/to confirm/).fill('retirin');
  await expect(confirm).toBeDisabled();
  await dialog.getByLabel(/to confirm/).fill('retiring');
  await expect(confirm).toBeEnabled();
  await confirm.click();
  await dialog.waitFor({ state: 'hidden' });
  expect(
    await sql(
      "select 1 from queen.cursors c join queen.queues q on q.id = c.queue_id where q.name = $1 and c.consumer_group = 'retiring'",
      [queue],
    ),
  ).toEqual([]);
});

test('try pop warns before creating a queue or a group, and suggests existing queues', async ({ page, request }) => {
  const missing = unique('nosuchqueue');
  await page.goto('/console');
  await page.getByLabel('Queue', { exact: true }).fill(missing);
  await page.getByRole('button', { name: 'Dry run' }).click();
  await expect(page.getByTestId('creates-queue')).toContainText(`Queue ${missing} does not exist`);
  await page.getByRole('button', { name: 'Pop (leases real messages)' }).click();
  await expect(page.getByTestId('creates-queue')).toBeVisible();
  expect(await sql('select 1 from queen.queues where name = $1', [missing])).toEqual([]);
  await page.getByRole('button', { name: 'Create queue and pop' }).click();
  await expect(page.getByTestId('reply-status')).toHaveText('HTTP 204');
  expect(await sql('select 1 from queen.queues where name = $1', [missing])).toHaveLength(1);

  const queue = unique('trypop');
  await push(request, queue, 'p', 2);
  await page.getByLabel('Queue', { exact: true }).fill(queue.slice(0, -2));
  await expect(page.locator(`#queue-suggestions option[value="${queue}"]`)).toHaveCount(1);
  await page.getByLabel('Queue', { exact: true }).fill(queue);
  await page.getByLabel('consumerGroup', { exact: true }).fill('brand-new');
  await page.getByRole('button', { name: 'Pop (leases real messages)' }).click();
  await expect(page.getByTestId('creates-group')).toContainText('they persist');
  await expect(page.getByTestId('creates-queue')).toHaveCount(0);
  expect(await sql("select 1 from queen.cursors where consumer_group = 'brand-new'")).toEqual([]);
  await page.getByRole('button', { name: 'Create group and pop' }).click();
  await expect(page.getByTestId('reply-status')).toHaveText('HTTP 200');
});

test('the nav search finds a lease, a message id and a transaction id', async ({ page, request }) => {
  const queue = unique('search');
  await push(request, queue, 'p', 2);
  const leased = await pop(request, `/queue/${queue}`, { consumerGroup: 'finder', batch: 1 });
  const [m] = await sql<{ id: string; partition_id: string }>(
    "select m.id, m.partition_id from queen.messages m join queen.partitions p on p.id = m.partition_id join queen.queues q on q.id = p.queue_id where q.name = $1 and m.transaction_id = 'p-1'",
    [queue],
  );
  await page.goto('/');
  const box = page.getByLabel('Find by lease id, message id, transaction id, holder, group, partition or queue name');
  await box.fill(leased.body.leaseId);
  await box.press('Enter');
  await expect(page).toHaveURL(new RegExp(`/leases\\?lease=${leased.body.leaseId}$`));
  await expect(page.getByText(leased.body.leaseId).first()).toBeVisible();

  await box.fill(m.id);
  await box.press('Enter');
  await expect(page).toHaveURL(new RegExp(`/messages/${m.partition_id}/p-1$`));

  const transactionId = `${queue}-tx`;
  await request.post('/api/v1/push', { data: { items: [{ queue, partition: 'p', payload: {}, transactionId }] } });
  await box.fill(transactionId);
  await box.press('Enter');
  await expect(page).toHaveURL(
    new RegExp(`/messages/${leased.body.partitionId}/${transactionId.replace(/\./g, '\\.')}$`),
  );

  await box.fill('no-such-id-anywhere');
  await box.press('Enter');
  await expect(page.getByTestId('search-results')).toContainText(
    'No lease, message or transaction with id no-such-id-anywhere',
  );

  // 390 px wide: the partition page and the search box with its results stay inside the viewport
  // (the rest of the nav's 390 px layout belongs to the layout's own test)
  await page.setViewportSize({ width: 390, height: 800 });
  await page.goto(`/queues/${queue}/partitions/p`);
  await expect(page.getByTestId('window')).toBeVisible();
  const overflowing = () =>
    page.evaluate(() => {
      const width = document.documentElement.clientWidth;
      return [...document.querySelectorAll('main *, form[role="search"], form[role="search"] *')]
        .filter((e) => e.getBoundingClientRect().right > width + 1 && !e.closest('.overflow-x-auto'))
        .map((e) => `${e.tagName.toLowerCase()}.${e.className}`.slice(0, 80));
    });
  expect(await overflowing()).toEqual([]);
  await box.fill('no-such-id-anywhere');
  await box.press('Enter');
  await expect(page.getByTestId('search-results')).toBeVisible();
  expect(await overflowing()).toEqual([]);
});

test('a link to one partition lands on that partition only, not on every name containing it', async ({
  page,
  request,
}) => {
  const queue = unique('exact');
  for (const p of ['p-1', 'p-10']) await push(request, queue, p, 2);
  await pop(request, `/queue/${queue}/partition/p-1`, { consumerGroup: 'g', batch: 1 });
  await pop(request, `/queue/${queue}/partition/p-10`, { consumerGroup: 'g', batch: 1 });
  await page.goto(`/leases?queue=${queue}`);
  await page.getByRole('link', { name: `${queue} / p-1`, exact: true }).click();
  await expect(page).toHaveURL(new RegExp(`/queues/${queue.replace(/\./g, '\\.')}\\?partitionIs=p-1&group=g$`));
  await expect(page.getByTestId('cursor-p-1-g')).toBeVisible();
  await expect(page.getByTestId('cursor-p-10-g')).toHaveCount(0);
  await expect(page.getByRole('textbox', { name: 'Partition (exact name)' })).toHaveValue('p-1');
  // the text box matches part of a name: both
  await page.goto(`/queues/${queue}?partition=p-1&group=g`);
  await expect(page.getByTestId('cursor-p-10-g')).toBeVisible();
  await expect(page.getByTestId('cursor-p-1-g')).toBeVisible();
});
