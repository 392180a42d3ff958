// The Dead letters page (filters in the URL, requeue, bulk discard, what the dialogs say), the
// Message page's failed attempts, and the links that lead to messages and dead letters.
import type { APIRequestContext } from '@playwright/test';
import { confirmWithReason, expect, pop, push, screenshot, sql, test } from './support';

const stamp = () => Date.now().toString(36);

/** Pushes `errors.length` messages to `queue`/p and fails message i three times (retryLimit 2) with `${errors[i]} #attempt`. */
async function deadLetters(request: APIRequestContext, queue: string, errors: string[]) {
  await request.post('/api/v1/configure', { data: { queue, options: { retryLimit: 2, retryDelay: 0 } } });
  await request.post('/api/v1/consumer-groups/other/subscription', { data: { queue, subscriptionMode: 'all' } });
  await push(request, queue, 'p', errors.length);
  for (let attempt = 1; attempt <= 3; attempt++) {
    const reply = await pop(request, `/queue/${queue}`, { consumerGroup: 'g', batch: errors.length });
    expect(reply.status).toBe(200);
    const acknowledgments = reply.body.messages.map((m: any) => ({
      transactionId: m.transactionId,
      partitionId: m.partitionId,
      leaseId: m.leaseId,
      status: 'failed',
      error: `${errors[m.data.seq]} #${attempt}`,
    }));
    expect((await request.post('/api/v1/ack/batch', { data: { consumerGroup: 'g', acknowledgments } })).status()).toBe(
      200,
    );
  }
}

const deadCount = async (queue: string, error = '') =>
  (
    await sql<{ n: number }>(
      `select count(*)::int as n from queen.dead_letters d join queen.partitions p on p.id = d.partition_id
    join queen.queues q on q.id = p.queue_id where q.name = $1 and d.error_message ilike '%' || $2 || '%'`,
      [queue, error],
    )
  )[0].n;

