// Issue 20's smaller findings, each checked in the browser against the database or the page's own
// measure: filters typed quickly, the dry run's words and curl, /queues, the sign-in page with auth
// off, names that wrap at their dots, the contrast of an expired row.
import { expect, push, sql, test } from './support';

const unique = (name: string) => `e2e.small.${name}.${Date.now().toString(36)}`;

test('two filters typed one right after the other both land in the URL', async ({ page }) => {
  test.setTimeout(90_000); // six page loads on a loaded machine
  for (let i = 0; i < 6; i++) {
    await page.goto('/leases');
    const queue = page.getByLabel(/^Queue/);
    const group = page.getByLabel(/^Group/);
    await queue.fill(`q${i}`);
    await queue.press('Enter');
    await group.fill(`g${i}`);
    await group.press('Enter');
    await expect(page).toHaveURL(new RegExp(`queue=q${i}&group=g${i}|group=g${i}&queue=q${i}`));
    await expect(page.getByLabel(/^Queue/)).toHaveValue(`q${i}`);
  }
});

test('a dry run on a partition another worker leases says who holds it until when; a misspelt queue says so; both have a curl', async ({
  page,
  request,
}) => {
  const queue = unique('dry');
  await push(request, queue, 'p', 2);
  const held = await (
    await request.get(`/api/v1/pop/queue/${queue}?consumerGroup=g&leaseSeconds=300`, {
      headers: { 'x-queen-consumer': 'worker-7' },
    })
  ).json();
  await page.goto(`/console?queue=${queue}&consumerGroup=g`);
  await page.getByRole('button', { name: 'Dry run' }).click();
  const [{ expires }] = await sql(
    'select queen.iso(lease_expires_at) as expires from queen.cursors where lease_id = $1',
    [held.leaseId],
  );
  // the expiry as the rest of the dashboard shows one: a countdown, the UTC time as its title (not raw ISO)
  const why = page.getByTestId('dry-run-why');
  await expect(why).toContainText('Held by other leases of group g:');
  await expect(why).toContainText(/p is leased by worker-7, expires in \d+ min/);
  await expect(why).not.toContainText(expires);
  await expect(why.getByTestId('lease-state')).toHaveAttribute('title', expires);
  await expect(why.getByRole('link', { name: held.leaseId })).toHaveAttribute('href', /lease=/);
  await expect(page.getByTestId('curl-dry-run')).toContainText(`/api/dashboard/pop-preview?`);
  await expect(page.getByTestId('curl-dry-run')).toContainText(`queue=${queue}`);
  await page.getByLabel('Queue', { exact: true }).fill(`${queue}x`);
  await page.getByRole('button', { name: 'Dry run' }).click();
  await expect(page.getByTestId('dry-run-why')).toContainText(`Queue "${queue}x" does not exist`);
  expect(await sql('select 1 from queen.queues where name = $1', [`${queue}x`])).toHaveLength(0);
});

test('/queues leads to the Overview, which lists every queue; the sign-in page says auth is off before anything is typed', async ({
  page,
}) => {
  await page.goto('/queues');
  await expect(page).toHaveURL(/\/$/);
  await expect(page.getByRole('heading', { name: 'Overview' })).toBeVisible();
  await page.goto('/sign-in');
  await expect(page.getByTestId('auth-off')).toContainText('Authentication is off');
});

test("a dotted queue name wraps at its dots, and an expired lease's row reads at 4.5:1 or better", async ({
  page,
  request,
}) => {
  const queue = `${unique('wrap')}.averyveryverylongsegmentname.another.segment`;
  await push(request, queue, 'p', 1);
  const { leaseId } = await (await request.get(`/api/v1/pop/queue/${queue}?consumerGroup=g&leaseSeconds=300`)).json();
  await sql("update queen.cursors set lease_expires_at = now() - interval '5 seconds' where lease_id = $1", [leaseId]);
  await page.setViewportSize({ width: 900, height: 800 });
  await page.goto(`/leases?queue=${encodeURIComponent(queue)}`);
  const link = page.getByTestId(`lease-${leaseId}`).getByRole('link', { name: /p$/ }).first();
  // every line of the name ends at a separator: the text of each line box
  const lines = await link.evaluate((a) => {
    const range = document.createRange();
    const text = a.textContent ?? '';
    const tops = new Map<number, string>();
    const walker = document.createTreeWalker(a, NodeFilter.SHOW_TEXT);
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
      for (let i = 0; i < (n.textContent ?? '').length; i++) {
        range.setStart(n, i);
        range.setEnd(n, i + 1);
        const top = Math.round(range.getBoundingClientRect().top);
        tops.set(top, (tops.get(top) ?? '') + n.textContent![i]);
      }
    }
    return { text, lines: [...tops.values()] };
  });
  for (const l of lines.lines.slice(0, -1)) expect(l.trimEnd()).toMatch(/[./_ -]$/);
  const ratio = await page
    .getByTestId(`lease-${leaseId}`)
    .getByTestId('lease-state')
    .evaluate((el) => {
      // Tailwind 4's colours compute as oklch(): a canvas turns any CSS colour into sRGB bytes
      const ctx = document.createElement('canvas').getContext('2d', { willReadFrequently: true })!;
      const rgb = (c: string) => {
        ctx.clearRect(0, 0, 1, 1);
        ctx.fillStyle = c;
        ctx.fillRect(0, 0, 1, 1);
        return [...ctx.getImageData(0, 0, 1, 1).data.slice(0, 3)];
      };
      const lum = (c: number[]) => {
        const [r, g, b] = c.map((v) => {
          const s = v / 255;
          return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
        });
        return 0.2126 * r + 0.7152 * g + 0.0722 * b;
      };
      let bg = el as HTMLElement | null;
      const clear = (c: string) => /rgba\(0, 0, 0, 0\)|transparent/.test(c) || / \/ 0\)$/.test(c);
      while (bg && clear(getComputedStyle(bg).backgroundColor)) bg = bg.parentElement;
      const [a, b] = [lum(rgb(getComputedStyle(el).color)), lum(rgb(getComputedStyle(bg!).backgroundColor))];
      return (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
    });
  expect(ratio).toBeGreaterThanOrEqual(4.5);
});
