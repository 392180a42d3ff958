// Where the scripts' logger writes: pino-pretty's readable lines when LOG_PRETTY=true, or when it
// is unset and stdout is a terminal; JSON lines otherwise (the default for whatever collects them).

/** @param {import('../../lib/config.mjs').Config} cfg */
export async function logStream(cfg) {
  if (!(cfg.log.pretty ?? process.stdout.isTTY === true)) return undefined;
  try {
    return (await import('pino-pretty')).default({ colorize: process.stdout.isTTY === true });
  } catch {
    return undefined; // a production install without dev dependencies: JSON lines
  }
}
