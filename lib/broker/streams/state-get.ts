import { sql } from 'drizzle-orm';
import { db } from '@/db/pool';
import { parseWith } from '../validate';
import { stateGetBody } from './contracts';

/** POST /streams/v1/state/get: committed state of one shard, as the body's JSON text. */
export async function getState(body: unknown): Promise<string> {
  const b = parseWith(stateGetBody, body);
  const keys = b.keys && b.keys.length > 0 ? b.keys : null;
  const ripe = b.ripe_at_or_before ?? null;
  const { rows } = await db().execute<{ rows: string }>(sql`
    select queen_streams.state_get(${b.query_id}::uuid, ${b.partition_id}::uuid, ${sql.param(keys)}::text[],
                                   ${b.key_prefix || null}::text, ${ripe === null ? null : String(ripe)}::numeric) as rows`);
  return `{"success":true,"rows":${rows[0].rows}}`;
}
