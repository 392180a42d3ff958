// The README's two commands from a clone inside a private folder (mode 0700, as a root user's home
// is on Debian), run as root: the embedded PostgreSQL runs as the postgres user, which cannot enter
// that folder, so its binaries and data must be placed where it can.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { freePort } from '../db/embedded.mjs';
import { client } from './support/http';
import { stopProcessGroup, waitForHealth } from './support/server';

const root = path.join(__dirname, '..');

/** A copy of the project (sources with their times, so no rebuild; node_modules and .next as hard links). */
function copyProject(into: string) {
  fs.mkdirSync(into);
  const tar = spawnSync('sh', [
    '-c',
    `tar -C "${root}" --exclude=./node_modules --exclude=./.next --exclude=./.git --exclude=./test-results --exclude=./.data -cf - . | tar -C "${into}" -xf -`,
  ]);
  expect(tar.status).toBe(0);
  for (const dir of ['node_modules', '.next'])
    expect(spawnSync('cp', ['-al', path.join(root, dir), path.join(into, dir)]).status).toBe(0);
}

describe.runIf(process.getuid?.() === 0)('from a private folder, as root', () => {
  it('npm start and npm test work, with what the postgres user must reach placed where it can', async () => {
    const outer = fs.mkdtempSync(path.join(os.tmpdir(), 'queen-private-'));
    fs.chmodSync(outer, 0o700);
    const project = path.join(outer, 'project');
    copyProject(project);
    const env: NodeJS.ProcessEnv = { ...process.env, NEXT_TELEMETRY_DISABLED: '1' };
    delete env.DATABASE_URL;
    delete env.TEST_ADMIN_DATABASE_URL;
    let dataDir: string | undefined;
    try {
      const port = await freePort();
      const child = spawn(process.execPath, ['scripts/start.mjs'], {
        cwd: project,
        env: { ...env, PORT: String(port) },
        detached: true,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let output = '';
      child.stdout.on('data', (d) => (output += d));
      child.stderr.on('data', (d) => (output += d));
      try {
        await waitForHealth(`http://127.0.0.1:${port}`, child, () => output, 90_000);
        dataDir = output.match(/data in (\S+)/)?.[1];
        expect(output).toContain(`the postgres user cannot reach ${path.join(project, '.data')}`);
        expect((await client(`http://127.0.0.1:${port}`).push([{ queue: 'private.check', payload: 1 }])).status).toBe(
          201,
        );
      } finally {
        await stopProcessGroup(child);
      }

      const test = spawnSync(process.execPath, ['scripts/test.mjs', '--unit', 'tests/config.test.ts'], {
        cwd: project,
        env,
        encoding: 'utf8',
        timeout: 120_000,
      });
      expect(test.status, test.stdout + test.stderr).toBe(0);
    } finally {
      fs.rmSync(outer, { recursive: true, force: true });
      if (dataDir?.startsWith('/var/lib/queen-pg/data-')) fs.rmSync(dataDir, { recursive: true, force: true });
    }
  }, 240_000);
});
