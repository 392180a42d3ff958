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
