// Issue 34, item 6: the pages the anchors have and this dashboard lacked. Every figure checked
// here is compared with a count the test reads from the database itself.
import pg from 'pg';
import { clickCounter, expect, push, screenshot, sql, test } from './support';

const unique = (name: string) => `e2e.anchor.${name}.${Date.now().toString(36)}`;

test('the System page shows an open transaction, connections by state as PostgreSQL counts them, and this instance', async ({
  page,
}) => {
  const app = `e2e-open-${Date.now().toString(36)}`;
  const client = new pg.Client({ connectionString: process.env.E2E_DATABASE_URL, application_name: app });
  await client.connect();
  try {
    await client.query('begin');
    await client.query('select 42');
    const { click } = clickCounter();
    await page.goto('/');
    await click(page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'System' }));
    await expect(page).toHaveURL(/\/system$/);
    await expect(page.getByTestId('transaction').filter({ hasText: app })).toContainText('idle in transaction');
    await expect(async () => {
      const rows = await sql<{ state: string | null; n: number }>(
        'select state, count(*)::int as n from pg_stat_activity where datname = current_database() group by state',
      );
      const shown = await page.getByTestId('connection-state').allInnerTexts();
      const idle = rows.find((r) => r.state === 'idle in transaction')?.n;
      expect(shown.find((t) => t.startsWith('idle in transaction'))).toBe(`idle in transaction\t${idle}`);
    }).toPass();
    const [{ autovacuum }] = await sql("select current_setting('autovacuum') as autovacuum");
    await expect(page.getByTestId('autovacuum')).toHaveText(autovacuum);
    const [{ n }] = await sql(
      "select count(*)::int as n from queen.instances where seen_at > now() - interval '30 seconds'",
    );
    await expect(page.getByTestId('instance')).toHaveCount(n);
    await screenshot(page, 'system');
  } finally {
    await client.end();
  }
});

