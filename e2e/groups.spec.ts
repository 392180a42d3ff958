// Issue 20: the consumer groups page and what the Overview flags; stuck judged by the current expiry.
import { clickCounter, expect, push, screenshot, sql, test } from './support';

const unique = (name: string) => `e2e.out.${name}.${Date.now().toString(36)}`;

test("a group falling behind a hung lease is flagged on the Overview, and its lag on /groups equals the database's count", async ({
  page,
  request,
}) => {
  const queue = unique('groups');
  const group = `g${Date.now().toString(36)}`;
  await push(request, queue, 'a', 40);
  await push(request, queue, 'b', 4);
  // a hung consumer holds a while the lag climbs in every sample (issue 34: sustained and large enough); another group keeps up, so the queue's largest lag is not this group's alone
  await request.get(`/api/v1/pop/queue/${queue}/partition/a?consumerGroup=${group}&batch=2&leaseSeconds=600`, {
    headers: { 'x-queen-consumer': 'hung-1' },
  });
  const [{ qid }] = await sql('select id as qid from queen.queues where name = $1', [queue]);
  await sql(
    `insert into queen.stats_samples (at, queue_id, consumer_group, pushed, delivered, acked, failed, lag)
    values (now() - interval '5 minutes 5 seconds', $1, $2, 0, 0, 0, 0, 3), (now() - interval '3 minutes', $1, $2, 0, 0, 0, 0, 15),
           (now() - interval '1 minute', $1, $2, 0, 0, 0, 0, 30)`,
    [qid, group],
  );

  const { click, count } = clickCounter();
  await page.goto('/');
  const flag = page
    .getByTestId(`queue-row-${queue}`)
    .getByRole('link', { name: `group ${group}'s lag grew from 3 messages to 44 messages in 5 min` });
  await click(flag);
  await expect(page).toHaveURL(new RegExp(`/groups\\?group=${group}`));
  const section = page.getByTestId(`group-${group}`);
  const [{ lag }] = await sql(
    `select count(*)::int as lag from queen.messages m join queen.cursors c on c.partition_id = m.partition_id
    where c.queue_id = $1 and c.consumer_group = $2 and m."offset" > c.committed_offset and not (m."offset" = any (c.acked_offsets))`,
    [qid, group],
  );
  expect(lag).toBe(44);
  await expect(section.getByTestId(`group-queue-${queue}`).getByTestId('lag')).toHaveText(String(lag));
  await expect(section.getByTestId('group-lag')).toHaveText(String(lag));
  await expect(section.getByTestId('growing')).toBeVisible();
  await expect(section.getByTestId('members')).toContainText('hung-1');
  await expect(section.getByTestId(`group-queue-${queue}`).getByTestId('live-leases')).toHaveText('1');
  expect(count()).toBe(1);
  await screenshot(page, 'groups');
  await page.getByRole('group', { name: 'Lag trend range' }).getByRole('button', { name: '6 h' }).click();
  await expect(page).toHaveURL(/minutes=360/);
  await expect(section.getByTestId('lag-trend')).toHaveAttribute('aria-label', /over the last 6 h/);
});

test("an extended lease is not flagged stuck on the Leases page or the Overview; the count equals the database's", async ({
  page,
  request,
}) => {
  const queue = unique('extended');
  await push(request, queue, 'a', 1);
  await push(request, queue, 'b', 1);
  const a = await (await request.get(`/api/v1/pop/queue/${queue}/partition/a?consumerGroup=g&leaseSeconds=10`)).json();
  await request.get(`/api/v1/pop/queue/${queue}/partition/b?consumerGroup=g&leaseSeconds=10`);
  // held for an hour, extended all along
  await sql(
    "update queen.cursors set lease_acquired_at = now() - interval '1 hour', lease_extensions = 12 where lease_id = $1",
    [a.leaseId],
  );
  await request.post(`/api/v1/lease/${a.leaseId}/extend`, { data: { seconds: 300 } });
  await page.goto(`/leases?queue=${queue}&state=stuck`);
  await expect(page.getByTestId('lease-count')).toHaveText('0 leases');
  await page.goto(`/leases?queue=${queue}&state=held-long`);
  await expect(page.getByTestId('lease-count')).toHaveText('1 leases');
  const [{ n }] = await sql(
    `select count(*)::int as n from queen.cursors c join queen.queues q on q.id = c.queue_id
    where q.name = $1 and c.lease_id is not null and c.lease_expires_at <= now()`,
    [queue],
  );
  expect(n).toBe(0);
});
