import { sql } from 'drizzle-orm';
import { db } from '@/db/pool';
import { driverError } from './errors';

/**
 * The names of the queues with `encryptionEnabled`, cached per instance. Configure notifies every
 * instance (queen_config), which drops the cache; and queen.push() refuses an unencrypted item
 * for an encrypted queue (SQLSTATE QM003), so a push racing a configure is retried with fresh
 * flags instead of storing plaintext.
 */
class EncryptionFlags {
  private names?: Promise<ReadonlySet<string>>;

  get(): Promise<ReadonlySet<string>> {
    this.names ??= db()
      .execute<{ name: string }>(sql`select name from queen.queues where encryption_enabled`)
      .then(({ rows }) => new Set(rows.map((r) => r.name)))
      .catch((err) => {
        this.names = undefined;
        throw err;
      });
    return this.names;
  }

  invalidate(): void {
    this.names = undefined;
  }
}

const slot = globalThis as unknown as { __queenEncryptionFlags?: EncryptionFlags };
export const encryptionFlags = (slot.__queenEncryptionFlags ??= new EncryptionFlags());

const STALE_FLAGS = 'QM003';

/** Runs `write` with the current flags; once more with fresh ones if they turned out stale. */
export async function withEncryptionFlags<T>(write: (encrypted: ReadonlySet<string>) => Promise<T>): Promise<T> {
  try {
    return await write(await encryptionFlags.get());
  } catch (err) {
    if (driverError(err)?.code !== STALE_FLAGS) throw err;
    encryptionFlags.invalidate();
    return write(await encryptionFlags.get());
  }
}
