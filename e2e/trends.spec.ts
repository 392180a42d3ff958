// Rates and trends (uPlot charts on the queue page and the Overview) and the Consumers page, in a
// real Chromium against the real app: the figures shown are checked against the database.
import { expect, push, screenshot, sql, test } from './support';

/** Takes a sample now, as the instances' heartbeat does every STATS_SAMPLE_SECONDS. */
const sample = () => sql(`select queen.sample_stats(interval '0', interval '24 hours', clock_timestamp())`);

test('the queue page charts real rates while a producer runs; the Overview shows a sparkline', async ({
  page,
  request,
}) => {
  const queue = `e2e.trends.${Date.now().toString(36)}`;
  await push(request, queue, 'p', 1);
  const consume = async () => {
    const res = await request.get(`/api/v1/pop/queue/${queue}?consumerGroup=g&batch=50`);
    if (res.status() !== 200) return;
    const body = await res.json();
    await request.post('/api/v1/ack/batch', {
      data: {
        consumerGroup: 'g',
        acknowledgments: body.messages.map((m: any) => ({
          transactionId: m.transactionId,
          partitionId: m.partitionId,
          leaseId: m.leaseId,
          status: 'completed',
        })),
      },
    });
  };
  await consume();

  let running = true;
  let sent = 1;
  const producer = (async () => {
    while (running) {
      await push(request, queue, 'p', 10, sent);
      sent += 10;
      await consume();
      await new Promise((r) => setTimeout(r, 100));
    }
  })();
  try {
    // three samples: two rates, a line
    for (let i = 0; i < 2; i++) {
      await sample();
      await new Promise((r) => setTimeout(r, 1200));
    }
    await sample();

    await page.goto(`/queues/${queue}?group=g`);
    const chart = page.getByRole('region', { name: 'Rates over the last 1 h' });
    await expect(chart.getByTestId('rate-chart').locator('canvas')).toBeVisible();
    // the legend's latest values are the rates between the last two samples, from the database
    const [expected] = await sql(
      `
      with s as (
        select at, pushed, acked, lag, row_number() over (order by at desc) as n from queen.stats_samples
        where queue_id = (select id from queen.queues where name = $1) and consumer_group = 'g')
      select round((greatest(a.pushed - b.pushed, 0) / extract(epoch from a.at - b.at)::float8)::numeric, 3)::float8 as pushed,
             round((greatest(a.acked - b.acked, 0) / extract(epoch from a.at - b.at)::float8)::numeric, 3)::float8 as acked, a.lag::int as lag
      from s a join s b on a.n = 1 and b.n = 2`,
      [queue],
    );
    expect(expected.pushed).toBeGreaterThan(0);
    expect(expected.acked).toBeGreaterThan(0);
    const legend = (m: string) => chart.getByTestId(`legend-${m}`);
    await expect(legend('pushed')).toHaveAttribute('data-value', String(expected.pushed));
    await expect(legend('acked')).toHaveAttribute('data-value', String(expected.acked));
    await expect(legend('lag')).toHaveAttribute('data-value', String(expected.lag));
    expect(Number(await legend('pushed').getAttribute('data-value'))).toBeGreaterThan(0);
    await screenshot(page, 'queue-rates');
    // dark: the chart is drawn again with the dark theme's axis colours
    await page.emulateMedia({ colorScheme: 'dark' });
    await expect(chart.getByTestId('rate-chart').locator('canvas')).toHaveCount(1);
    await expect(legend('pushed')).toHaveAttribute('data-value', String(expected.pushed));
    await screenshot(page, 'queue-rates-dark');
    await page.emulateMedia({ colorScheme: 'light' });

    await page.goto('/');
    const sparkline = page.getByTestId(`sparkline-${queue}`);
    await expect(sparkline.locator('canvas')).toBeVisible();
    // its figures are those of its last one-minute point, and say so
    await expect(sparkline).toHaveAttribute(
      'aria-label',
      new RegExp(
        `^${queue.replace(/\./g, '\\.')}: pushed [0-9.]+/s, acked [0-9.]+/s in the minute to \\d\\d:\\d\\d:\\d\\d UTC \\(drawn: the last hour\\)$`,
      ),
    );
  } finally {
    running = false;
    await producer;
  }
});

