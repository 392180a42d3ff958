import { sql } from 'drizzle-orm';
import { z } from 'zod';
import { db } from '@/db/pool';
import { parseWith, reasonText } from './validate';

/** Pop maintenance (queen.pop_maintenance): while on, every pop answers 204 and claims nothing; pushes and acks go on. */
export async function getPopMaintenance() {
  const { rows } = await db().execute<{ on: boolean }>(sql`select queen.pop_maintenance() as on`);
  return { popMaintenanceMode: rows[0].on };
}

export const maintenanceBody = z.object({ enabled: z.boolean(), reason: reasonText });

export async function setPopMaintenance(body: unknown, actor: string) {
  const { enabled, reason } = parseWith(maintenanceBody, body);
  const { rows } = await db().execute<{ on: boolean }>(
    sql`select queen.set_pop_maintenance(${enabled}, ${reason ?? null}, ${actor}) as on`,
  );
  return { popMaintenanceMode: rows[0].on };
}
