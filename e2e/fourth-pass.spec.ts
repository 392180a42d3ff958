// Issue 34's journeys: a way out that wins the race against a consumer re-claiming its poison,
// a complete trail of queue changes, signals that are right, and pages that say what is missing.
// Clicks are counted where the journey is the point; every figure is checked against the database.
import { clickCounter, expect, push, screenshot, sql, test } from './support';

const unique = (name: string) => `e2e.fourth.${name}.${Date.now().toString(36)}`;

test('a poison message a consumer re-claims every 2–5 s goes to the dead letters in 3 clicks, after 30 s in the dialog', async ({
  page,
  request,
}) => {
  test.setTimeout(120_000);
  const queue = unique('race');
  await push(request, queue, 'p', 3);
  // the crash loop: claims the poison with a 2 s lease, dies, and a restarted one claims it again 2–5 s later
  let stop = false;
  let n = 0;
  const claim = () =>
    request.get(`/api/v1/pop/queue/${queue}?consumerGroup=g&batch=1&leaseSeconds=2`, {
      headers: { 'x-queen-consumer': `crash-loop-${++n}` },
    });
  await claim();
  const loop = (async () => {
    while (!stop) {
      await new Promise((r) => setTimeout(r, 2000 + Math.random() * 3000));
      if (!stop) await claim();
    }
  })();
  try {
    const { click, count } = clickCounter();
    await page.goto(`/leases?queue=${queue}`);
    await click(page.getByRole('button', { name: 'Move offset 1 of p/g to the dead letters' }));
    const dialog = page.getByRole('dialog');
    await dialog.getByLabel(/Reason/).fill('crash loop');
    await page.waitForTimeout(30_000); // the operator reads, asks in the channel, decides
    const confirm = dialog.getByRole('button', { name: 'Move to dead letters', exact: true });
    await click(confirm);
    // the lease seen at opening is long gone: the dialog shows what holds it now, and holds it there
    await expect(dialog.getByTestId('set-aside-current')).toContainText('crash-loop-');
    await expect(dialog.getByTestId('set-aside-current')).toContainText('held');
    const [held] = await sql(
      `select c.paused, c.lease_holder as holder from queen.cursors c join queen.partitions p on p.id = c.partition_id
       join queen.queues q on q.id = p.queue_id where q.name = $1 and c.consumer_group = 'g'`,
      [queue],
    );
    expect(held.paused).toBe(true);
    await expect(dialog.getByTestId('set-aside-current-holder')).toHaveText(held.holder);
    await screenshot(page, 'set-aside-held');
    await page.waitForTimeout(6000); // the crash loop tries again meanwhile: the hold keeps it off
    await click(confirm);
    await dialog.waitFor({ state: 'hidden' });
    await expect(page.getByTestId('announcement')).toContainText(`lease of ${held.holder} ended`);
    expect(count()).toBeLessThanOrEqual(3);
  } finally {
    stop = true;
    await loop;
  }
  const rows = await sql(
    `select c.paused, c.committed_offset::int as committed, (select count(*)::int from queen.dead_letters d
       where d.partition_id = c.partition_id and d.consumer_group = 'g' and d."offset" = 1) as dead
     from queen.cursors c join queen.partitions p on p.id = c.partition_id join queen.queues q on q.id = p.queue_id
     where q.name = $1 and c.consumer_group = 'g'`,
    [queue],
  );
  // out, the hold lifted, and the group goes on with the next message
  expect(rows[0].dead).toBe(1);
  expect(rows[0].paused).toBe(false);
  expect(rows[0].committed).toBeGreaterThanOrEqual(1);
  const actions = await sql(`select action, result from queen.audit_log where details->>'queue' = $1 order by id`, [
    queue,
  ]);
  expect(actions).toEqual([
    { action: 'cursor.pause', result: 'held' },
    { action: 'message.dead_letter', result: 'dead-lettered' },
  ]);
});

