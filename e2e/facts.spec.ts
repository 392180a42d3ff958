// Issue 8's facts in the browser: the release dialog names every partition and span it frees, the
// audit trail leads back to the objects, and a page past the last one says so.
import { confirmWithReason, expect, push, sql, test } from './support';

const unique = (name: string) => `e2e.facts.${name}.${Date.now().toString(36)}`;

test('the release dialog lists every partition and span of a partitions=3 lease before confirming', async ({
  page,
  request,
}) => {
  const queue = unique('multi');
  for (const p of ['a', 'b', 'c']) await push(request, queue, p, 2);
  const res = await request.get(`/api/v1/pop/queue/${queue}?consumerGroup=g&partitions=3&leaseSeconds=120`, {
    headers: { 'x-queen-consumer': 'worker-7' },
  });
  const { leaseId } = await res.json();

  await page.goto(`/leases?queue=${queue}`);
  await expect(page.getByTestId('lease-count')).toHaveText('3 leases');
  await expect(page.getByTestId(`lease-${leaseId}`).first()).toContainText(leaseId); // in full
  await page.getByRole('button', { name: `Force release lease ${leaseId} on a/g` }).click();
  const dialog = page.getByRole('dialog');
  await expect(dialog.getByTestId('release-partition')).toHaveCount(3);
  await expect(dialog.getByTestId('release-preview')).toContainText('all 3 partitions');
  for (const p of ['a', 'b', 'c'])
    await expect(dialog.getByTestId('release-partition').filter({ hasText: `${queue} / ${p}` })).toContainText(
      'offsets 1–2',
    );
  await expect(dialog).toContainText('its acks that carry this lease id are refused');
  await expect(dialog).toContainText('An ack without a lease id cannot be told apart');
  await dialog.getByLabel(/Reason/).fill('worker-7 hung');
  await dialog.getByRole('button', { name: 'Release', exact: true }).click();
  await dialog.waitFor({ state: 'hidden' });
  await expect(page.getByTestId('lease-count')).toHaveText('0 leases', { timeout: 5000 });
});

test("a release on a queue row is found from the row's audit link, and its entry links back to the queue, partition and lease", async ({
  page,
  request,
}) => {
  const queue = unique('trail');
  for (const p of ['a', 'b']) await push(request, queue, p, 2);
  const popped = await (
    await request.get(`/api/v1/pop/queue/${queue}?consumerGroup=g&partitions=2&leaseSeconds=120`)
  ).json();

  await page.goto(`/queues/${queue}?group=g&sort=partition`);
  const row = page.getByTestId('cursor-a-g');
  await row.getByRole('button', { name: 'Force release' }).click();
  await expect(page.getByRole('dialog').getByTestId('release-partition')).toHaveCount(2);
  await page.getByRole('dialog').getByRole('button', { name: 'Cancel' }).click();
  await confirmWithReason(page, row.getByRole('button', { name: 'Force release' }), 'consumer wedged', 'Release');
  await expect(row.getByText('none')).toBeVisible({ timeout: 5000 });

  await row.getByRole('link', { name: 'Audit log of a/g' }).click();
  await expect(page).toHaveURL(/\/audit\?.*partitionId=/);
  const entry = page.getByTestId('audit-entry').filter({ hasText: 'lease.release' });
  await expect(entry).toHaveCount(1);
  await expect(entry).toContainText('consumer wedged');
  await expect(entry).toContainText(popped.leaseId);

  await entry.getByRole('link', { name: `lease ${popped.leaseId}` }).click();
  await expect(page).toHaveURL(new RegExp(`/leases\\?lease=${popped.leaseId}`));
  await expect(page.getByTestId('lease-gone')).toContainText(`Lease ${popped.leaseId} no longer exists`);
  await page.goBack();

  await page
    .getByTestId('audit-entry')
    .filter({ hasText: 'lease.release' })
    .getByRole('link', { name: `${queue} / b (g) 1–2` })
    .click();
  await expect(page).toHaveURL(new RegExp(`/queues/${queue.replace(/\./g, '\\.')}\\?partitionIs=b&group=g`));
  await expect(page.getByTestId('cursor-b-g')).toBeVisible();
  await expect(page.getByTestId('cursor-a-g')).toHaveCount(0);
});

test('a page past the last one says so and links to the last page, on the leases and queue pages', async ({
  page,
  request,
}) => {
  const queue = unique('pages');
  await push(request, queue, 'p', 1);
  await request.get(`/api/v1/pop/queue/${queue}?consumerGroup=g&leaseSeconds=120`);

  await page.goto(`/leases?queue=${queue}&page=99`);
  await expect(page.getByTestId('past-last-page')).toContainText('Page 99 is past the last page (1)');
  await page.getByRole('link', { name: 'go to page 1' }).click();
  await expect(page.getByTestId('lease-count')).toHaveText('1 leases');
  await expect(page.getByTestId('past-last-page')).toHaveCount(0);

  await page.goto(`/queues/${queue}?group=g&page=99`);
  await expect(page.getByTestId('past-last-page')).toContainText('Page 99 is past the last page (1)');
  await expect(page.getByText('No partitions match')).toHaveCount(0);
  await page.getByRole('link', { name: 'go to page 1' }).click();
  await expect(page.getByTestId('cursor-p-g')).toBeVisible();
});

test("the dry run shows no lease id, and the Live page's per-partition headers are separate words", async ({
  page,
  request,
}) => {
  const queue = unique('dry');
  await push(request, queue, 'p', 2);
  await page.goto(`/console?queue=${queue}`);
  await page.getByRole('button', { name: 'Dry run' }).click();
  await expect(page.getByTestId('dry-run-lease')).toContainText('No lease');
  await expect(page.getByTestId('reply-body')).toContainText('"leaseId": null');
  expect((await (await request.get(`/api/v1/leases?queue=${queue}`)).json()).total).toBe(0);

  await page.goto('/live');
  const headers = page.getByRole('region', { name: 'Per-partition activity' }).getByRole('columnheader');
  await expect(headers).toHaveText(['Partition', 'pushed', 'claimed', 'acked', 'failed', 'expired']);
  const [first, second] = [await headers.nth(1).boundingBox(), await headers.nth(2).boundingBox()];
  expect(second!.x - (first!.x + first!.width)).toBeGreaterThanOrEqual(0);
  expect(await headers.nth(2).evaluate((th) => parseFloat(getComputedStyle(th).paddingLeft))).toBeGreaterThan(0);
});

test('the audit page shows entries written before sql/017, whose seek details held a count under partitions', async ({
  page,
}) => {
  const target = `${unique('old')}@legacy`;
  await sql(
    "insert into queen.audit_log (actor, action, target_type, target, reason, result, details) values ('ops', 'cursor.seek', 'consumer_group', $1, 'old', 'ok', $2)",
    [target, { toEnd: true, partitions: 4 }],
  );
  await page.goto(`/audit?target=${encodeURIComponent(target)}`);
  await expect(page.getByTestId('audit-entry')).toHaveCount(1);
  await expect(page.getByTestId('audit-entry')).toContainText(target);
});
