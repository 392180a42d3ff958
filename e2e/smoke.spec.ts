import { expect, test } from './support';

test('the home page opens in Chromium and lists a pushed queue', async ({ page, request }) => {
  const pushed = await request.post('/api/v1/push', {
    data: { items: [{ queue: 'smoke.test', payload: { ok: true } }] },
  });
  expect(pushed.status()).toBe(201);
  await page.goto('/');
  await expect(page.getByRole('heading', { name: 'Overview' })).toBeVisible();
  await expect(page.getByRole('link', { name: 'smoke.test', exact: true })).toBeVisible();
});
