// Real processes for the production-topology tests (tests/ha): PgBouncer, HAProxy, etcd, Patroni,
// run as the postgres user when the tests run as root (PgBouncer and PostgreSQL refuse root), each
// in its own process group, stopped by the test that started it.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { stopProcessGroup } from '../../support/server';

export interface Proc {
  name: string;
  child: ChildProcess;
  output: () => string;
  /** SIGTERM to the group, SIGKILL after `graceMs`; resolves once it exited. */
  stop: (graceMs?: number) => Promise<void>;
}

const postgresIds = (() => {
  if (process.getuid?.() !== 0) return undefined;
  const id = (flag: string) => Number(spawnSync('id', [flag, 'postgres'], { encoding: 'utf8' }).stdout.trim());
  return { uid: id('-u'), gid: id('-g') };
})();

/** A directory the postgres user owns, removed by `cleanup`. */
export function workDir(prefix: string): { dir: string; cleanup: () => void } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `queen-${prefix}-`));
  fs.chmodSync(dir, 0o700);
  if (postgresIds) fs.chownSync(dir, postgresIds.uid, postgresIds.gid);
  return { dir, cleanup: () => fs.rmSync(dir, { recursive: true, force: true }) };
}

/** Writes a file the postgres user can read (and own). */
export function writeOwned(file: string, text: string, mode = 0o600) {
  fs.writeFileSync(file, text, { mode });
  if (postgresIds) fs.chownSync(file, postgresIds.uid, postgresIds.gid);
}

/** Whether `command` is on the PATH (the tests name the Debian package that provides it when not). */
export function have(command: string): boolean {
  return spawnSync('sh', ['-c', `command -v ${command}`]).status === 0;
}

export function start(
  name: string,
  command: string,
  args: string[],
  { env = {}, asPostgres = true, cwd }: { env?: Record<string, string>; asPostgres?: boolean; cwd?: string } = {},
): Proc {
  const child = spawn(command, args, {
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...env },
    cwd,
    ...(asPostgres && postgresIds ? postgresIds : {}),
  });
  let output = '';
  const keep = (d: Buffer) => {
    output += d;
    if (output.length > 200_000) output = output.slice(-100_000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  return {
    name,
    child,
    output: () => output,
    stop: (graceMs = 10_000) => stopGroup(child, graceMs),
  };
}

export const stopGroup = (child: ChildProcess, graceMs: number, signal: NodeJS.Signals = 'SIGTERM') =>
  stopProcessGroup(child, signal, graceMs);

/** Resolves once something accepts TCP connections on 127.0.0.1:`port`; throws naming `proc`'s output otherwise. */
export async function listening(port: number, proc?: Proc, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (proc && proc.child.exitCode !== null)
      throw new Error(`${proc.name} exited (${proc.child.exitCode}):\n${proc.output()}`);
    const ok = await new Promise<boolean>((resolve) => {
      const s = net.connect(port, '127.0.0.1', () => {
        s.destroy();
        resolve(true);
      });
      s.on('error', () => resolve(false));
    });
    if (ok) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`nothing listens on ${port} after ${timeoutMs} ms${proc ? `:\n${proc.output()}` : ''}`);
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