test('the message browser finds a message by payload text, and its status per group equals the cursor', async ({
  page,
  request,
}) => {
  const queue = unique('browse');
  const needle = `needle-${Date.now().toString(36)}`;
  const items = Array.from({ length: 6 }, (_, i) => ({
    queue,
    partition: 'p0',
    payload: { seq: i, note: i % 2 === 0 ? `order ${needle.toUpperCase()}` : 'other' },
    transactionId: `b-${i}`,
  }));
  expect((await request.post('/api/v1/push', { data: { items } })).status()).toBe(201);
  // group g takes and acks the first two: b-0 and b-1 are done for g, the rest pending
  const popped = await request.get(`/api/v1/pop/queue/${queue}?consumerGroup=g&batch=2`);
  const { messages } = await popped.json();
  await request.post('/api/v1/ack/batch', {
    data: {
      consumerGroup: 'g',
      acknowledgments: messages.map((m: any) => ({ ...m, status: 'completed' })),
    },
  });

  const { click, count } = clickCounter();
  await page.goto('/');
  await click(page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Messages' }));
  await page.getByLabel('Payload text (contains, any case)').fill(needle);
  await page.getByLabel('Payload text (contains, any case)').press('Enter');
  await page.getByLabel('Queue (exact name)').fill(queue);
  await page.getByLabel('Queue (exact name)').press('Enter');
  await page.getByLabel('Group (exact name)').fill('g');
  await page.getByLabel('Group (exact name)').press('Enter');
  await expect(page).toHaveURL(new RegExp(`q=${needle}`));
  const [{ n }] = await sql(
    `select count(*)::int as n from queen.messages m join queen.partitions p on p.id = m.partition_id
     join queen.queues q on q.id = p.queue_id where q.name = $1 and m.payload::text ilike $2`,
    [queue, `%${needle}%`],
  );
  expect(n).toBe(3);
  const rows = page.getByTestId('browsed-message');
  await expect(rows).toHaveCount(n);
  await expect(rows.filter({ hasText: 'b-0' }).getByTestId('message-status')).toHaveText('done');
  await expect(rows.filter({ hasText: 'b-2' }).getByTestId('message-status')).toHaveText('pending');
  await screenshot(page, 'messages');
  // status done for g: exactly the messages at or below g's committed offset among the matches
  await page.getByLabel('Status').selectOption('completed');
  const [{ done }] = await sql(
    `select count(*)::int as done from queen.messages m join queen.cursors c on c.partition_id = m.partition_id and c.consumer_group = 'g'
     join queen.partitions p on p.id = m.partition_id join queen.queues q on q.id = p.queue_id
     where q.name = $1 and m.payload::text ilike $2 and m."offset" <= c.committed_offset`,
    [queue, `%${needle}%`],
  );
  await expect(rows).toHaveCount(done);
  await click(rows.first().getByRole('link', { name: 'b-0' }));
  await expect(page).toHaveURL(/\/messages\/[0-9a-f-]+\/b-0$/);
  expect(count()).toBe(2);
  // a malformed time says what is wrong and lists nothing
  await page.goto(`/messages?queue=${queue}&from=yesterday`);
  await expect(page.getByText('from: must be an ISO-8601')).toBeVisible();
  await expect(page.getByTestId('browsed-message')).toHaveCount(0);
});

test('dead letters grouped by error: counts equal the database, and one group is requeued in one action, audited', async ({
  page,
  request,
}) => {
  const queue = unique('dlq');
  await request.post('/api/v1/configure', { data: { queue, options: { retryLimit: 0 } } });
  await push(request, queue, 'p0', 5);
  const popped = await (await request.get(`/api/v1/pop/queue/${queue}?consumerGroup=g&batch=5`)).json();
  const acks = popped.messages.map((m: any, i: number) => ({
    transactionId: m.transactionId,
    partitionId: m.partitionId,
    leaseId: m.leaseId,
    status: 'failed',
    error: i < 3 ? 'timeout talking to payments' : 'schema: missing field amount',
  }));
  expect(
    (await request.post('/api/v1/ack/batch', { data: { consumerGroup: 'g', acknowledgments: acks } })).status(),
  ).toBe(200);
  const counts = await sql<{ error: string; n: number }>(
    `select d.error_message as error, count(*)::int as n from queen.dead_letters d join queen.partitions p on p.id = d.partition_id
     join queen.queues q on q.id = p.queue_id where q.name = $1 group by 1 order by 2 desc`,
    [queue],
  );
  expect(counts).toEqual([
    { error: 'timeout talking to payments', n: 3 },
    { error: 'schema: missing field amount', n: 2 },
  ]);

  const { click, count } = clickCounter();
  await page.goto(`/dead-letters?queue=${queue}`);
  await click(page.getByRole('link', { name: 'Grouped by error' }));
  await page.getByLabel('Queue (exact name)').fill(queue);
  await page.getByLabel('Queue (exact name)').press('Enter');
  const groups = page.getByTestId('error-group');
  await expect(groups).toHaveCount(2);
  for (const [i, c] of counts.entries()) {
    await expect(groups.nth(i).getByTestId('error-text')).toHaveText(c.error);
    await expect(groups.nth(i).getByTestId('error-count')).toHaveText(String(c.n));
  }
  await screenshot(page, 'dead-letters-by-error');
  await click(groups.first().getByRole('button', { name: /Requeue the 3 dead letters failed with/ }));
  const dialog = page.getByRole('dialog');
  await expect(dialog.getByTestId('action-description')).toContainText('3 messages');
  await dialog.getByLabel(/Reason/).fill('payments is back');
  await click(dialog.getByRole('button', { name: 'Requeue', exact: true }));
  await expect(dialog).toBeHidden();
  expect(count()).toBe(3);
  await expect(groups).toHaveCount(1);
  const left = await sql(
    `select count(*)::int as n from queen.dead_letters d join queen.partitions p on p.id = d.partition_id
     join queen.queues q on q.id = p.queue_id where q.name = $1`,
    [queue],
  );
  expect(left[0].n).toBe(2);
  // one audit row for the operator's action, listing the 3 dead letters it requeued (sql/functions/dead_letters.sql)
  const audit = await sql(
    `select a.target, a.details from queen.audit_log a where a.action = 'dlq.requeue' and a.reason = 'payments is back'
     and a.details->>'queue' = $1`,
    [queue],
  );
  expect(audit).toHaveLength(1);
  expect(audit[0].target).toBe('3 dead letters');
  expect(audit[0].details.partitions.map((p: any) => p.transactionId).sort()).toEqual(
    popped.messages
      .slice(0, 3)
      .map((m: any) => m.transactionId)
      .sort(),
  );
  // the Audit page links the row to each message it requeued
  await page.goto(`/audit?queue=${encodeURIComponent(queue)}`);
  const entry = page.getByRole('row').filter({ hasText: 'payments is back' });
  await expect(entry).toHaveCount(1);
  await expect(entry).toContainText('3 dead letters');
  await expect(
    entry.getByRole('link', { name: new RegExp(`^${queue.replace(/\./g, '\\.')} / .* @\\d+$`) }),
  ).toHaveCount(3);
});

test("Consumers shows a holder's address, user agent and pops as the server recorded them", async ({
  page,
  request,
}) => {
  const queue = unique('client');
  const holder = `client-${Date.now().toString(36)}`;
  await push(request, queue, 'p0', 2);
  const headers = { 'x-queen-consumer': holder, 'user-agent': 'queen-client-py/0.14' };
  await request.get(`/api/v1/pop/queue/${queue}?consumerGroup=g&batch=2&leaseSeconds=600`, { headers });
  await request.get(`/api/v1/pop/queue/${queue}?consumerGroup=g&batch=2`, { headers }); // empty: the first holds both
  await page.goto('/consumers');
  const row = page.getByTestId(`consumer-row-${holder}`);
  await expect(row.getByTestId('client')).toContainText('queen-client-py/0.14', { timeout: 15_000 });
  const [{ pops, empty }] = await sql(
    `select sum(pops)::int as pops, sum(empty_pops)::int as empty from queen.holder_clients
     where holder = $1 and minute >= date_trunc('minute', now()) - interval '4 minutes'`,
    [holder],
  );
  expect(pops).toBe(2);
  await expect(row.getByTestId('pops')).toHaveText(String(pops));
  await expect(row.getByTestId('client')).toContainText(`(${empty} empty)`);
  await expect(row.getByTestId('client')).toContainText('127.0.0.1');
});

test('one message is deleted from its page: admin, a reason, a confirmation naming it, an audit row', async ({
  page,
  request,
}) => {
  const queue = unique('delete');
  await push(request, queue, 'p0', 3);
  const [{ pid }] = await sql(
    'select p.id as pid from queen.partitions p join queen.queues q on q.id = p.queue_id where q.name = $1 and p.name = $2',
    [queue, 'p0'],
  );
  const { click, count } = clickCounter();
  await page.goto(`/messages/${pid}/p0-1`);
  await click(page.getByRole('button', { name: `Delete message p0-1 of ${queue}/p0` }));
  const dialog = page.getByRole('dialog');
  await expect(dialog.getByTestId('dialog-description')).toContainText(`p0-1 of ${queue}/p0`);
  await dialog.getByLabel(/Reason/).fill('leaked a card number');
  await click(dialog.getByRole('button', { name: 'Delete', exact: true }));
  await expect(page).toHaveURL(new RegExp(`/queues/${queue.replace(/\./g, '\\.')}`));
  expect(count()).toBe(2);
  const left = await sql('select transaction_id as tx from queen.messages where partition_id = $1 order by 1', [pid]);
  expect(left.map((r) => r.tx)).toEqual(['p0-0', 'p0-2']);
  const audit = await sql("select reason from queen.audit_log where action = 'message.delete' and target = $1", [
    `${pid}/p0-1`,
  ]);
  expect(audit).toEqual([{ reason: 'leaked a card number' }]);
});
