import { sql } from 'drizzle-orm';
import { db } from '@/db/pool';
import { retryingConflicts } from '../conflicts';
import { HttpError } from '../errors';
import { parseWith } from '../validate';
import { registerBody } from './contracts';

/**
 * POST /streams/v1/queries. A new name is inserted (fresh); the same hash updates the queues and
 * keeps the state; another hash with reset:true drops every state row of the query, audited as
 * streams.reset by `actor` (via: registration); another hash without it changes nothing and
 * answers 409.
 */
export async function registerQuery(body: unknown, actor: string) {
  const b = parseWith(registerBody, body);
  const sink = b.sink_queue || null;
  const { rows } = await retryingConflicts(() =>
    db().execute<{ query_id: string; fresh: boolean; reset: boolean; conflict: boolean }>(
      sql`select * from queen_streams.register(${b.name}, ${b.source_queue}, ${sink}, ${b.config_hash}, ${b.reset ?? false}, ${actor})`,
    ),
  );
  const r = rows[0];
  if (r.conflict) {
    throw new HttpError(409, 'config_hash mismatch', {
      success: false,
      query_id: r.query_id,
      name: b.name,
      error: `config_hash mismatch for query '${b.name}': its operator chain changed; register with reset:true to drop its state, or use another name`,
    });
  }
  return {
    success: true,
    query_id: r.query_id,
    name: b.name,
    config_hash: b.config_hash,
    fresh: r.fresh,
    reset: r.reset,
  };
}
