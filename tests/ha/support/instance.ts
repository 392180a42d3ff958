import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { stopProcessGroup, waitForHealth } from '../../support/server';

const root = path.join(__dirname, '..', '..', '..');

export interface Instance {
  name: string;
  port: number;
  url: string;
  child: () => ChildProcess;
  output: () => string;
  /** SIGTERM, and resolves once it exited (SIGKILL after 10 s). */
  stop: () => Promise<void>;
  /** Starts it again on the same port; resolves once /health answers. */
  restart: () => Promise<void>;
}

/** The built app (scripts/serve.mjs) on a fixed port, so that a load balancer finds it again after a restart. */
export async function startInstance(
  name: string,
  port: number,
  databaseUrl: string,
  env: Record<string, string> = {},
): Promise<Instance> {
  let child: ChildProcess;
  let output = '';
  const run = async () => {
    output += `--- start ${new Date().toISOString()}\n`;
    child = spawn(process.execPath, [path.join(root, 'scripts', 'serve.mjs')], {
      cwd: root,
      env: {
        ...process.env,
        NEXT_TELEMETRY_DISABLED: '1',
        HOST: '127.0.0.1',
        PORT: String(port),
        DATABASE_URL: databaseUrl,
        ...env,
      },
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout?.on('data', (d) => (output += d));
    child.stderr?.on('data', (d) => (output += d));
    await waitForHealth(`http://127.0.0.1:${port}`, child, () => output);
  };
  await run();
  return {
    name,
    port,
    url: `http://127.0.0.1:${port}`,
    child: () => child,
    output: () => output,
    stop: () => stopProcessGroup(child),
    restart: run,
  };
}
