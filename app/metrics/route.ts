import { json, route } from '@/lib/http/route';
import { metricsSummary } from '@/lib/metrics/scrape';

export const GET = route(async () => json(await metricsSummary()));
