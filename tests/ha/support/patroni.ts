// A two-node Patroni cluster on this machine (issue 33, item 1): one etcd, two PostgreSQL 15 nodes
// with synchronous replication (synchronous_mode), and HAProxy in TCP mode sending connections
// to whichever node Patroni's REST API says is the primary (GET /primary answers 200 only there).
import fs from 'node:fs';
import path from 'node:path';
import { freePort } from '../../../db/embedded.mjs';
import { startHaProxy, type HaProxy } from './haproxy';
import { have, listening, sleep, start, workDir, writeOwned, type Proc } from './procs';

export const PG_BIN = '/usr/lib/postgresql/15/bin';

export interface PatroniNode {
  name: string;
  pgPort: number;
  restPort: number;
  dataDir: string;
  proc: Proc;
}

export interface PatroniCluster {
  nodes: PatroniNode[];
  /** HAProxy's port for the primary. */
  port: number;
  proxy: HaProxy;
  /** The node Patroni's REST API names primary now, if any. */
  primary: () => Promise<PatroniNode | undefined>;
  /** The synchronous standby of the leader, per the cluster's state. */
  members: () => Promise<{ name: string; role: string; state: string; lag?: number | string }[]>;
  /** A planned switchover to `candidate` through the REST API; resolves with Patroni's answer. */
  switchover: (from: PatroniNode, to: PatroniNode) => Promise<{ status: number; text: string }>;
  /** SIGKILL to the postmaster of `node` (its backends then exit by themselves). */
  killPostmaster: (node: PatroniNode) => number;
  output: () => string;
  stop: () => Promise<void>;
}

export function patroniMissing(): string | undefined {
  for (const [command, pkg] of [
    ['patroni', 'patroni'],
    ['etcd', 'etcd-server'],
    ['haproxy', 'haproxy'],
    [`${PG_BIN}/postgres`, 'postgresql-15'],
  ])
    if (!have(command)) return `${command} is not installed: apt-get install -y ${pkg} (.ci/run does)`;
  return undefined;
}