test("a deleted queue's page says who deleted it, when, why and what went with it, with search and the audit", async ({
  page,
  request,
}) => {
  const queue = unique('gone');
  await push(request, queue, 'p', 4);
  await request.get(`/api/v1/pop/queue/${queue}?consumerGroup=billing&batch=2&leaseSeconds=300`);
  const [before] = await sql(
    `select (select count(*)::int from queen.messages m join queen.partitions p on p.id = m.partition_id where p.queue_id = q.id) as messages,
            (select count(*)::int from queen.cursors c where c.queue_id = q.id and c.lease_id is not null) as leases
     from queen.queues q where q.name = $1`,
    [queue],
  );
  const res = await request.delete(`/api/v1/resources/queues/${queue}?reason=${encodeURIComponent('moved to v2')}`, {
    headers: { 'x-queen-actor': 'carol' },
  });
  expect(res.status()).toBe(200);

  const response = await page.goto(`/queues/${queue}`);
  expect(response?.status()).toBe(404);
  await expect(page.getByRole('heading', { level: 1 })).toHaveText(`No queue named ${queue}`);
  const entry = page.getByTestId('not-found-audit').first();
  await expect(entry).toContainText('queue.delete by carol');
  await expect(entry).toContainText('moved to v2');
  await expect(entry.getByTestId('not-found-removed')).toContainText(
    `removed 1 partition, ${before.messages} messages, 0 dead letters, ${before.leases} lease held; groups billing (lag 4)`,
  );
  await screenshot(page, 'queue-not-found');
  await expect(page.getByRole('search').getByLabel('Search again')).toHaveValue(queue);
  await page.getByRole('link', { name: 'Every audit entry of it' }).click();
  await expect(page).toHaveURL(new RegExp(`/audit\\?queue=${queue.replace(/\./g, '\\.')}`));
  await expect(page.getByTestId('audit-entry').first()).toContainText('queue.delete');
});

test('a missing partition, message and offset and a malformed id each say what is missing', async ({
  page,
  request,
}) => {
  const queue = unique('missing');
  await push(request, queue, 'p', 1);
  const [{ id }] = await sql(
    'select p.id from queen.partitions p join queen.queues q on q.id = p.queue_id where q.name = $1',
    [queue],
  );
  const cases: [string, string, RegExp][] = [
    [`/queues/${queue}/partitions/nope`, `No partition nope in queue ${queue}`, /has no partition named nope/],
    [`/queues/nosuch.${queue}/partitions/p`, `No partition p in queue nosuch.${queue}`, /does not exist, so neither/],
    [`/messages/${id}/p-404`, 'No message p-404', /holds no message with transaction id p-404/],
    [`/messages/${id}/at/99`, 'No message at offset 99', /holds no message at offset 99/],
    [`/messages/${id}/at/x1`, 'x1 is not an offset', /whole number/],
    ['/messages/not-a-uuid/p-0', 'not-a-uuid is not a partition id', /is a UUID/],
  ];
  for (const [path, heading, words] of cases) {
    const response = await page.goto(path);
    expect(response?.status(), path).toBe(404);
    await expect(page.getByRole('heading', { level: 1 })).toHaveText(heading);
    await expect(page.getByTestId('not-found-what')).toHaveText(words);
    await expect(page.getByRole('link', { name: 'Every audit entry of it' })).toBeVisible();
  }
});

test('the queue page offers a way out only on a cursor that looks stuck, not on every one with messages pending', async ({
  page,
  request,
}) => {
  const queue = unique('calm');
  for (const p of ['busy', 'stuck', 'idle']) await push(request, queue, p, 2);
  const lease = (p: string) =>
    request
      .get(`/api/v1/pop/queue/${queue}/partition/${p}?consumerGroup=g&batch=1&leaseSeconds=300`)
      .then((r) => r.json());
  await lease('busy'); // a healthy holder at work
  const stuck = await lease('stuck');
  await sql(`update queen.cursors set lease_expires_at = now() - interval '1 minute' where lease_id = $1`, [
    stuck.leaseId,
  ]);
  const idle = await lease('idle'); // done with its first, its second waits for the next pop
  await request.post('/api/v1/ack', {
    data: {
      transactionId: idle.messages[0].transactionId,
      partitionId: idle.messages[0].partitionId,
      leaseId: idle.leaseId,
      consumerGroup: 'g',
    },
  });
  await page.goto(`/queues/${queue}`);
  await expect(page.getByRole('button', { name: 'Move offset 1 of stuck/g to the dead letters' })).toBeVisible();
  const offered = page.getByRole('button', { name: /to the dead letters$/ });
  const [{ n }] = await sql(
    `select count(*)::int as n from queen.cursors c join queen.queues q on q.id = c.queue_id
     where q.name = $1 and c.lease_id is not null and c.lease_expires_at <= now()`,
    [queue],
  );
  await expect(offered).toHaveCount(n);
  expect(n).toBe(1);
});
