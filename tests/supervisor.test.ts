// A process a supervisor can trust (issue 21): a listen error exits 1 at once naming the port; one
// signal, however it arrives (Ctrl-C to the process group, SIGTERM to the group or to the
// process), runs the graceful shutdown once; a second explicit signal still exits at once. `npm
// start` serves from one Node.js process (scripts/start.mjs imports the server, no child).
import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { freePort } from '../db/embedded.mjs';
import { testDatabase, type TestDatabase } from './support/db';
import { waitForHealth } from './support/server';

const root = path.join(__dirname, '..');

interface Started {
  child: ChildProcess;
  url: string;
  port: number;
  output: () => string;
  exited: Promise<number | null>;
}

/** `npm start` (or serve.mjs itself) in its own process group, as a terminal or systemd runs it. */
async function launch(command: string, args: string[], env: Record<string, string>, port?: number): Promise<Started> {
  const p = port ?? (await freePort());
  const child = spawn(command, args, {
    cwd: root,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: {
      ...process.env,
      NEXT_TELEMETRY_DISABLED: '1',
      HOST: '127.0.0.1',
      PORT: String(p),
      LOG_PRETTY: 'false',
      ...env,
    },
  });
  let output = '';
  child.stdout!.on('data', (d) => (output += d));
  child.stderr!.on('data', (d) => (output += d));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, url: `http://127.0.0.1:${p}`, port: p, output: () => output, exited };
}

const parkedPoll = (url: string, queue: string) =>
  fetch(`${url}/api/v1/pop/queue/${queue}?wait=true&timeout=60000`).then((r) => ({
    status: r.status,
    why: r.headers.get('x-queen-empty'),
  }));

/** Resolves once the instance has `n` pops parked. */
async function parked(url: string, n: number) {
  for (;;) {
    const m = await (await fetch(`${url}/metrics`)).json();
    if (m.parkedPops >= n) return;
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('a process a supervisor can trust', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await testDatabase();
  });
  afterAll(() => db.drop());

  it('a port in use: the server exits 1 at once, naming the port', async () => {
    const holder = net.createServer();
    const port = await new Promise<number>((resolve) =>
      holder.listen(0, '127.0.0.1', () => resolve((holder.address() as net.AddressInfo).port)),
    );
    try {
      const s = await launch(process.execPath, ['scripts/serve.mjs'], { DATABASE_URL: db.url }, port);
      const code = await Promise.race([s.exited, new Promise<'alive'>((r) => setTimeout(() => r('alive'), 45_000))]);
      if (code === 'alive') process.kill(-s.child.pid!, 'SIGKILL');
      expect(code, s.output()).toBe(1);
      expect(s.output()).toContain(`cannot listen on 127.0.0.1:${port}: the port is in use`);
    } finally {
      holder.close();
    }
  }, 60_000);

  for (const [how, signal] of [
    ['Ctrl-C (SIGINT to the process group)', 'SIGINT'],
    ['SIGTERM to the process group (systemd)', 'SIGTERM'],
  ] as const) {
    it(`npm start, ${how}: a parked poll gets its 204, one graceful shutdown, exit 0`, async () => {
      const s = await launch('npm', ['start', '--silent'], { DATABASE_URL: db.url, SHUTDOWN_TIMEOUT_MS: '20000' });
      try {
        await waitForHealth(s.url, s.child, s.output);
        // one Node.js process serves: the one that started (start.mjs's line) is the one listening
        const pidOf = (msg: string) =>
          s
            .output()
            .split('\n')
            .filter((l) => l.includes(`"msg":"${msg}`))
            .map((l) => JSON.parse(l).pid);
        // log lines reach stdout in batches (lib/log.mjs): /health may answer before the listening line is out
        await vi.waitFor(() => expect(pidOf('broker and dashboard listening')).not.toHaveLength(0), {
          timeout: 10_000,
        });
        expect(pidOf('using the PostgreSQL of DATABASE_URL')).toEqual(pidOf('broker and dashboard listening'));
        expect(pidOf('broker and dashboard listening')).toHaveLength(1);
        const poll = parkedPoll(s.url, `sup.${signal}`);
        await parked(s.url, 1);
        process.kill(-s.child.pid!, signal);
        expect(await poll).toEqual({ status: 204, why: 'shutdown' });
        expect(await s.exited, s.output()).toBe(0);
        expect(s.output()).not.toContain('second signal');
        expect(s.output().match(/"msg":"shutting down"/g)).toHaveLength(1);
      } finally {
        try {
          process.kill(-s.child.pid!, 'SIGKILL');
        } catch {
          // gone
        }
      }
    }, 90_000);
  }

  it('a second explicit signal, after the first, exits at once with 1', async () => {
    const s = await launch(process.execPath, ['scripts/serve.mjs'], {
      DATABASE_URL: db.url,
      SHUTDOWN_TIMEOUT_MS: '600000',
    });
    let socket: net.Socket | undefined;
    try {
      await waitForHealth(s.url, s.child, s.output);
      // a push whose body never ends: the graceful shutdown waits for it
      socket = net.connect(s.port, '127.0.0.1');
      await new Promise<void>((r) => socket!.once('connect', () => r()));
      socket.write(
        'POST /api/v1/push HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"items":',
      );
      process.kill(s.child.pid!, 'SIGTERM');
      while (!s.output().includes('"msg":"shutting down"')) await new Promise((r) => setTimeout(r, 100));
      await new Promise((r) => setTimeout(r, 1500)); // past the window in which a signal counts as the same delivery
      expect(s.child.exitCode).toBe(null); // still waiting for the push
      process.kill(s.child.pid!, 'SIGTERM');
      expect(await s.exited).toBe(1);
      expect(s.output()).toContain('second signal: exiting now');
    } finally {
      socket?.destroy();
      try {
        process.kill(-s.child.pid!, 'SIGKILL');
      } catch {
        // gone
      }
    }
  }, 90_000);
});
