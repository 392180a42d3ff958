// Issue 34: configure and delete a queue from its page (admin, a reason, audited), and push
// messages from the console with the curl that sends the same bytes.
import { execFileSync } from 'node:child_process';
import { confirmWithReason, expect, push, screenshot, sql, test } from './support';

const unique = (name: string) => `e2e.${name}.${Date.now().toString(36)}`;

test("Configure shows the queue's options, edits them, and its reason reaches the audit row", async ({
  page,
  request,
}) => {
  const queue = unique('configure');
  expect(
    (
      await request.post('/api/v1/configure', { data: { queue, namespace: 'ops', options: { leaseTime: 120 } } })
    ).status(),
  ).toBe(200);
  await push(request, queue, 'p', 2);
  await page.goto(`/queues/${queue}`);
  await page.getByRole('button', { name: `Configure queue ${queue}` }).click();
  const dialog = page.getByRole('dialog');
  await expect(dialog.getByLabel('leaseTime')).toHaveValue('120');
  await expect(dialog.getByLabel('retryLimit')).toHaveValue('3');
  await expect(dialog.getByLabel('namespace')).toHaveValue('ops');
  await expect(dialog.getByLabel('deadLetterQueue')).not.toBeChecked();
  await expect(dialog.getByTestId('configure-changes')).toHaveText('No change yet.');
  await dialog.getByLabel('leaseTime').fill('45');
  await dialog.getByLabel('deadLetterQueue').check();
  await expect(dialog.getByTestId('configure-changes')).toContainText('leaseTime: 120 → 45');
  await expect(dialog.getByTestId('configure-changes')).toContainText('deadLetterQueue: false → true');
  await dialog.getByLabel(/Reason/).fill('consumers need a shorter lease');
  await screenshot(page, 'queue-configure');
  await dialog.getByRole('button', { name: 'Save options', exact: true }).click();
  await expect(dialog).toBeHidden();
  await expect(page.getByTestId('announcement')).toContainText(`Configured ${queue}`);
  await expect(page.getByText(/lease 45 s/)).toBeVisible();
  const rows = await sql(
    "select actor, reason, result, details from queen.audit_log where action = 'queue.configure' and target = $1 order by id",
    [queue],
  );
  expect(rows).toHaveLength(2);
  expect(rows[1]).toMatchObject({ reason: 'consumers need a shorter lease', result: 'configured' });
  expect(rows[1].details.changed).toEqual(['deadLetterQueue', 'leaseTime']);
  // every other option stays as it was (a configure is a full set)
  expect(rows[1].details.after).toMatchObject({ retryLimit: 3, namespace: 'ops', leaseTime: 45 });

  // a bad value is the server's 400, shown in the dialog, and changes nothing
  await page.getByRole('button', { name: `Configure queue ${queue}` }).click();
  await dialog.getByLabel('leaseTime').fill('0');
  await dialog.getByLabel(/Reason/).fill('typo');
  await dialog.getByRole('button', { name: 'Save options', exact: true }).click();
  await expect(dialog.getByRole('alert')).toContainText('options.leaseTime');
  await dialog.getByRole('button', { name: 'Cancel' }).click();
  expect(
    await sql("select 1 from queen.audit_log where action = 'queue.configure' and target = $1", [queue]),
  ).toHaveLength(2);
});

test("Delete queue asks for the queue's name to be typed and a reason; its page then says who deleted it and why", async ({
  page,
  request,
}) => {
  const queue = unique('delete');
  await push(request, queue, 'p', 3);
  await page.goto(`/queues/${queue}`);
  await page.getByRole('button', { name: `Delete queue ${queue}` }).click();
  const dialog = page.getByRole('dialog');
  await expect(dialog.getByTestId('dialog-description')).toContainText('3 stored messages');
  await dialog.getByLabel(/Reason/).fill('load test leftovers');
  const confirm = dialog.getByRole('button', { name: 'Delete queue', exact: true });
  await expect(confirm).toBeDisabled();
  await dialog.getByLabel(/to confirm/).fill(queue.slice(0, -1));
  await expect(confirm).toBeDisabled();
  await dialog.getByLabel(/to confirm/).fill(queue);
  await screenshot(page, 'queue-delete');
  await confirm.click();
  await expect(dialog).toBeHidden();
  expect(await sql('select 1 from queen.queues where name = $1', [queue])).toEqual([]);
  const [row] = await sql("select reason, details from queen.audit_log where action = 'queue.delete' and target = $1", [
    queue,
  ]);
  expect(row.reason).toBe('load test leftovers');
  expect(row.details.removed).toMatchObject({ messages: 3 });
  // the page the operator is on becomes the queue's not-found page, naming the delete and its reason
  await expect(page.getByTestId('not-found-audit').filter({ hasText: 'queue.delete' })).toContainText(
    '“load test leftovers”',
  );
});

test('Try push sends the payloads byte-exact, answers per message, and its curl sends the same', async ({
  page,
  baseURL,
}) => {
  const queue = unique('push');
  await page.goto('/console/push');
  await page.getByLabel('Queue', { exact: true }).fill(queue);
  await page.getByLabel('Partition (empty: Default)').fill('p-1');
  const payload = '{"orderId": 12345678901234567891, "amount": 1.10, "note": "it\'s ok"}';
  await page.getByLabel('Payload of message 1').fill(payload);
  await page.getByLabel('transactionId of message 1').fill('order-1');
  await page.getByRole('button', { name: 'Add a message' }).click();
  await page.getByLabel('Payload of message 2').fill('not json');
  await expect(page.getByRole('alert').filter({ hasText: 'message 2' })).toContainText(
    'message 2: the payload is not JSON',
  );
  await expect(page.getByRole('button', { name: 'Push 2 messages' })).toBeDisabled();
  await page.getByLabel('Payload of message 2').fill('[1, 2]');
  const curl = (await page.getByTestId('push-curl').textContent()) ?? '';
  expect(curl).toContain('"orderId":12345678901234567891');
  expect(curl).toContain('"amount":1.10');
  expect(curl).toContain(`curl -sS '${baseURL}/api/v1/push' -H 'content-type: application/json' -d '`);
  await page.getByRole('button', { name: 'Push 2 messages' }).click();
  await expect(page.getByTestId('push-status')).toHaveText('HTTP 201');
  await expect(page.getByTestId('push-results').getByRole('listitem')).toHaveCount(2);
  await expect(page.getByTestId('push-results').getByRole('listitem').first()).toHaveText('queued: order-1');
  await screenshot(page, 'push-console');
  const stored = await sql(
    `select m.transaction_id as tx, m.payload::text as payload from queen.messages m
     join queen.partitions p on p.id = m.partition_id join queen.queues q on q.id = p.queue_id
     where q.name = $1 and p.name = 'p-1' order by m."offset"`,
    [queue],
  );
  expect(stored).toHaveLength(2);
  expect(stored[0]).toEqual({
    tx: 'order-1',
    payload: '{"note": "it\'s ok", "amount": 1.10, "orderId": 12345678901234567891}',
  });
  expect(stored[1].payload).toBe('[1, 2]');
  // the curl, run by a shell, is the same push: order-1 is a duplicate now, the other a new message
  const answer = JSON.parse(execFileSync('sh', ['-c', curl], { encoding: 'utf8' }));
  expect(answer.map((r: any) => r.status)).toEqual(['duplicate', 'queued']);
  await page.getByTestId('push-results').getByRole('link', { name: 'order-1' }).click();
  await expect(page.getByRole('heading', { name: 'order-1', level: 1 })).toBeVisible();
});
