// The one configuration module: every environment variable the app and its scripts read, with its
// default, validated once. Plain JavaScript so that scripts/start.mjs can fail fast before
// starting anything. README.md lists the same variables.
import { z } from 'zod';

const int = (fallback, min = 0, max = Number.MAX_SAFE_INTEGER) =>
  z.coerce.number().int().min(min).max(max).default(fallback);

const optionalInt = (min = 0) => z.coerce.number().int().min(min).optional();

const schema = z.object({
  PORT: int(6632, 1, 65535),
  HOST: z.string().min(1).default('127.0.0.1'),
  DATABASE_URL: z.string().min(1).optional(),
  QUEEN_DATA_DIR: z.string().min(1).default('.data'),
  DB_POOL_SIZE: int(20, 1, 1000),
  DB_POOL_ACQUIRE_TIMEOUT_MS: int(3000, 1),
  DB_STATEMENT_TIMEOUT_MS: int(30000, 1),
  MAX_BODY_BYTES: int(10 * 1024 * 1024, 1),
  SHUTDOWN_TIMEOUT_MS: int(10000, 0),
  RETENTION_INTERVAL_MS: int(60000, 10),
  RETENTION_BATCH: int(200, 1),
  AUDIT_RETENTION_DAYS: int(90, 1),
  DEAD_LETTER_RETENTION_DAYS: int(30, 1),
  DEFAULT_TIMEOUT: optionalInt(),
  POP_DEFAULT_TIMEOUT_MS: optionalInt(),
  POP_WAIT_INITIAL_INTERVAL_MS: int(100, 1),
  POP_WAIT_BACKOFF_THRESHOLD: int(3, 1),
  POP_WAIT_BACKOFF_MULTIPLIER: z.coerce.number().min(1).default(2.0),
  POP_WAIT_MAX_INTERVAL_MS: int(1000, 1),
  QUEEN_ENCRYPTION_KEY: z
    .string()
    .regex(/^[0-9a-fA-F]{64}$/, 'must be 64 hexadecimal characters (32 bytes)')
    .optional(),
});

/**
 * Validates the environment; the error names every bad variable.
 * @param {Record<string, string | undefined>} env
 */
export function loadConfig(env = process.env) {
  const present = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  const parsed = schema.safeParse(present);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
    throw new Error(`Invalid configuration: ${problems.join('; ')}`);
  }
  const e = parsed.data;
  return {
    port: e.PORT,
    host: e.HOST,
    databaseUrl: e.DATABASE_URL,
    dataDir: e.QUEEN_DATA_DIR,
    db: {
      poolSize: e.DB_POOL_SIZE,
      acquireTimeoutMs: e.DB_POOL_ACQUIRE_TIMEOUT_MS,
      statementTimeoutMs: e.DB_STATEMENT_TIMEOUT_MS,
    },
    maxBodyBytes: e.MAX_BODY_BYTES,
    shutdownTimeoutMs: e.SHUTDOWN_TIMEOUT_MS,
    lifecycle: {
      intervalMs: e.RETENTION_INTERVAL_MS,
      batch: e.RETENTION_BATCH,
      auditDays: e.AUDIT_RETENTION_DAYS,
      deadLetterDays: e.DEAD_LETTER_RETENTION_DAYS,
    },
    pop: {
      // DEFAULT_TIMEOUT wins over POP_DEFAULT_TIMEOUT_MS (pop-routes.md, `timeout`).
      defaultTimeoutMs: e.DEFAULT_TIMEOUT ?? e.POP_DEFAULT_TIMEOUT_MS ?? 30000,
      waitInitialIntervalMs: e.POP_WAIT_INITIAL_INTERVAL_MS,
      waitBackoffThreshold: e.POP_WAIT_BACKOFF_THRESHOLD,
      waitBackoffMultiplier: e.POP_WAIT_BACKOFF_MULTIPLIER,
      waitMaxIntervalMs: e.POP_WAIT_MAX_INTERVAL_MS,
    },
    encryptionKey: e.QUEEN_ENCRYPTION_KEY ? Buffer.from(e.QUEEN_ENCRYPTION_KEY, 'hex') : undefined,
  };
}

/** @typedef {ReturnType<typeof loadConfig>} Config */

/** @type {Config | undefined} */
let current;

/** The validated configuration of this process. */
export function config() {
  current ??= loadConfig();
  return current;
}
