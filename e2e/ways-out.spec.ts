// Issue 20's journeys, each counting the clicks it takes: the audit's first row is the action just
// taken, a poison message moved out and the next one delivered, a dead holder's leases released at
// once; every figure checked against the database.
import { clickCounter, expect, push, screenshot, sql, test } from './support';

const unique = (name: string) => `e2e.out.${name}.${Date.now().toString(36)}`;

test("after 1,200 earlier entries, the audit's first row is the release just made", async ({ page, request }) => {
  await sql(`insert into queen.audit_log (actor, action, target_type, target, result, at)
    select 'seed', 'cursor.pause', 'cursor', 'seed-' || n, 'ok', now() - make_interval(secs => 2000 - n) from generate_series(1, 1200) n`);
  const queue = unique('audit');
  await push(request, queue, 'p', 2);
  const { leaseId } = await (await request.get(`/api/v1/pop/queue/${queue}?consumerGroup=g&leaseSeconds=120`)).json();

  const { click, count } = clickCounter();
  await page.goto(`/leases?queue=${queue}`);
  await click(page.getByRole('button', { name: `Force release lease ${leaseId} on p/g` }));
  await page
    .getByRole('dialog')
    .getByLabel(/Reason/)
    .fill('audit journey');
  await click(page.getByRole('dialog').getByRole('button', { name: 'Release', exact: true }));
  await page.getByRole('dialog').waitFor({ state: 'hidden' });
  await click(page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Audit' }));
  const first = page.getByTestId('audit-entry').first();
  await expect(first).toContainText('lease.release');
  await expect(first).toContainText(leaseId);
  await expect(first).toContainText('audit journey');
  expect(count()).toBeLessThanOrEqual(3);

  // paged from the newest: the next page goes on where this one ended, down to the seeds
  const [{ newest }] = await sql('select target as newest from queen.audit_log order by at desc, id desc limit 1');
  expect(newest).toBe(leaseId);
  await expect(page.getByTestId('audit-entry')).toHaveCount(100);
  const lastOnFirst = await page.getByTestId('audit-entry').last().locator('td').nth(3).textContent();
  await page.getByTestId('audit-pages').getByRole('button', { name: 'Older' }).click();
  await expect(page).toHaveURL(/before=/);
  const [{ expected }] = await sql(
    'select target as expected from queen.audit_log order by at desc, id desc offset 100 limit 1',
  );
  await expect(page.getByTestId('audit-entry').first().locator('td').nth(3)).toHaveText(expected);
  expect(expected).not.toBe(lastOnFirst);
});

test('a poison message its stuck lease sits on is moved to the dead letters in 2 clicks, and the next pop delivers the next one', async ({
  page,
  request,
}) => {
  const queue = unique('poison');
  await push(request, queue, 'p', 3);
  const first = await (
    await request.get(`/api/v1/pop/queue/${queue}?consumerGroup=g&batch=1&leaseSeconds=300`, {
      headers: { 'x-queen-consumer': 'crashing-worker' },
    })
  ).json();
  // it crashed its consumer twice already: expired and redelivered
  await sql(`update queen.message_attempts set deliveries = 4 where partition_id = $1`, [first.partitionId]);
  await sql(
    `insert into queen.message_attempts (partition_id, consumer_group, "offset", deliveries) values ($1, 'g', 1, 4) on conflict do nothing`,
    [first.partitionId],
  );

  const { click, count } = clickCounter();
  await page.goto(`/leases?queue=${queue}&state=stuck`);
  await click(page.getByRole('button', { name: 'Move offset 1 of p/g to the dead letters' }));
  const dialog = page.getByRole('dialog');
  await expect(dialog.getByTestId('set-aside-description')).toContainText('crashing-worker');
  await dialog.getByLabel(/Reason/).fill('crashes the consumer');
  await screenshot(page, 'set-aside');
  await click(dialog.getByRole('button', { name: 'Move to dead letters', exact: true }));
  await dialog.waitFor({ state: 'hidden' });
  await expect(page.getByTestId('announcement')).toContainText('the next pop starts at 2');
  expect(count()).toBeLessThanOrEqual(3);

  const next = await (await request.get(`/api/v1/pop/queue/${queue}?consumerGroup=g&batch=1`)).json();
  expect(next.messages[0].transactionId).toBe('p-1');
  const dead = await sql(
    'select "offset"::int from queen.dead_letters where partition_id = $1 and consumer_group = $2',
    [first.partitionId, 'g'],
  );
  expect(dead).toEqual([{ offset: 1 }]);
  // the holder's ack of the rest of its old lease would be refused: the lease is gone
  expect(await sql('select 1 from queen.cursors where lease_id = $1', [first.leaseId])).toHaveLength(0);
});

test('from its Message page, a poison message is skipped in 2 clicks and its deliveries say who got it and how each ended', async ({
  page,
  request,
}) => {
  const queue = unique('msg');
  await push(request, queue, 'p', 2);
  const one = await (
    await request.get(`/api/v1/pop/queue/${queue}?consumerGroup=g&batch=1&leaseSeconds=300`, {
      headers: { 'x-queen-consumer': 'w-1' },
    })
  ).json();
  await request.post(`/api/v1/leases/${one.leaseId}/release`, { data: { reason: 'hung' } });
  const two = await (
    await request.get(`/api/v1/pop/queue/${queue}?consumerGroup=g&batch=1&leaseSeconds=300`, {
      headers: { 'x-queen-consumer': 'w-2' },
    })
  ).json();

  const { click, count } = clickCounter();
  await page.goto(`/messages/${one.partitionId}/p-0`);
  const deliveries = page.getByTestId('delivery');
  const [{ n }] = await sql(
    'select count(*)::int as n from queen.deliveries where partition_id = $1 and from_offset <= 1 and to_offset >= 1',
    [one.partitionId],
  );
  await expect(deliveries).toHaveCount(n);
  await expect(deliveries.nth(0)).toContainText('w-2');
  await expect(deliveries.nth(0).getByTestId('delivery-ended')).toHaveText('live');
  await expect(deliveries.nth(1).getByTestId('delivery-ended')).toContainText('released');
  await click(page.getByRole('button', { name: 'Skip offset 1 of p/g' }));
  await page
    .getByRole('dialog')
    .getByLabel(/Reason/)
    .fill('poison');
  await click(page.getByRole('dialog').getByRole('button', { name: 'Skip', exact: true }));
  await expect(page.getByTestId('group-g')).toContainText('done', { timeout: 5000 });
  await expect(deliveries.nth(0).getByTestId('delivery-ended')).toContainText('skipped');
  await screenshot(page, 'message-deliveries');
  expect(count()).toBeLessThanOrEqual(3);

  const next = await (await request.get(`/api/v1/pop/queue/${queue}?consumerGroup=g&batch=1`)).json();
  expect(next.messages[0].transactionId).toBe('p-1');
  expect(two.leaseId).not.toBe(next.leaseId);
  const [audit] = await sql(
    "select reason, details->>'leaseId' as lease from queen.audit_log where action = 'message.skip' order by id desc limit 1",
  );
  expect(audit).toEqual({ reason: 'poison', lease: two.leaseId });
});

test("a dead holder's 10 leases are released in 2 clicks with one reason, from Consumers", async ({
  page,
  request,
}) => {
  const queue = unique('dead');
  const holder = `dead-${Date.now().toString(36)}`;
  for (let i = 0; i < 10; i++) {
    await push(request, queue, `p${i}`, 2);
    await request.get(`/api/v1/pop/queue/${queue}/partition/p${i}?consumerGroup=g&leaseSeconds=600`, {
      headers: { 'x-queen-consumer': holder },
    });
  }
  const { click, count } = clickCounter();
  await page.goto('/consumers');
  await click(page.getByRole('button', { name: `Release every lease of ${holder}` }));
  const dialog = page.getByRole('dialog');
  await expect(dialog.getByTestId('bulk-release-item')).toHaveCount(10);
  await expect(dialog.getByTestId('bulk-release-count')).toHaveText('10 leases');
  await dialog.getByLabel(/Reason/).fill(`${holder} died`);
  await screenshot(page, 'bulk-release');
  await click(dialog.getByRole('button', { name: 'Release 10 leases', exact: true }));
  await dialog.waitFor({ state: 'hidden' });
  await expect(page.getByTestId('announcement')).toContainText('Released 10 leases');
  expect(count()).toBeLessThanOrEqual(3);
  expect(await sql('select 1 from queen.cursors where lease_holder = $1', [holder])).toHaveLength(0);
  // one operator action, one audit row, its 10 leases inside it (issue 34)
  const audits = await sql(
    "select jsonb_array_length(details->'leaseIds') as n from queen.audit_log where action = 'lease.release' and reason = $1",
    [`${holder} died`],
  );
  expect(audits).toEqual([{ n: 10 }]);
});

test("on the Leases page, a holder's leases are released whole or a selection of them, with one confirmation listing them", async ({
  page,
  request,
}) => {
  const queue = unique('select');
  const holder = `sel-${Date.now().toString(36)}`;
  for (let i = 0; i < 4; i++) {
    await push(request, queue, `p${i}`, 1);
    await request.get(`/api/v1/pop/queue/${queue}/partition/p${i}?consumerGroup=g&leaseSeconds=600`, {
      headers: { 'x-queen-consumer': holder },
    });
  }
  await page.goto(`/leases?queue=${queue}`);
  await page.getByRole('checkbox', { name: /on p0\/g/ }).check();
  await page.getByRole('checkbox', { name: /on p2\/g/ }).check();
  await page.getByRole('button', { name: 'Release selected (2)' }).click();
  const dialog = page.getByRole('dialog');
  await expect(dialog.getByTestId('bulk-release-item')).toHaveCount(2);
  await expect(dialog.getByTestId('bulk-release-item').first()).toContainText(`${queue} / p0`);
  await dialog.getByLabel(/Reason/).fill('two of them');
  await dialog.getByRole('button', { name: 'Release 2 leases', exact: true }).click();
  await dialog.waitFor({ state: 'hidden' });
  await expect(page.getByTestId('row-mark')).toHaveCount(2);
  const [{ n }] = await sql('select count(*)::int as n from queen.cursors where lease_holder = $1', [holder]);
  expect(n).toBe(2);

  await page.goto(`/leases?queue=${queue}&holderIs=${holder}`);
  await page.getByRole('button', { name: `Release every lease of holder ${holder}` }).click();
  await expect(dialog.getByTestId('bulk-release-item')).toHaveCount(2);
  await dialog.getByLabel(/Reason/).fill('the rest');
  await dialog.getByRole('button', { name: 'Release 2 leases', exact: true }).click();
  await dialog.waitFor({ state: 'hidden' });
  expect(await sql('select 1 from queen.cursors where lease_holder = $1', [holder])).toHaveLength(0);
});