test('filter by error text, every attempt on the Message page, retry one for its group only: the dialog says the other group is done with it, the copy reaches the group and not the other', async ({
  page,
  request,
}) => {
  const queue = `e2e.dlq.${stamp()}`;
  await deadLetters(request, queue, ['Timeout calling billing', 'Bad payload', 'Bad payload']);
  // the other group captured all three: a retry of g's dead letter must not make it capture twice
  const other = await pop(request, `/queue/${queue}`, { consumerGroup: 'other', batch: 3 });
  const acknowledgments = other.body.messages.map((m: any) => ({
    transactionId: m.transactionId,
    partitionId: m.partitionId,
    leaseId: m.leaseId,
    status: 'completed',
  }));
  expect(acknowledgments).toHaveLength(3);
  expect(
    (await request.post('/api/v1/ack/batch', { data: { consumerGroup: 'other', acknowledgments } })).status(),
  ).toBe(200);
  await page.goto(`/dead-letters?queue=${queue}`);
  await expect(page.getByTestId('dead-letter-count')).toHaveText(`${await deadCount(queue)} dead letters`);
  await expect(page.getByTestId('dead-letter-count')).toHaveText('3 dead letters');
  await screenshot(page, 'dead-letters');

  await page.getByLabel('Error (contains, any case)').fill('TIMEOUT calling');
  await page.getByLabel('Error (contains, any case)').press('Enter');
  await expect(page).toHaveURL(/error=TIMEOUT/);
  await expect(page.getByTestId('dead-letter-count')).toHaveText(
    `${await deadCount(queue, 'timeout calling')} dead letter`,
  );
  const row = page.getByTestId('dead-letter-p-0');
  await expect(row).toContainText('Timeout calling billing #3');
  await row.locator('summary').click();
  await expect(row.locator('pre')).toContainText('"seq": 0');

  // the row's message link: every failed attempt's error, not only the last
  await row.getByRole('link', { name: 'p-0' }).click();
  await expect(page.getByRole('heading', { name: 'p-0' })).toBeVisible();
  const attempts = page.getByTestId('attempt-errors').locator('tbody tr');
  await expect(attempts).toHaveCount(3);
  for (let i = 1; i <= 3; i++) await expect(attempts.nth(i - 1)).toContainText(`Timeout calling billing #${i}`);
  await page.getByTestId('group-g').getByRole('button', { name: 'Requeue' }).click();
  await expect(page.getByRole('dialog').getByTestId('other-groups')).toHaveText('other: done');
  await page.getByRole('dialog').getByRole('button', { name: 'Cancel' }).click();
  await page.goBack();

  const requeueRow = row.getByRole('button', { name: `Requeue dead letter offset 1 of p/g in ${queue}` });
  await requeueRow.click();
  const dialog = page.getByRole('dialog');
  await expect(dialog.getByTestId('action-description')).toContainText('1 message (1 dead letter in');
  await expect(dialog.getByTestId('action-description')).toContainText('for the group whose dead letter it is only');
  await expect(dialog.getByTestId('action-description')).toContainText(
    `In ${queue}, the other groups do not receive it again (counted as done for them).`,
  );
  await expect(dialog.getByTestId('other-groups')).toHaveText('other: done');
  await dialog.getByRole('button', { name: 'Cancel' }).click();
  await confirmWithReason(page, requeueRow, 'billing is back', 'Requeue');
  await expect(page.getByTestId('announcement')).toContainText(
    'Requeued 1 dead letter as 1 new message. Counted done for other.',
  );
  await expect(page.getByTestId('requeued-copies').getByRole('link', { name: 'p-0.requeue-1' })).toBeVisible();
  await expect(page.getByTestId('dead-letter-count')).toHaveText('0 dead letters');
  // the acted-on row stays where it was, marked, and focus is back near it
  await expect(row.getByTestId('row-mark')).toHaveText('requeued');
  expect(await deadCount(queue)).toBe(2);

  const again = await pop(request, `/queue/${queue}`, { consumerGroup: 'g' });
  expect(again.body.messages.map((m: any) => m.transactionId)).toEqual(['p-0.requeue-1']);
  // the other group never receives the retry: its cursor is past the copy
  expect((await pop(request, `/queue/${queue}`, { consumerGroup: 'other', batch: 10 })).status).toBe(204);
  const [cursor] = await sql<{ committed: number }>(
    `select c.committed_offset::int as committed from queen.cursors c join queen.partitions p on p.id = c.partition_id
     join queen.queues q on q.id = p.queue_id where q.name = $1 and p.name = 'p' and c.consumer_group = 'other'`,
    [queue],
  );
  expect(cursor.committed).toBe(4);
  const [audit] = await sql(
    "select reason, details from queen.audit_log where action = 'dlq.requeue' and details->>'queue' = $1",
    [queue],
  );
  expect(audit).toMatchObject({
    reason: 'billing is back',
    details: { group: 'g', newTransactionId: 'p-0.requeue-1', doneFor: ['other'] },
  });
});

