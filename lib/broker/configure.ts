import { sql } from 'drizzle-orm';
import { z } from 'zod';
import { db } from '@/db/pool';
import { config } from '@/lib/config.mjs';
import { badRequest } from './errors';
import { queueOptions, type QueueOptions } from './options';
import { name, parseWith, reasonText } from './validate';

export const configureBody = z.object({
  queue: name,
  namespace: name.nullish(),
  task: name.nullish(),
  options: queueOptions.nullish(),
  /** why (this project's own field, optional: Queen's clients send none); written to the audit row of a change */
  reason: reasonText,
});

export interface ConfigureResult {
  configured: true;
  queueId: string;
  partitionId: string;
  queue: string;
  namespace: string;
  task: string;
  options: QueueOptions;
}

/**
 * Configures a queue (a full set of its options); a change is audited with the options before and
 * after, and the `reason` when one is given.
 */
export async function configureQueue(body: unknown, actor: string): Promise<ConfigureResult> {
  const input = parseWith(configureBody, body);
  const options = input.options ?? queueOptions.parse({});
  if (options.encryptionEnabled && !config().encryptionKey) {
    throw badRequest(
      'options.encryptionEnabled: the server has no QUEEN_ENCRYPTION_KEY, so it cannot encrypt this queue',
    );
  }
  const namespace = input.namespace ?? '';
  const task = input.task ?? '';
  const { rows } = await db().execute<{ queue_id: string; partition_id: string; options: QueueOptions }>(
    sql`select * from queen.configure_queue(${input.queue}, ${namespace}, ${task}, ${JSON.stringify(options)}::jsonb, ${actor}, ${input.reason?.trim() || null})`,
  );
  const row = rows[0];
  return {
    configured: true,
    queueId: row.queue_id,
    partitionId: row.partition_id,
    queue: input.queue,
    namespace,
    task,
    options: row.options,
  };
}
