// Issue 34: configure and delete a queue from its page (admin, a reason, audited), and push
// messages from the console with the curl that sends the same bytes.
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
