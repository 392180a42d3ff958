// The Message page's trace timeline, in a real Chromium against the real app and PostgreSQL.
import { expect, pop, screenshot, test } from './support';

test("the message page shows the message's traces as a timeline, oldest first, and picks up new ones", async ({
  page,
  request,
}) => {
  const transactionId = `order-${Date.now().toString(36)}`; // a retry starts from a message without traces
  await request.post('/api/v1/push', {
    data: { items: [{ queue: 'e2e.traces', partition: 'p', payload: { orderId: 17 }, transactionId }] },
  });
  const popped = await pop(request, '/queue/e2e.traces', { consumerGroup: 'billing' });
  const partitionId = popped.body.partitionId;
  const trace = (body: Record<string, unknown>) =>
    request.post('/api/v1/traces', { data: { transactionId, partitionId, consumerGroup: 'billing', ...body } });
  expect(
    (await trace({ eventType: 'processing', traceNames: ['order-17'], data: { step: 'charge card' } })).status(),
  ).toBe(200);
  expect((await trace({ eventType: 'error', data: { error: 'card declined' } })).status()).toBe(200);

  await page.goto(`/messages/${partitionId}/${transactionId}`);
  const events = page.getByTestId('trace');
  await expect(events).toHaveCount(2);
  await expect(events.nth(0).getByTestId('trace-event')).toHaveText('processing');
  await expect(events.nth(0).getByTestId('trace-group')).toHaveText('billing');
  await expect(events.nth(0)).toContainText('order-17');
  await expect(events.nth(0).getByTestId('trace-data')).toContainText('"step": "charge card"');
  await expect(events.nth(1).getByTestId('trace-event')).toHaveText('error');
  await expect(events.nth(1).getByTestId('trace-data')).toContainText('card declined');

  await trace({ eventType: 'retry', data: { attempt: 2 } });
  await expect(events).toHaveCount(3); // the page refreshes on its interval
  await expect(events.nth(2).getByTestId('trace-event')).toHaveText('retry');
  await screenshot(page, 'message-traces');
});
