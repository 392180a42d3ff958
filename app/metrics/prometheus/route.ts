import { route } from '@/lib/http/route';
import { prometheusText } from '@/lib/metrics/scrape';

export const GET = route(async () => {
  const { text, contentType, queryMs, renderMs } = await prometheusText();
  // what a slow scrape spent its time on, for operators and the bench
  const timing = `figures;dur=${queryMs.toFixed(1)}, render;dur=${renderMs.toFixed(1)}`;
  return new Response(text, { headers: { 'content-type': contentType, 'server-timing': timing } });
});
