import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { freePort } from '../db/embedded.mjs';
import { client } from './support/http';
import { stopProcessGroup, waitForHealth } from './support/server';

const root = path.join(__dirname, '..');

describe('npm start without DATABASE_URL', () => {
  it('starts an embedded PostgreSQL with its data in QUEEN_DATA_DIR, serves, and keeps the data across restarts', async () => {
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'queen-embedded-'));
    fs.chmodSync(tmp, 0o755);
    const dataDir = path.join(tmp, 'data');
    const port = await freePort();
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      PORT: String(port),
      QUEEN_DATA_DIR: dataDir,
      NEXT_TELEMETRY_DISABLED: '1',
    };
    delete env.DATABASE_URL;

    const start = async () => {
      const child = spawn(process.execPath, ['scripts/start.mjs'], {
        cwd: root,
        env,
        detached: true,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let output = '';
      child.stdout.on('data', (d) => (output += d));
      child.stderr.on('data', (d) => (output += d));
      await waitForHealth(`http://127.0.0.1:${port}`, child, () => output, 90_000);
      return { child, output: () => output };
    };

    try {
      const first = await start();
      expect(first.output()).toMatch(
        new RegExp(
          `embedded PostgreSQL on 127\\.0\\.0\\.1:\\d+, data in ${dataDir.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`,
        ),
      );
      const api = client(`http://127.0.0.1:${port}`);
      const pushed = await api.push([{ queue: 'embedded.check', payload: { hello: 'world' } }]);
      expect(pushed.status).toBe(201);
      // Ctrl-C in a terminal: SIGINT to the whole process group, postgres included.
      await stopProcessGroup(first.child, 'SIGINT');
      expect(fs.existsSync(path.join(dataDir, 'postmaster.pid'))).toBe(false); // PostgreSQL stopped with the app

      const second = await start();
      const queue = await api.get('/api/v1/resources/queues/embedded.check');
      expect(queue.status).toBe(200);
      expect(queue.body.partitions[0].headOffset).toBe(1);
      // A service manager stopping the main process only: it must stop the app and PostgreSQL.
      const exited = new Promise((resolve) => second.child.once('exit', resolve));
      process.kill(second.child.pid!, 'SIGTERM');
      expect(await exited).toBe(0);
      expect(fs.existsSync(path.join(dataDir, 'postmaster.pid'))).toBe(false);

      // The server runs in start.mjs's own process: a listen error ends it, and PostgreSQL with it.
      const holder = net.createServer();
      await new Promise<void>((resolve) => holder.listen(port, '127.0.0.1', () => resolve()));
      try {
        const child = spawn(process.execPath, ['scripts/start.mjs'], {
          cwd: root,
          env,
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        let output = '';
        child.stdout.on('data', (d) => (output += d));
        child.stderr.on('data', (d) => (output += d));
        const code = await new Promise((resolve) => child.once('exit', resolve));
        expect(code, output).toBe(1);
        expect(output).toContain(`cannot listen on 127.0.0.1:${port}: the port is in use`);
        expect(fs.existsSync(path.join(dataDir, 'postmaster.pid'))).toBe(false);
      } finally {
        holder.close();
      }
    } finally {
      fs.rmSync(tmp, { recursive: true, force: true });
    }
  }, 180_000);
});
