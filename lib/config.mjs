// The one configuration module: every environment variable the app and its scripts read, with its
// default, validated once. Plain JavaScript so that scripts/start.mjs can fail fast before
// starting anything. docs/configuration.md lists the same variables.
import { createPublicKey } from 'node:crypto';
import { availableParallelism } from 'node:os';
import { z } from 'zod';

const int = (fallback, min = 0, max = Number.MAX_SAFE_INTEGER) =>
  z.coerce.number().int().min(min).max(max).default(fallback);

const optionalInt = (min = 0) => z.coerce.number().int().min(min).optional();

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

const schema = z.object({
  PORT: int(6632, 1, 65535),
  HOST: z.string().min(1).default('127.0.0.1'),
  DATABASE_URL: z.string().min(1).optional(),
  DATABASE_DIRECT_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\/./, 'must be a postgres:// or postgresql:// URL (the database itself, not a pooler)')
    .optional(),
  DATABASE_READ_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\/./, 'must be a postgres:// or postgresql:// URL (a streaming replica of DATABASE_URL)')
    .optional(),
  QUEEN_DATA_DIR: z.string().min(1).default('.data'),
  DB_POOL_SIZE: int(20, 1, 1000),
  DB_POOL_WARM: optionalInt(),
  DB_POOL_ACQUIRE_TIMEOUT_MS: int(3000, 1),
  DB_STATEMENT_TIMEOUT_MS: int(30000, 1),
  PUSH_CALLS_IN_FLIGHT: optionalInt(1),
  MAX_BODY_BYTES: int(10 * 1024 * 1024, 1),
  SHUTDOWN_TIMEOUT_MS: int(10000, 0),
  BOOT_NICE: int(19, 0, 19),
  SERVE_FAST_PATH: z.enum(['true', 'false'], 'must be true or false').default('true'),
  RETENTION_INTERVAL_MS: int(60000, 10),
  RETENTION_BATCH: int(200, 1),
  AUDIT_RETENTION_DAYS: int(90, 1),
  DEAD_LETTER_RETENTION_DAYS: int(30, 1),
  DELIVERY_RETENTION_HOURS: int(24, 1, 24 * 31),
  DEDUP_WINDOW_SECONDS: int(7200, 0),
  STATS_SAMPLE_SECONDS: int(15, 5, 3600),
  STATS_RETENTION_HOURS: int(24, 1, 24 * 31),
  DEFAULT_TIMEOUT: optionalInt(),
  POP_DEFAULT_TIMEOUT_MS: optionalInt(),
  POP_WAIT_INITIAL_INTERVAL_MS: int(100, 1),
  POP_WAIT_BACKOFF_THRESHOLD: int(3, 1),
  POP_WAIT_BACKOFF_MULTIPLIER: z.coerce.number().min(1).default(2.0),
  POP_WAIT_MAX_INTERVAL_MS: int(1000, 1),
  JWT_ENABLED: z.enum(['true', 'false'], 'must be true or false').default('false'),
  JWT_SECRET: z.string().min(32, 'must be at least 32 characters (HS256 needs a long random secret)').optional(),
  JWT_PUBLIC_KEY: z.string().optional(),
  JWT_JWKS_URL: z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' }).optional(),
  JWT_ISSUER: z.string().optional(),
  JWT_AUDIENCE: z.string().optional(),
  JWT_CLOCK_TOLERANCE_SECONDS: int(30, 0, 600),
  JWT_ALLOW_NO_EXP: z.enum(['true', 'false'], 'must be true or false').default('false'),
  LOG_LEVEL: z.enum(LOG_LEVELS, `must be one of ${LOG_LEVELS.join(', ')}`).default('info'),
  LOG_PRETTY: z.enum(['true', 'false'], 'must be true or false').optional(),
  ALLOWED_HOSTS: z
    .string()
    .regex(
      /^\s*(\*|[A-Za-z0-9.\-:\[\]]+)(\s*,\s*(\*|[A-Za-z0-9.\-:\[\]]+))*\s*$/,
      'must be a comma-separated list of host names (without scheme or path), or *',
    )
    .optional(),
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
  if (e.DATABASE_DIRECT_URL && !e.DATABASE_URL) {
    throw new Error(
      'Invalid configuration: DATABASE_DIRECT_URL is set but DATABASE_URL is not (DATABASE_URL is the pooler the pool goes through; DATABASE_DIRECT_URL the database itself, for LISTEN, the lifecycle lock and migrations)',
    );
  }
  if (e.DB_POOL_WARM !== undefined && e.DB_POOL_WARM > e.DB_POOL_SIZE) {
    throw new Error(
      `Invalid configuration: DB_POOL_WARM (${e.DB_POOL_WARM}) is more than DB_POOL_SIZE (${e.DB_POOL_SIZE}): the pool cannot keep more connections than it may open`,
    );
  }
  if (e.DATABASE_READ_URL && !e.DATABASE_URL) {
    throw new Error(
      'Invalid configuration: DATABASE_READ_URL is set but DATABASE_URL is not (DATABASE_READ_URL is a streaming replica of the primary DATABASE_URL names; the embedded PostgreSQL has none)',
    );
  }
  return {
    auth: authConfig(e, present),
    port: e.PORT,
    host: e.HOST,
    databaseUrl: e.DATABASE_URL,
    // what needs a session (LISTEN, the lifecycle job's advisory lock, migrations) connects here;
    // set when DATABASE_URL is a transaction-mode pooler (docs/scaling.md, step 3)
    databaseDirectUrl: e.DATABASE_DIRECT_URL,
    // the dashboard's reads and the metrics' figures read here when set: a hot standby of the
    // primary, never written to (docs/scaling.md, "Dashboard reads from a replica")
    databaseReadUrl: e.DATABASE_READ_URL,
    dataDir: e.QUEEN_DATA_DIR,
    db: {
      poolSize: e.DB_POOL_SIZE,
      // connections opened and warmed at boot, and kept however idle (lib/broker/warm-up.ts)
      warmConnections: e.DB_POOL_WARM ?? Math.min(4, e.DB_POOL_SIZE),
      acquireTimeoutMs: e.DB_POOL_ACQUIRE_TIMEOUT_MS,
      statementTimeoutMs: e.DB_STATEMENT_TIMEOUT_MS,
      // A push call is work for PostgreSQL's CPUs: more calls at once than it has cores only queue
      // inside it, while pushes waiting for a free call go together in one (lib/broker/push.ts).
      pushCallsInFlight:
        e.PUSH_CALLS_IN_FLIGHT ?? Math.max(1, Math.min(Math.floor(e.DB_POOL_SIZE / 2), availableParallelism())),
    },
    log: {
      level: e.LOG_LEVEL,
      // unset: readable lines on a terminal, JSON otherwise
      pretty: e.LOG_PRETTY === undefined ? undefined : e.LOG_PRETTY === 'true',
    },
    allowedHosts: allowedHosts(e),
    maxBodyBytes: e.MAX_BODY_BYTES,
    shutdownTimeoutMs: e.SHUTDOWN_TIMEOUT_MS,
    // how much lower the process runs until it serves (scripts/lib/boot-priority.mjs); 0: as started
    bootNice: e.BOOT_NICE,
    // false: every route handler through Next's own handler (scripts/lib/serve-routes.mjs)
    serveFastPath: e.SERVE_FAST_PATH === 'true',
    lifecycle: {
      intervalMs: e.RETENTION_INTERVAL_MS,
      batch: e.RETENTION_BATCH,
      auditDays: e.AUDIT_RETENTION_DAYS,
      deadLetterDays: e.DEAD_LETTER_RETENTION_DAYS,
      deliveryHours: e.DELIVERY_RETENTION_HOURS,
      dedupWindowSeconds: e.DEDUP_WINDOW_SECONDS,
    },
    stats: {
      sampleSeconds: e.STATS_SAMPLE_SECONDS,
      retentionHours: e.STATS_RETENTION_HOURS,
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

/** Names a loopback address or name stands for; always served. */
export const LOOPBACK_HOSTS = ['localhost', '127.0.0.1', '::1'];

/**
 * The Host names this server answers to (lib/http/host.ts): the loopback names and addresses, the
 * address it listens on when that is a specific one, and ALLOWED_HOSTS (names, lower case, any
 * port; `*` for any name at all). Anything else could be a DNS-rebinding page.
 * @param {z.output<typeof schema>} e
 */
function allowedHosts(e) {
  const given = (e.ALLOWED_HOSTS ?? '')
    .split(',')
    .map((h) => hostnameOf(h))
    .filter(Boolean);
  const listen = hostnameOf(e.HOST);
  const names = new Set([...LOOPBACK_HOSTS, ...given]);
  if (listen && listen !== '0.0.0.0' && listen !== '::') names.add(listen);
  return { any: names.has('*'), names: [...names] };
}

/**
 * The name part of a Host value, lower case, without the port or IPv6 brackets: `[::1]:6632` → `::1`.
 * @param {string} host
 */
export function hostnameOf(host) {
  const h = host.trim().toLowerCase();
  if (h.startsWith('[')) {
    const close = h.indexOf(']');
    return close < 0 ? '' : h.slice(1, close);
  }
  if (h.split(':').length === 2) return h.slice(0, h.indexOf(':')).replace(/\.$/, '');
  return h.replace(/\.$/, ''); // a bare IPv6 address keeps its colons; a trailing dot names the same host
}

/**
 * JWT settings: off unless JWT_ENABLED=true; then HS256 needs JWT_SECRET and RS256/ES256 need
 * JWT_PUBLIC_KEY or JWT_JWKS_URL. A JWT_* variable that would have no effect is refused.
 * @param {z.output<typeof schema>} e
 * @param {Record<string, string>} present
 */
function authConfig(e, present) {
  const given = [
    'JWT_SECRET',
    'JWT_PUBLIC_KEY',
    'JWT_JWKS_URL',
    'JWT_ISSUER',
    'JWT_AUDIENCE',
    'JWT_CLOCK_TOLERANCE_SECONDS',
    'JWT_ALLOW_NO_EXP',
  ].filter((k) => k in present);
  if (e.JWT_ENABLED !== 'true') {
    if (given.length)
      throw new Error(
        `Invalid configuration: ${given.join(', ')} set but JWT_ENABLED is not true (set JWT_ENABLED=true or remove them)`,
      );
    return { enabled: false };
  }
  if (!e.JWT_SECRET && !e.JWT_PUBLIC_KEY && !e.JWT_JWKS_URL) {
    throw new Error(
      'Invalid configuration: JWT_ENABLED=true needs JWT_SECRET (HS256), JWT_PUBLIC_KEY (RS256/ES256, PEM) or JWT_JWKS_URL',
    );
  }
  if (e.JWT_PUBLIC_KEY && e.JWT_JWKS_URL) {
    throw new Error('Invalid configuration: JWT_PUBLIC_KEY and JWT_JWKS_URL both set: give one source of public keys');
  }
  let publicKey;
  if (e.JWT_PUBLIC_KEY) {
    try {
      // Environment files often carry a PEM on one line with literal \n.
      publicKey = createPublicKey(e.JWT_PUBLIC_KEY.replace(/\\n/g, '\n'));
    } catch (err) {
      throw new Error(`Invalid configuration: JWT_PUBLIC_KEY: not a PEM public key (${err.message})`);
    }
    const type = publicKey.asymmetricKeyType;
    const curve = publicKey.asymmetricKeyDetails?.namedCurve;
    if (type !== 'rsa' && !(type === 'ec' && curve === 'prime256v1')) {
      throw new Error(
        `Invalid configuration: JWT_PUBLIC_KEY: an RSA key (RS256) or a P-256 key (ES256) is needed, not ${type}${curve ? ` ${curve}` : ''}`,
      );
    }
  }
  return {
    enabled: true,
    secret: e.JWT_SECRET ? new TextEncoder().encode(e.JWT_SECRET) : undefined,
    publicKey,
    publicKeyAlgorithm: publicKey ? (publicKey.asymmetricKeyType === 'rsa' ? 'RS256' : 'ES256') : undefined,
    jwksUrl: e.JWT_JWKS_URL,
    issuer: e.JWT_ISSUER,
    audience: e.JWT_AUDIENCE,
    clockToleranceSeconds: e.JWT_CLOCK_TOLERANCE_SECONDS,
    // a token without exp is valid for ever: refused unless explicitly allowed
    allowNoExp: e.JWT_ALLOW_NO_EXP === 'true',
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