test('the Consumers page lists a holder with what it holds and did, as the database counts them', async ({
  page,
  request,
}) => {
  const queue = `e2e.consumers.${Date.now().toString(36)}`;
  const holder = `e2e-worker-${Date.now().toString(36)}`;
  for (const p of ['a', 'b']) await push(request, queue, p, 6);
  const res = await request.get(`/api/v1/pop/queue/${queue}?consumerGroup=g&batch=12&partitions=2`, {
    headers: { 'x-queen-consumer': holder },
  });
  const { messages } = await res.json();
  expect(messages).toHaveLength(12);
  const ack = (list: any[], status: string) =>
    request.post('/api/v1/ack/batch', {
      data: {
        consumerGroup: 'g',
        acknowledgments: list.map((m: any) => ({
          transactionId: m.transactionId,
          partitionId: m.partitionId,
          leaseId: m.leaseId,
          status,
          error: status === 'failed' ? 'boom' : null,
        })),
      },
    });
  const onA = messages.filter((m: any) => m.partitionId === messages[0].partitionId);
  await ack(onA.slice(0, 4), 'completed');
  await ack(onA.slice(4, 5), 'failed');

  await page.goto('/consumers');
  const row = page.getByTestId(`consumer-row-${holder}`);
  await expect(row).toBeVisible();
  const [held] = await sql(
    `
    select count(distinct lease_id)::int as leases, count(*)::int as partitions, sum(lease_end_offset - committed_offset)::int as messages,
           count(*) filter (where lease_expires_at <= now())::int as "expiredNow"
    from queen.cursors where lease_holder = $1 and lease_id is not null`,
    [holder],
  );
  const [history] = await sql(
    `
    select sum(acked)::int as acked, sum(failed)::int as failed, sum(expired)::int as expired
    from queen.holder_stats where holder = $1 and minute >= date_trunc('minute', now()) - interval '59 minutes'`,
    [holder],
  );
  expect(held).toEqual({ leases: 1, partitions: 1, messages: 6, expiredNow: 0 });
  expect(history).toEqual({ acked: 4, failed: 1, expired: 0 });
  await expect(row.getByTestId('lease-ids')).toHaveText(String(held.leases));
  await expect(row.getByTestId('partitions')).toHaveText(String(held.partitions));
  await expect(row.getByTestId('messages')).toHaveText(String(held.messages));
  await expect(row.getByTestId('acked')).toHaveText(String(history.acked));
  await expect(row.getByTestId('failed')).toHaveText(String(history.failed));
  await expect(row.getByTestId('expired-now')).toHaveText(String(held.expiredNow));
  await expect(row.getByTestId('expired')).toHaveText(String(history.expired));
  await screenshot(page, 'consumers');

  // one click to the leases it holds
  // one click to the leases it holds: exactly the rows its figure counts
  await row.getByRole('link', { name: `1 leased partitions of ${holder}` }).click();
  await expect(page).toHaveURL(new RegExp(`/leases\\?holderIs=${holder}$`));
  await expect(page.getByTestId('lease-count')).toHaveText(`${held.partitions} leases`);
  await expect(page.getByRole('textbox', { name: 'Holder (exact name)' })).toHaveValue(holder);
});

test('a Consumers page past the last one says so and links to the last', async ({ page, request }) => {
  const queue = `e2e.trends.past.${Date.now().toString(36)}`;
  await push(request, queue, 'p', 1);
  await request.get(`/api/v1/pop/queue/${queue}?consumerGroup=g`, {
    headers: { 'x-queen-consumer': 'past-page-worker' },
  });
  await page.goto('/consumers?page=99');
  await expect(page.getByTestId('past-last-page')).toContainText('Page 99 is past the last page');
});
