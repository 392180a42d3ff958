import { z } from 'zod';

const int = (fallback: number, min = 0, max = Number.MAX_SAFE_INTEGER) =>
  z.coerce.number().int().min(min).max(max).default(fallback);

const optionalInt = (min = 0) => z.coerce.number().int().min(min).optional();

// Every environment variable the app reads, with its default. README.md lists the same table.
const schema = z.object({
  PORT: int(6632, 1, 65535),
  HOST: z.string().min(1).default('127.0.0.1'),
  DATABASE_URL: z.string().min(1).optional(),
  DB_POOL_SIZE: int(20, 1, 1000),
  DB_POOL_ACQUIRE_TIMEOUT_MS: int(3000, 1),
  DB_STATEMENT_TIMEOUT_MS: int(30000, 1),
  MAX_BODY_BYTES: int(10 * 1024 * 1024, 1),
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

export type Config = ReturnType<typeof loadConfig>;

/** Validates the environment; the error names every bad variable. */
export function loadConfig(env: Record<string, string | undefined> = process.env) {
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
    db: {
      poolSize: e.DB_POOL_SIZE,
      acquireTimeoutMs: e.DB_POOL_ACQUIRE_TIMEOUT_MS,
      statementTimeoutMs: e.DB_STATEMENT_TIMEOUT_MS,
    },
    maxBodyBytes: e.MAX_BODY_BYTES,
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

let current: Config | undefined;

export function config(): Config {
  current ??= loadConfig();
  return current;
}