test('bulk discard from select-all, the count links that lead here, and a lease span that leads to its message', async ({
  page,
  request,
}) => {
  const queue = `e2e.dlqbulk.${stamp()}`;
  await deadLetters(request, queue, ['Bad payload', 'Bad payload', 'Schema mismatch']);

  // the Overview's dead-letter count of the queue opens this page filtered to it
  await page.goto('/');
  await page.getByTestId(`queue-row-${queue}`).getByTestId('dead-letters').getByRole('link').click();
  await expect(page).toHaveURL(new RegExp(`/dead-letters\\?queue=${queue.replace(/\./g, '\\.')}`));
  await expect(page.getByTestId('dead-letter-count')).toHaveText('3 dead letters');

  await page.getByLabel('Select every dead letter on this page').check();
  await expect(page.getByTestId('selected-count')).toHaveText('3 selected');
  await page.getByLabel(`Select dead letter offset 3 of p/g in ${queue}`).uncheck();
  await page.getByRole('button', { name: 'Discard selected' }).click();
  await expect(page.getByRole('dialog').getByTestId('action-description')).toHaveText(
    `2 dead letters in ${queue} (2) will be removed for good. The messages stay done for their groups and are not delivered again.`,
  );
  await page.getByRole('dialog').getByRole('button', { name: 'Cancel' }).click();
  await confirmWithReason(page, page.getByRole('button', { name: 'Discard selected' }), 'known bad batch', 'Discard');
  await expect(page.getByTestId('announcement')).toContainText('Discarded 2 dead letters.');
  await expect(page.getByTestId('dead-letter-p-0').getByTestId('row-mark')).toHaveText('discarded');
  await expect(page.getByTestId('dead-letter-count')).toHaveText('1 dead letter');
  expect(await deadCount(queue)).toBe(1);
  await expect(page.getByTestId('dead-letter-p-2')).toBeVisible();

  // every dead letter the filters match, in one action
  await page.getByLabel('Error (contains, any case)').fill('schema');
  await page.getByLabel('Error (contains, any case)').press('Enter');
  await expect(page.getByTestId('dead-letter-count')).toHaveText('1 dead letter');
  await page.getByRole('button', { name: 'Discard all 1 matching' }).click();
  await expect(page.getByRole('dialog').getByTestId('action-description')).toContainText(
    `1 dead letter in ${queue} (1) will be removed for good.`,
  );
  await page.getByRole('dialog').getByRole('button', { name: 'Cancel' }).click();
  expect((await pop(request, `/queue/${queue}`, { consumerGroup: 'g' })).status).toBe(204); // discarded stays done

  // the Message page discards a group's dead letter too
  await page.getByRole('link', { name: 'p-2' }).click();
  await confirmWithReason(
    page,
    page.getByTestId('group-g').getByRole('button', { name: 'Discard' }),
    'schema fixed upstream',
    'Discard',
  );
  await expect(page.getByTestId('group-g')).toContainText('done');
  expect(await deadCount(queue)).toBe(0);

  // a lease's span, on the Leases page and on the queue page, leads to its first message
  const held = await pop(request, `/queue/${queue}`, { consumerGroup: 'other', batch: 2 });
  expect(held.status).toBe(200);
  await page.goto(`/leases?queue=${queue}`);
  await page.getByRole('link', { name: 'First message of span 1–2 on p/other' }).click();
  await expect(page.getByRole('heading', { name: 'p-0' })).toBeVisible();
  await page.goto(`/queues/${queue}?group=other`);
  await page.getByRole('link', { name: 'First message of span 1–2 on p/other' }).click();
  await expect(page.getByRole('heading', { name: 'p-0' })).toBeVisible();
});

test('after a requeue and a discard, the Overview, the queue page and the Dead letters page show the dead letters that exist', async ({
  page,
  request,
}) => {
  const queue = `e2e.dlqfig.${stamp()}`;
  await deadLetters(request, queue, ['Bad payload', 'Bad payload', 'Bad payload', 'Bad payload']);
  const dead = (await (await request.get(`/api/v1/dlq?queue=${queue}`)).json()).messages.map((d: any) => ({
    partitionId: d.partitionId,
    consumerGroup: 'g',
    offset: d.offset,
  }));
  expect((await request.post('/api/v1/dlq/requeue', { data: { items: [dead[0]], reason: 'fixed' } })).status()).toBe(
    200,
  );
  expect((await request.post('/api/v1/dlq/discard', { data: { items: [dead[1]], reason: 'poison' } })).status()).toBe(
    200,
  );
  const existing = await deadCount(queue);
  expect(existing).toBe(2);

  await page.goto('/');
  await expect(page.getByTestId(`queue-row-${queue}`).getByTestId('dead-letters')).toHaveText(String(existing));
  await page.goto(`/queues/${queue}?group=g`);
  const rowFigure = page.getByRole('link', { name: `Dead letters of p/g on ${queue}` });
  await expect(rowFigure).toHaveText(String(existing));
  await rowFigure.click();
  await expect(page).toHaveURL(/\/dead-letters\?queue=.*&partition=p&group=g/);
  await expect(page.getByTestId('dead-letter-count')).toHaveText(`${existing} dead letters`);
  // each row's actions have their own names
  await page.goto(`/dead-letters?queue=${queue}`);
  const names = await page
    .locator('tbody')
    .getByRole('button')
    .evaluateAll((buttons) => buttons.map((b) => b.getAttribute('aria-label')));
  expect(names).toHaveLength(4);
  expect(new Set(names).size).toBe(4);
});

