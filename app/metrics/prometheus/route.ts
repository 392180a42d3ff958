import { route } from '@/lib/http/route';
import { prometheusText } from '@/lib/metrics/scrape';

export const GET = route(async () => {
  const { text, contentType } = await prometheusText();
  return new Response(text, { headers: { 'content-type': contentType } });
});
