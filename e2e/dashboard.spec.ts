// The operator dashboard, in a real Chromium against the real app and PostgreSQL.
import { confirmWithReason, expect, pop, push, screenshot, sql, test } from './support';

test('an ack moves the cursor; a lease counts down, turns expired; force release ends it and fences its holder', async ({
  page,
  request,
}) => {
  const queue = `e2e.cursor.${Date.now().toString(36)}`; // a retry starts from an empty queue
  await push(request, queue, 'p', 5);
  await pop(request, `/queue/${queue}`, { consumerGroup: 'g', batch: 1, autoAck: true }); // g joins, consuming offset 0
  await page.goto(`/queues/${queue}?group=g`);
  const row = page.getByTestId('cursor-p-g');
  await expect(row.getByTestId('lag')).toHaveText('4');
  // the page is up before the lease starts, so a slow first page load cannot eat the lease
  const first = await pop(request, `/queue/${queue}`, { consumerGroup: 'g', batch: 2, leaseSeconds: 10 });
  expect(first.status).toBe(200);
  await expect(row.getByTestId('lease-state')).toContainText('expires in');

  // The countdown ticks every second between refreshes, even with refresh paused.
  await page.getByRole('button', { name: 'Pause' }).first().click();
  const before = await row.getByTestId('lease-state').textContent();
  await page.waitForTimeout(1500);
  expect(await row.getByTestId('lease-state').textContent()).not.toBe(before);
  await page.getByRole('button', { name: 'Resume', exact: true }).first().click();

  const m = first.body.messages[0];
  const ack = await request.post('/api/v1/ack', {
    data: { transactionId: m.transactionId, partitionId: m.partitionId, consumerGroup: 'g', leaseId: m.leaseId },
  });
  expect((await ack.json())[0]).toMatchObject({ success: true, error: null });
  await expect(row.getByTestId('lag')).toHaveText('3', { timeout: 5000 }); // the cursor moved: offset 1 is done
  await expect(row.getByTestId('lease-state')).toContainText('expired', { timeout: 14_000 });
  await screenshot(page, 'queue');

  const second = await pop(request, `/queue/${queue}`, { consumerGroup: 'g', batch: 2, leaseSeconds: 60 });
  await expect(row.getByTestId('lease-state')).toContainText('expires in', { timeout: 5000 });
  await confirmWithReason(
    page,
    row.getByRole('button', { name: 'Force release' }),
    'worker wedged on a poison message',
    'Release',
  );
  await expect(row.getByText('none')).toBeVisible({ timeout: 5000 });
  const m2 = second.body.messages[0];
  const late = await request.post('/api/v1/ack', {
    data: { transactionId: m2.transactionId, partitionId: m2.partitionId, consumerGroup: 'g', leaseId: m2.leaseId },
  });
  expect((await late.json())[0]).toMatchObject({ success: false, error: 'Invalid or expired lease' });
  const audit = await sql("select actor, reason from queen.audit_log where action = 'lease.release' and target = $1", [
    second.body.leaseId,
  ]);
  expect(audit).toEqual([{ actor: 'dashboard', reason: 'worker wedged on a poison message' }]);
});

test('pausing a (partition, group) makes pops skip it; resuming restores it; both are in the audit log', async ({
  page,
  request,
}) => {
  await push(request, 'e2e.pause', 'a', 2);
  await push(request, 'e2e.pause', 'b', 2);
  await pop(request, '/queue/e2e.pause', { consumerGroup: 'g', autoAck: true, batch: 1, partitions: 0 }); // the group now has cursors
  await page.goto('/queues/e2e.pause?group=g&sort=partition');
  const row = page.getByTestId('cursor-a-g');
  await confirmWithReason(page, row.getByRole('button', { name: 'Pause' }), 'investigating order 8891', 'Pause');
  await expect(row.getByTestId('paused')).toBeVisible({ timeout: 5000 });
  expect((await pop(request, '/queue/e2e.pause/partition/a', { consumerGroup: 'g' })).status).toBe(204);
  const other = await pop(request, '/queue/e2e.pause', { consumerGroup: 'g', partitions: 0, autoAck: true });
  expect(new Set(other.body.messages.map((m: any) => m.partition))).toEqual(new Set(['b']));

  await confirmWithReason(page, row.getByRole('button', { name: 'Resume' }), 'fixed downstream', 'Resume');
  await expect(row.getByTestId('paused')).toHaveCount(0, { timeout: 5000 });
  expect((await pop(request, '/queue/e2e.pause/partition/a', { consumerGroup: 'g', autoAck: true })).status).toBe(200);

  await page.goto('/audit');
  const entries = page.getByTestId('audit-entry');
  await expect(entries.filter({ hasText: 'cursor.pause' }).filter({ hasText: 'investigating order 8891' })).toHaveCount(
    1,
  );
  await expect(entries.filter({ hasText: 'cursor.resume' }).filter({ hasText: 'fixed downstream' })).toHaveCount(1);
  await screenshot(page, 'audit');
});