test('Live: a requeue and an expired lease link to their messages', async ({ page, request }) => {
  const queue = `e2e.dlqlive.${stamp()}`;
  await deadLetters(request, queue, ['Bad payload']);
  await page.goto(`/live?queue=${queue}`);
  await expect(page.getByTestId('feed-status')).toContainText('live');
  const [d] = (await (await request.get(`/api/v1/dlq?queue=${queue}`)).json()).messages;
  const requeue = await request.post('/api/v1/dlq/requeue', {
    data: { items: [{ partitionId: d.partitionId, consumerGroup: 'g', offset: d.offset }], reason: 'retry' },
  });
  expect(requeue.status()).toBe(200);
  await expect(page.getByTestId('event-requeue')).toContainText(`1 dead letter(s) of ${queue} requeued`);
  await expect(page.getByTestId('event-requeue').getByRole('link', { name: 'p-0.requeue-1' })).toHaveAttribute(
    'href',
    `/messages/${d.partitionId}/p-0.requeue-1`,
  );

  expect((await pop(request, `/queue/${queue}`, { consumerGroup: 'g', leaseSeconds: 1 })).status).toBe(200);
  const expiry = page.getByTestId('event-expiry');
  await expect(expiry).toBeVisible({ timeout: 10_000 });
  await expiry.getByRole('link', { name: 'span 2–2' }).click();
  await expect(page.getByRole('heading', { name: 'p-0.requeue-1' })).toBeVisible();
});

test('pages with the shared Previous/Next; a requeue that meets a message gone counts no new message for it', async ({
  page,
  request,
}) => {
  const queue = `e2e.dlqgone.${stamp()}`;
  await request.post('/api/v1/configure', { data: { queue, options: { retryLimit: 2, retryDelay: 0 } } });
  await push(request, queue, 'p', 52);
  // 52 dead letters of group g, by the same insert an ack does
  await sql(
    `insert into queen.dead_letters (partition_id, consumer_group, "offset", error_message, retry_count)
    select m.partition_id, 'g', m."offset", 'Bad payload', 3 from queen.messages m join queen.partitions p on p.id = m.partition_id
    join queen.queues q on q.id = p.queue_id where q.name = $1`,
    [queue],
  );
  const listed = async () => (await (await request.get(`/api/v1/dlq?queue=${queue}&limit=1`)).json()).pagination.total;
  await page.goto(`/dead-letters?queue=${queue}`);
  await expect(page.getByTestId('dead-letter-count')).toHaveText(`${await listed()} dead letters`);
  await expect(page.getByTestId('dead-letter-range')).toHaveText('1–50');
  await expect(page.getByRole('button', { name: 'Previous' })).toBeDisabled();
  await page.getByRole('button', { name: 'Next' }).click();
  await expect(page).toHaveURL(/page=2/);
  await expect(page.getByTestId('dead-letter-range')).toHaveText('51–52');
  await expect(page.getByRole('button', { name: 'Next' })).toBeDisabled();

  // one message goes behind the broker's back, leaving its dead letter no copy (as before copies
  // were kept, sql/021): the dead letter is no longer listed, and a requeue keeps it
  await sql('alter table queen.messages disable trigger messages_leave_what_outlives_them');
  await sql(
    `delete from queen.messages m using queen.partitions p, queen.queues q
    where p.id = m.partition_id and q.id = p.queue_id and q.name = $1 and m.transaction_id = 'p-0'`,
    [queue],
  );
  await sql('alter table queen.messages enable trigger messages_leave_what_outlives_them');
  await page.goto(`/dead-letters?queue=${queue}&error=payload`);
  await expect(page.getByTestId('dead-letter-count')).toHaveText(`${await listed()} dead letters`);
  await expect(page.getByTestId('dead-letter-count')).toHaveText('51 dead letters');
  await confirmWithReason(
    page,
    page.getByRole('button', { name: 'Requeue all 51 matching' }),
    'consumer fixed',
    'Requeue',
  );
  await expect(page.getByTestId('announcement')).toContainText(
    'Requeued 51 dead letters as 51 new messages. 1 dead letter kept: the message no longer exists (discard it instead).',
  );
  expect(
    await sql(
      `select 1 from queen.dead_letters d join queen.partitions p on p.id = d.partition_id join queen.queues q on q.id = p.queue_id
    where q.name = $1`,
      [queue],
    ),
  ).toHaveLength(1);
});
