// `npm test` (scripts/test.mjs): every runner runs whatever the one before found, the summary
// names the failed ones, the browser tests' servers take free ports, and no test measures time.
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { e2ePorts, runAll } from '../scripts/lib/runners.mjs';

const root = path.join(__dirname, '..');

describe('the test runner', () => {
  it('runs the second runner after the first failed, and the summary names the failed one', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'queen-runners-'));
    try {
      const marker = path.join(dir, 'ran');
      const outcome = await runAll(
        [
          { name: 'vitest', command: process.execPath, args: ['-e', 'process.exit(3)'] },
          {
            name: 'playwright',
            command: process.execPath,
            args: ['-e', `require('fs').writeFileSync(${JSON.stringify(marker)}, 'yes')`],
          },
        ],
        { stdio: 'ignore' },
      );
      expect(fs.existsSync(marker)).toBe(true);
      expect(outcome.failed).toEqual(['vitest']);
      expect(outcome.summary).toContain('vitest: FAILED (exit 3)');
      expect(outcome.summary).toContain('playwright: passed');
      expect(outcome.summary).toContain('failed: vitest');
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('keeps its own event loop free while a runner runs: it hosts the embedded PostgreSQL, whose log it must keep reading', async () => {
    let ticks = 0;
    const ticker = setInterval(() => ticks++, 20);
    try {
      const outcome = await runAll(
        [{ name: 'vitest', command: process.execPath, args: ['-e', 'setTimeout(() => {}, 600)'] }],
        { stdio: 'ignore' },
      );
      expect(outcome.failed).toEqual([]);
    } finally {
      clearInterval(ticker);
    }
    // a blocked loop (spawnSync) runs no timer until the runner has ended
    expect(ticks).toBeGreaterThan(5);
  });

  it('counts a runner whose setup throws as failed and still runs the next', async () => {
    const outcome = await runAll(
      [
        {
          name: 'a',
          command: process.execPath,
          args: ['-e', ''],
          before: async () => {
            throw new Error('no database');
          },
        },
        { name: 'b', command: process.execPath, args: ['-e', ''] },
      ],
      { stdio: 'ignore' },
    );
    expect(outcome.results).toEqual([
      { name: 'a', status: 1 },
      { name: 'b', status: 0 },
    ]);
  });

  it('gives the Playwright servers two distinct free ports, unless E2E_PORT says which', async () => {
    const ports = await e2ePorts({});
    expect(ports.E2E_PORT).not.toBe(ports.E2E_AUTH_PORT);
    for (const port of [ports.E2E_PORT, ports.E2E_AUTH_PORT]) {
      await new Promise<void>((resolve, reject) => {
        const s = net
          .createServer()
          .once('error', reject)
          .listen(Number(port), '127.0.0.1', () => s.close(() => resolve()));
      });
    }
    expect(await e2ePorts({ E2E_PORT: '7110' })).toEqual({ E2E_PORT: '7110', E2E_AUTH_PORT: '7111' });
    expect(await e2ePorts({ E2E_PORT: '7110', E2E_AUTH_PORT: '7120' })).toEqual({
      E2E_PORT: '7110',
      E2E_AUTH_PORT: '7120',
    });
  });

  it('no test asserts an upper bound on a wall-clock duration (speed is `npm run bench`)', () => {
    const files = ['tests', 'e2e']
      .flatMap((d) =>
        fs.readdirSync(path.join(root, d), { recursive: true, encoding: 'utf8' }).map((f) => path.join(d, f)),
      )
      .filter((f) => /\.(test|spec)\.ts$/.test(f));
    // an expect on a time (now(), ms, took, …At, …In) against a fixed upper bound
    const timing =
      /expect\(([^;]*(Date\.now\(\)|performance\.now\(\)|\bms\b|took|latenc|elapsed|wake|[a-z](At|In)\b)[^;]*)\)\s*\.toBeLessThan(OrEqual)?\((\d|[A-Z_]+\))/;
    const found = files.flatMap((f) =>
      fs
        .readFileSync(path.join(root, f), 'utf8')
        .split('\n')
        .map((line, i) => ({ at: `${f}:${i + 1}`, line: line.trim() }))
        .filter(({ line }) => timing.test(line)),
    );
    expect(found).toEqual([]);
  });
});