test('seek and delete a group from the queue page, each confirmed with a reason and audited', async ({
  page,
  request,
}) => {
  await push(request, 'e2e.seek', 'p', 4);
  await pop(request, '/queue/e2e.seek', { consumerGroup: 'lagging', autoAck: true, batch: 1 });
  await page.goto('/queues/e2e.seek?group=lagging');
  const row = page.getByTestId('cursor-p-lagging');
  await expect(row.getByTestId('lag')).toHaveText('3');
  await confirmWithReason(page, page.getByRole('button', { name: 'Seek…' }), 'backlog is obsolete', 'Seek');
  await expect(row.getByTestId('lag')).toHaveText('0', { timeout: 5000 });
  expect((await pop(request, '/queue/e2e.seek', { consumerGroup: 'lagging' })).status).toBe(204);
  await page.getByRole('button', { name: 'Delete group here' }).click();
  await page
    .getByRole('dialog')
    .getByLabel(/to confirm/)
    .fill('lagging');
  await confirmWithReason(page, page.getByRole('dialog').getByLabel(/Reason/), 'group retired', 'Delete');
  await expect(page.getByText('groups: none yet')).toBeVisible({ timeout: 5000 });
  const audit = await sql("select action, reason from queen.audit_log where target = 'lagging@e2e.seek' order by id");
  expect(audit).toEqual([
    { action: 'cursor.seek', reason: 'backlog is obsolete' },
    { action: 'consumer_group.delete', reason: 'group retired' },
  ]);
});

test('pop maintenance on makes pops answer 204 and shows the banner; off restores them', async ({ page, request }) => {
  await push(request, 'e2e.maintenance', 'p', 1);
  await page.goto('/');
  await confirmWithReason(
    page,
    page.getByRole('button', { name: 'Turn pop maintenance on' }),
    'database failover drill',
    'Stop pops',
  );
  await expect(page.getByTestId('maintenance-banner')).toContainText('database failover drill', { timeout: 5000 });
  const paused = await pop(request, '/queue/e2e.maintenance');
  expect(paused.status).toBe(204);
  expect(paused.headers['x-queen-empty']).toBe('maintenance');
  await screenshot(page, 'overview-maintenance');
  await confirmWithReason(
    page,
    page.getByRole('button', { name: 'Turn pop maintenance off' }),
    'drill over',
    'Turn off',
  );
  await expect(page.getByTestId('maintenance-banner')).toHaveCount(0, { timeout: 5000 });
  expect((await pop(request, '/queue/e2e.maintenance')).status).toBe(200);
});

test('the try-pop console runs a dry run and a real pop, and its ack button completes the batch', async ({
  page,
  request,
}) => {
  await push(request, 'e2e.console', 'p', 3);
  await page.goto('/console');
  await page.getByLabel('Queue', { exact: true }).fill('e2e.console');
  await page.getByLabel('consumerGroup').fill('console-group');
  await expect(page.getByTestId('curl')).toContainText('/api/v1/pop/queue/e2e.console?batch=10&partitions=1');
  await page.getByRole('button', { name: 'Dry run' }).click();
  await expect(page.getByText('Dry run (nothing was claimed)')).toBeVisible();
  await expect(page.getByTestId('reply-status')).toHaveText('HTTP 200');
  await expect(page.getByTestId('reply-body')).toContainText('"transactionId": "p-0"');
  expect((await (await request.get('/api/v1/leases?queue=e2e.console')).json()).leases).toEqual([]);

  await page.getByRole('button', { name: 'Pop (leases real messages)' }).click();
  await page.getByRole('button', { name: 'Create group and pop' }).click(); // console-group is new: the console asks first
  await expect(page.getByTestId('reply-status')).toHaveText('HTTP 200');
  await expect(page.getByTestId('reply-headers')).toContainText('content-type: application/json');
  expect((await (await request.get('/api/v1/leases?queue=e2e.console')).json()).leases).toHaveLength(1);
  await page.getByRole('button', { name: 'Ack all' }).click();
  await expect(page.getByTestId('action-result')).toContainText('"leaseReleased": true');
  const detail = await (await request.get('/api/v1/consumer-groups/console-group')).json();
  expect(detail.queues[0].partitions[0]).toMatchObject({ committedOffset: 3, lag: 0, lease: null });
  await expect(page).toHaveURL(/queue=e2e.console/); // the console's parameters are in the URL
  await screenshot(page, 'console');
});

test('the live view shows a push and a pop within 2 seconds', async ({ page, request }) => {
  await page.goto('/live?queue=e2e.live');
  await expect(page.getByTestId('feed-status')).toContainText('live');
  await push(request, 'e2e.live', 'p', 2);
  await expect(page.getByTestId('event-push')).toContainText('e2e.live: 2 → p', { timeout: 2000 });
  await pop(request, '/queue/e2e.live', { consumerGroup: 'watchers' });
  await expect(page.getByTestId('event-claim')).toContainText('watchers claimed 2 from e2e.live/p', { timeout: 2000 });
  await push(request, 'e2e.elsewhere', 'p', 1); // filtered out
  await page.waitForTimeout(500);
  await expect(page.getByTestId('event-push')).toHaveCount(1);
  await expect(page.getByTestId('partition-activity')).toContainText('e2e.live/p');
  await screenshot(page, 'live');
});

