import path from 'node:path';
import { freePort } from '../../../db/embedded.mjs';
import { have, listening, start, workDir, writeOwned, type Proc } from './procs';

export interface HaProxy {
  port: number;
  /** Each server of `backend`: its name and its status as HAProxy sees it (UP, DOWN, ...). */
  servers: (backend: string) => Promise<{ name: string; status: string }[]>;
  proc: Proc;
  stop: () => Promise<void>;
}

/**
 * HAProxy on a free port with the given frontend/backend sections (`{{port}}` in them is that port),
 * plus a stats page on another port, which `servers()` reads.
 */
export async function startHaProxy(sections: (port: number) => string): Promise<HaProxy> {
  if (!have('haproxy')) throw new Error('haproxy is not installed: apt-get install -y haproxy (.ci/run does)');
  const { dir, cleanup } = workDir('haproxy');
  const [port, statsPort] = [await freePort(), await freePort()];
  writeOwned(
    path.join(dir, 'haproxy.cfg'),
    `global
  maxconn 4000

defaults
  timeout connect 2s
  timeout client 65s
  timeout server 65s
  timeout check 2s

listen stats
  mode http
  bind 127.0.0.1:${statsPort}
  stats enable
  stats uri /stats

${sections(port)}
`,
  );
  const proc = start('haproxy', 'haproxy', ['-db', '-f', path.join(dir, 'haproxy.cfg')]);
  await listening(port, proc);
  await listening(statsPort, proc);
  return {
    port,
    servers: async (backend) => {
      const csv = await (await fetch(`http://127.0.0.1:${statsPort}/stats;csv`)).text();
      const [header, ...rows] = csv.split('\n').filter(Boolean);
      const cols = header.replace(/^# /, '').split(',');
      const at = (name: string) => cols.indexOf(name);
      return rows
        .map((r) => r.split(','))
        .filter((r) => r[at('pxname')] === backend && !['FRONTEND', 'BACKEND'].includes(r[at('svname')]))
        .map((r) => ({ name: r[at('svname')], status: r[at('status')] }));
    },
    proc,
    stop: async () => {
      await proc.stop();
      cleanup();
    },
  };
}
