import { databaseUrl } from '@/db/pool';
import { migrate } from '@/db/migrate';
import { config } from '@/lib/config.mjs';

/** Validates the configuration and brings the database schema up to date; exits on failure. */
export async function boot(): Promise<void> {
  try {
    config();
    const applied = await migrate(databaseUrl());
    if (applied.length) console.log(`[boot] applied migrations: ${applied.join(', ')}`);
  } catch (err) {
    console.error(`[boot] ${(err as Error).message}`);
    process.exit(1);
  }
}
