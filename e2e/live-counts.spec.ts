// Issue 20: the Live page's per-partition counts come from the database, past the last 500 events
// it lists; its feed opens with history and narrows by event type and holder.
import { expect, push, sql, test } from './support';

const unique = (name: string) => `e2e.out.${name}.${Date.now().toString(36)}`;

test("Live counts a partition's pushes from the database past its last 500 events, starts with history, and filters by type and holder", async ({
  page,
  request,
}) => {
  test.setTimeout(150_000); // 520 pushes one at a time
  const queue = unique('live');
  await push(request, queue, 'early', 3);
  await request.get(`/api/v1/pop/queue/${queue}?consumerGroup=g&batch=3`, {
    headers: { 'x-queen-consumer': 'early-bird' },
  });
  await page.goto(`/live?queue=${queue}`);
  await expect(page.getByTestId('feed-status')).toContainText('live');
  // the claim made before the page opened is listed, marked as history
  await expect(page.getByTestId('event-earlier').first()).toContainText('early-bird');
  // one push at a time: 520 events (concurrent ones would be coalesced into fewer)
  for (let i = 0; i < 520; i++) {
    const r = await request.post('/api/v1/push', {
      data: { items: [{ queue, partition: 'p', payload: {}, transactionId: `t-${i}` }] },
    });
    expect(`${i}: ${r.status()} ${r.status() === 201 ? '' : await r.text()}`).toBe(`${i}: 201 `);
  }
  const row = page.locator(`[data-partition="${queue}/p"]`);
  await expect(row.getByTestId('pushed')).toHaveText('520', { timeout: 10_000 });
  const [{ n }] = await sql(
    `select count(*)::int as n from queen.messages m join queen.partitions p on p.id = m.partition_id
    join queen.queues q on q.id = p.queue_id where q.name = $1 and p.name = 'p'`,
    [queue],
  );
  expect(n).toBe(520);
  await expect(page.getByTestId('event-push')).toHaveCount(500); // the list keeps the last 500; the table counts them all

  await request.get(`/api/v1/pop/queue/${queue}/partition/p?consumerGroup=g&batch=7`, {
    headers: { 'x-queen-consumer': 'late-worker' },
  });
  await page.getByLabel('Event type').selectOption('claim');
  await expect(page.getByTestId('event-push')).toHaveCount(0);
  await expect(page.getByTestId('event-claim')).toContainText('late-worker');
  await page.getByLabel(/^Holder/).fill('late');
  await page.getByLabel(/^Holder/).press('Enter');
  await expect(page).toHaveURL(/type=claim/);
  await expect(page).toHaveURL(/holder=late/);
  await expect(page.getByTestId('event-earlier')).toHaveCount(0);
  await expect(row.getByTestId('claimed')).toHaveText('7', { timeout: 5000 });
});
