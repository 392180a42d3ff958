import { databaseUrl } from '@/db/pool';
import { migrate } from '@/db/migrate';
import { startPushListener } from '@/lib/broker/listener';
import { config } from '@/lib/config.mjs';

/** Validates the configuration, brings the database schema up to date and starts listening for pushes; exits on failure. */
export async function boot(): Promise<void> {
  try {
    config();
    const applied = await migrate(databaseUrl());
    if (applied.length) console.log(`[boot] applied migrations: ${applied.join(', ')}`);
    await startPushListener();
  } catch (err) {
    console.error(`[boot] ${(err as Error).message}`);
    process.exit(1);
  }
}
