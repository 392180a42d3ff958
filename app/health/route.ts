import { sql } from 'drizzle-orm';
import { db } from '@/db/pool';
import { RETRY_AFTER } from '@/lib/http/errors';
import { json, route } from '@/lib/http/route';

export const GET = route(async () => {
  try {
    await db().execute(sql`select 1`);
    return json({ status: 'healthy', database: 'connected' });
  } catch {
    return json({ status: 'unhealthy', database: 'disconnected' }, 503, RETRY_AFTER);
  }
});