export async function startPatroni(): Promise<PatroniCluster> {
  const missing = patroniMissing();
  if (missing) throw new Error(missing);
  const { dir, cleanup } = workDir('patroni');
  const [clientPort, peerPort] = [await freePort(), await freePort()];
  const etcd = start('etcd', 'etcd', [
    '--name=queen',
    `--data-dir=${dir}/etcd`,
    `--listen-client-urls=http://127.0.0.1:${clientPort}`,
    `--advertise-client-urls=http://127.0.0.1:${clientPort}`,
    `--listen-peer-urls=http://127.0.0.1:${peerPort}`,
    `--initial-advertise-peer-urls=http://127.0.0.1:${peerPort}`,
    `--initial-cluster=queen=http://127.0.0.1:${peerPort}`,
    '--log-level=warn',
  ]);
  const procs: Proc[] = [etcd];
  let proxy: HaProxy | undefined;
  const stop = async () => {
    await proxy?.stop();
    // the nodes first (each stops its PostgreSQL), etcd last
    await Promise.all(procs.slice(1).map((p) => p.stop(30_000)));
    await etcd.stop();
    // a postmaster left behind (its Patroni killed first) must not outlive the test
    for (const n of nodes) {
      const pid = postmasterPid(n.dataDir);
      if (pid)
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // gone
        }
    }
    cleanup();
  };
  const nodes: PatroniNode[] = [];
  try {
    await listening(clientPort, etcd);
    const scope = `queen-${path.basename(dir)}`;
    for (const name of ['n1', 'n2']) {
      const [pgPort, restPort] = [await freePort(), await freePort()];
      const dataDir = path.join(dir, name);
      const config = path.join(dir, `${name}.yml`);
      writeOwned(
        config,
        `scope: ${scope}
namespace: /queen/
name: ${name}
log:
  level: WARNING
restapi:
  listen: 127.0.0.1:${restPort}
  connect_address: 127.0.0.1:${restPort}
etcd3:
  hosts: 127.0.0.1:${clientPort}
bootstrap:
  dcs:
    ttl: 20
    loop_wait: 1
    retry_timeout: 5
    maximum_lag_on_failover: 1048576
    synchronous_mode: true
    primary_start_timeout: 0
    postgresql:
      use_pg_rewind: false
      parameters:
        synchronous_commit: 'on'
        max_connections: 200
        wal_level: replica
        hot_standby: 'on'
        max_wal_senders: 10
        max_replication_slots: 10
        wal_keep_size: 256MB
  initdb:
    - encoding: UTF8
    - locale: C
  pg_hba:
    - host replication postgres 127.0.0.1/32 trust
    - host all all 127.0.0.1/32 trust
postgresql:
  listen: 127.0.0.1:${pgPort}
  connect_address: 127.0.0.1:${pgPort}
  data_dir: ${dataDir}
  bin_dir: ${PG_BIN}
  pgpass: ${dir}/pgpass-${name}
  authentication:
    superuser:
      username: postgres
    replication:
      username: postgres
  parameters:
    unix_socket_directories: '${dir}'
    timezone: UTC
`,
      );
      const proc = start(`patroni ${name}`, 'patroni', [config]);
      procs.push(proc);
      nodes.push({ name, pgPort, restPort, dataDir, proc });
      // the first bootstraps the cluster; the second then clones it
      await waitFor(async () => (await rest(restPort, 'GET', '/health')).status === 200, 90_000, proc);
    }
    const role = async (n: PatroniNode) => (await rest(n.restPort, 'GET', '/primary')).status === 200;
    // the standby is synchronous before anything is written
    await waitFor(
      async () => {
        const r = await rest(nodes[0].restPort, 'GET', '/cluster');
        const members = r.status === 200 ? JSON.parse(r.text).members : [];
        return members.some((m: { role: string }) => m.role === 'sync_standby');
      },
      60_000,
      nodes[1].proc,
    );
    proxy = await startHaProxy(
      (port) => `
listen postgres
  mode tcp
  bind 127.0.0.1:${port}
  option httpchk
  http-check send meth GET uri /primary
  http-check expect status 200
  timeout client 65s
  timeout server 65s
  default-server inter 500ms fall 1 rise 1 on-marked-down shutdown-sessions
${nodes.map((n) => `  server ${n.name} 127.0.0.1:${n.pgPort} check port ${n.restPort}`).join('\n')}
`,
    );
    const p = proxy;
    // HAProxy 2.6 starts every server UP until its first check: wait for the checks' verdict
    await waitFor(async () => {
      const up = (await p.servers('postgres')).filter((s) => s.status === 'UP').map((s) => s.name);
      const leader = (await Promise.all(nodes.map(async (n) => ((await role(n)) ? n.name : '')))).filter(Boolean);
      return up.length === 1 && leader.length === 1 && up[0] === leader[0];
    }, 15_000);
    return {
      nodes,
      port: proxy.port,
      proxy,
      primary: async () => {
        for (const n of nodes) if (await role(n).catch(() => false)) return n;
        return undefined;
      },
      members: async () => {
        for (const n of nodes) {
          const r = await rest(n.restPort, 'GET', '/cluster');
          if (r.status === 200) return JSON.parse(r.text).members;
        }
        return [];
      },
      switchover: (from, to) => rest(from.restPort, 'POST', '/switchover', { leader: from.name, candidate: to.name }),
      killPostmaster: (node) => {
        const pid = postmasterPid(node.dataDir);
        if (!pid) throw new Error(`no postmaster.pid in ${node.dataDir}`);
        process.kill(pid, 'SIGKILL');
        return pid;
      },
      output: () => procs.map((p) => `--- ${p.name}\n${p.output()}`).join('\n'),
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

function postmasterPid(dataDir: string): number | undefined {
  try {
    return Number(fs.readFileSync(path.join(dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]) || undefined;
  } catch {
    return undefined;
  }
}

async function rest(port: number, method: string, route: string, body?: unknown) {
  try {
    const res = await fetch(`http://127.0.0.1:${port}${route}`, {
      method,
      headers: body ? { 'content-type': 'application/json' } : {},
      body: body ? JSON.stringify(body) : undefined,
      signal: AbortSignal.timeout(30_000),
    });
    return { status: res.status, text: await res.text() };
  } catch (err) {
    return { status: 0, text: (err as Error).message };
  }
}

async function waitFor(done: () => Promise<boolean>, ms: number, proc?: Proc) {
  const deadline = Date.now() + ms;
  while (!(await done().catch(() => false))) {
    if (proc && proc.child.exitCode !== null) throw new Error(`${proc.name} exited:\n${proc.output()}`);
    if (Date.now() > deadline) throw new Error(`not done within ${ms} ms${proc ? `:\n${proc.output()}` : ''}`);
    await sleep(250);
  }
}