test("the message page shows payload, offset, segment time and every group's state", async ({ page, request }) => {
  await request.post('/api/v1/push', {
    data: {
      items: [
        { queue: 'e2e.message', partition: 'p', payload: { orderId: 8891, total: 4200 }, transactionId: 'order-8891' },
      ],
    },
  });
  const popped = await pop(request, '/queue/e2e.message', { consumerGroup: 'billing' });
  await page.goto(`/messages/${popped.body.partitionId}/order-8891`);
  await expect(page.getByRole('heading', { name: 'order-8891' })).toBeVisible();
  await expect(page.getByTestId('payload')).toContainText('"orderId": 8891');
  await expect(page.getByTestId('group-billing')).toContainText('leased');
  await screenshot(page, 'message');
});

test('the leases page filters by state, keeps filters in the URL and force-releases with a reason', async ({
  page,
  request,
}) => {
  await push(request, 'e2e.leases', 'p', 3);
  const popped = await pop(request, '/queue/e2e.leases', { consumerGroup: 'slow', leaseSeconds: 1, batch: 1 });
  await page.waitForTimeout(1200);
  await page.goto('/leases?queue=e2e.leases');
  await page.getByLabel('State').selectOption('expired');
  await expect(page).toHaveURL(/state=expired/);
  await expect(page.getByTestId('lease-count')).toHaveText('1 leases');
  await expect(page.getByTestId('lease-state')).toContainText('expired');
  await screenshot(page, 'leases');
  await confirmWithReason(
    page,
    page.getByTestId(`lease-${popped.body.leaseId}`).getByRole('button', { name: 'Force release' }),
    'holder is gone',
    'Release',
  );
  await expect(page.getByTestId('lease-count')).toHaveText('0 leases', { timeout: 5000 });
});

test('the overview is loud about a queue that needs attention, quiet about a healthy one, and works in dark mode', async ({
  page,
  request,
}) => {
  await push(request, 'e2e.well', 'p', 1);
  await pop(request, '/queue/e2e.well', { consumerGroup: 'g', autoAck: true }); // consumed: nothing pending
  await push(request, 'e2e.sick', 'p', 1);
  await pop(request, '/queue/e2e.sick', { consumerGroup: 'g', leaseSeconds: 1 });
  await page.waitForTimeout(1200);
  await page.goto('/');
  await expect(page.getByTestId('queue-row-e2e.well')).toContainText('ok');
  await expect(page.getByTestId('queue-row-e2e.sick')).toContainText('1 lease expired, not yet reclaimed');
  await expect(page.getByTestId('health-summary')).toContainText('need attention now');
  await screenshot(page, 'overview');
  await page.emulateMedia({ colorScheme: 'dark' });
  await screenshot(page, 'overview-dark');
});

test('refresh pauses while the user selects text', async ({ page }) => {
  await page.goto('/');
  await page.evaluate(() => {
    const h = document.querySelector('h1')!;
    window.getSelection()!.selectAllChildren(h);
  });
  await expect(page.getByText('paused while you select')).toBeVisible();
  await page.evaluate(() => window.getSelection()!.removeAllRanges());
  await expect(page.getByText('paused while you select')).toHaveCount(0);
});

test('a queue with 10,000 partitions renders its first page in under a second of server time', async ({
  page,
  request,
}) => {
  test.setTimeout(180_000);
  for (let start = 0; start < 10_000; start += 1000) {
    const items = Array.from({ length: 1000 }, (_, i) => ({
      queue: 'e2e.big',
      partition: `p${String(start + i).padStart(5, '0')}`,
      payload: i,
    }));
    expect((await request.post('/api/v1/push', { data: { items }, timeout: 60_000 })).status()).toBe(201);
  }
  // Two groups consume the queue (each has a cursor on every partition); one holds a few leases.
  await pop(request, '/queue/e2e.big', { consumerGroup: 'beta', subscriptionMode: 'new' });
  await pop(request, '/queue/e2e.big', { consumerGroup: 'alpha', partitions: 5, batch: 5 });
  const started = Date.now();
  await page.goto('/queues/e2e.big');
  await expect(page.getByTestId('row-range')).toHaveText('rows 1–50 of 20,000');
  // what the queue stores and what bounds it (sql/012)
  await expect(page.getByTestId('storage')).toContainText('stores 10,000 messages');
  await expect(page.getByTestId('storage')).toContainText('after every group 1 h');
  const took = Number((await page.getByTestId('server-timing').textContent())!.match(/read in (\d+) ms/)![1]);
  console.log(
    `[dashboard] queue page, 10,000 partitions × 2 groups: first page read in ${took} ms on the server, ${Date.now() - started} ms to visible in the browser`,
  );
  await page.getByRole('button', { name: 'Next' }).click();
  await expect(page.getByTestId('row-range')).toHaveText('rows 51–100 of 20,000');
  await expect(page).toHaveURL(/page=2/);
});
