import { confirmWithReason, expect, pop, sql, test } from './support';

// 10,000 live leases: the page reads one page of them from the server, filters, pages and
// force-releases without rendering the rest.
test('the leases page with 10,000 leases loads, filters, pages and force-releases', async ({ page, request }) => {
  test.setTimeout(180_000);
  for (let b = 0; b < 10; b++) {
    const items = Array.from({ length: 1000 }, (_, i) => ({
      queue: 'e2e.many',
      partition: `p${b * 1000 + i}`,
      payload: { i },
    }));
    expect((await request.post('/api/v1/push', { data: { items } })).status()).toBe(201);
  }
  for (let i = 0; i < 100; i++) {
    const r = await pop(request, '/queue/e2e.many', {
      consumerGroup: 'bulk',
      partitions: 100,
      batch: 100,
      leaseSeconds: 600,
    });
    expect(r.body.partitionsClaimed).toBe(100);
  }
  const solo = await pop(request, '/queue/e2e.many', { consumerGroup: 'solo', leaseSeconds: 600 });
  const leases = async () =>
    (
      await sql<{ n: number }>(
        `select count(*)::int as n from queen.cursors c join queen.queues q on q.id = c.queue_id where q.name = 'e2e.many' and c.lease_id is not null`,
      )
    )[0].n;
  expect(await leases()).toBe(10_001);

  const started = Date.now();
  await page.goto('/leases?queue=e2e.many');
  await expect(page.getByTestId('lease-count')).toHaveText('10,001 leases');
  console.log(`leases page with 10,001 leases: usable in ${Date.now() - started} ms`);
  await expect(page.locator('tbody tr')).toHaveCount(50);
  await expect(page.getByTestId('lease-range')).toHaveText('1–50');

  await page.getByRole('button', { name: 'Next' }).click();
  await expect(page).toHaveURL(/page=2/);
  await expect(page.getByTestId('lease-range')).toHaveText('51–100');
  await expect(page.locator('tbody tr')).toHaveCount(50);

  await page.getByLabel('Group (exact name)').fill('solo');
  await page.getByLabel('Group (exact name)').press('Enter');
  await expect(page).toHaveURL(/group=solo/);
  await expect(page).not.toHaveURL(/page=/); // a new filter starts at the first page
  await expect(page.getByTestId('lease-count')).toHaveText('1 leases');
  await confirmWithReason(
    page,
    page.getByTestId(`lease-${solo.body.leaseId}`).getByRole('button', { name: 'Force release' }),
    'stuck consumer',
    'Release',
  );
  await expect(page.getByTestId('lease-count')).toHaveText('0 leases', { timeout: 5000 });
  expect(await sql('select 1 from queen.cursors where lease_id = $1', [solo.body.leaseId])).toEqual([]);
  expect(await leases()).toBe(10_000);
});
