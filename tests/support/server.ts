import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { freePort } from '../../db/embedded.mjs';

const root = path.join(__dirname, '..', '..');

export interface TestServer {
  url: string;
  process: ChildProcess;
  output: () => string;
  stop: () => Promise<void>;
}

export interface SpawnOptions {
  /** a command the server runs under (`setpriv ...`) */
  wrapper?: string[];
  /** its own session and process group, as a service is (default); false: the caller's */
  ownSession?: boolean;
}

/** Runs the built app (scripts/serve.mjs, as `npm start` does) against `databaseUrl` on a free port, as its own process group. */
export async function startServer(
  databaseUrl: string | undefined,
  env: Record<string, string> = {},
  args: string[] = [],
): Promise<TestServer> {
  const server = await spawnServer(databaseUrl, env, args);
  await waitForHealth(server.url, server.process, server.output);
  return server;
}

/** The same, without waiting for it to answer: the caller watches its boot. */
export async function spawnServer(
  databaseUrl: string | undefined,
  env: Record<string, string> = {},
  args: string[] = [],
  { wrapper = [], ownSession = true }: SpawnOptions = {},
): Promise<TestServer> {
  const port = await freePort();
  const childEnv: NodeJS.ProcessEnv = {
    ...process.env,
    NEXT_TELEMETRY_DISABLED: '1',
    HOST: '127.0.0.1',
    PORT: String(port),
    ...env,
  };
  if (databaseUrl) childEnv.DATABASE_URL = databaseUrl;
  else delete childEnv.DATABASE_URL;
  const command = [...wrapper, process.execPath, path.join(root, 'scripts', 'serve.mjs'), ...args];
  const child = spawn(command[0], command.slice(1), {
    cwd: root,
    env: childEnv,
    detached: ownSession,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (d) => (output += d));
  child.stderr?.on('data', (d) => (output += d));
  return {
    url: `http://127.0.0.1:${port}`,
    process: child,
    output: () => output,
    // a server in the caller's session has no process group of its own to signal
    stop: () => (ownSession ? stopProcessGroup(child) : stopChild(child)),
  };
}

export async function waitForHealth(url: string, child: ChildProcess, output: () => string, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null)
      throw new Error(`server exited (${child.exitCode}) before it was healthy:\n${output()}`);
    try {
      const res = await fetch(`${url}/health`);
      if (res.status === 200) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`server not healthy within ${timeoutMs} ms:\n${output()}`);
}

/** Signals the child's process group, then SIGKILLs it after `graceMs` if it has not exited. */
export async function stopProcessGroup(
  child: ChildProcess,
  signal: NodeJS.Signals = 'SIGTERM',
  graceMs = 10_000,
): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  try {
    process.kill(-child.pid!, signal);
  } catch {
    return;
  }
  const timer = setTimeout(() => {
    try {
      process.kill(-child.pid!, 'SIGKILL');
    } catch {
      // already gone
    }
  }, graceMs);
  await exited;
  clearTimeout(timer);
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  await exited;
}
