// A booting instance takes only the CPU that the processes serving beside it leave (BOOT_NICE). A
// boot is ~1.2 s of CPU (loading Next.js and the app, migrations, warming connections): on a host
// whose cores other instances share, a rolling restart took it from them, and their requests slowed
// while it lasted (docs/scaling.md, "Behind a load balancer"). Linux only, and only where the
// process may raise its priority back afterwards: otherwise it would serve at the lower one.
import fs from 'node:fs';
import os from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';

const TASKS = '/proc/self/task';
// With CONFIG_SCHED_AUTOGROUP (most distributions) the scheduler shares the CPU between sessions
// first, each session's autogroup by its own nice value, and only then between a session's threads
// by theirs: a server that is its own session (a service, a detached child) is lowered only by its
// autogroup's value. (Inside a cgroup with the cpu controller, autogroups do not apply.)
const AUTOGROUP = '/proc/self/autogroup';
const CAP_SYS_NICE = 23n;
// The kernel takes one autogroup change every 100 ms, machine-wide, from a process without
// CAP_SYS_ADMIN (EAGAIN otherwise): instances booting together try again.
const AUTOGROUP_TRIES = 10;
const AUTOGROUP_RETRY_MS = 110;

/**
 * Lowers every thread of this process by `niceness` (0: nothing), and its autogroup when the
 * process leads its session (a session shared with a shell or a process manager is not this
 * process's to lower); returns what puts them back as they were, and says what it could not.
 * @param {number} niceness
 * @returns {() => Promise<string | undefined>} resolves to a problem, if one stayed
 */
export function yieldCpuWhileBooting(niceness) {
  const nothing = async () => undefined;
  if (niceness === 0 || !fs.existsSync(TASKS)) return nothing;
  const threads = os.getPriority();
  const group = leadsSession() ? readAutogroup() : undefined;
  if (threads >= 19 || !mayRaiseTo(Math.min(threads, group ?? threads))) return nothing;
  setThreads(Math.min(19, threads + niceness));
  const lowered = group !== undefined && writeAutogroup(Math.min(19, group + niceness)) === 'done';
  return async () => {
    const problem = setThreads(threads);
    if (problem || !lowered) return problem;
    for (let i = 0; i < AUTOGROUP_TRIES; i++) {
      const result = writeAutogroup(group);
      if (result === 'done') return undefined;
      if (result !== 'again') return `its autogroup stays at nice ${group + niceness}: ${result}`;
      await sleep(AUTOGROUP_RETRY_MS);
    }
    return `its autogroup stays at nice ${group + niceness}: the kernel refused the change ${AUTOGROUP_TRIES} times (EAGAIN)`;
  };
}

/**
 * Every thread: setpriority() on Linux sets one thread, and the boot has started several.
 * @returns {string | undefined} a problem, if a thread kept another priority
 */
function setThreads(priority) {
  let problem;
  for (const tid of fs.readdirSync(TASKS)) {
    try {
      os.setPriority(Number(tid), priority);
    } catch (err) {
      if (err.info?.code !== 'ESRCH') problem = `thread ${tid} stays at another nice value: ${err.message}`; // ESRCH: it ended
    }
  }
  return problem;
}

/** The session's id is the 6th field of /proc/self/stat, counted after the command's closing parenthesis. */
function leadsSession() {
  const stat = fs.readFileSync('/proc/self/stat', 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[3]) === process.pid;
}

/**
 * The autogroup's nice value; undefined without autogroups.
 * @param {number | 'self'} [pid]
 */
export function readAutogroup(pid = 'self') {
  try {
    const nice = /nice (-?\d+)/.exec(fs.readFileSync(`/proc/${pid}/autogroup`, 'utf8'));
    return nice ? Number(nice[1]) : undefined;
  } catch {
    return undefined;
  }
}

/** @returns {'done' | 'again' | string} */
function writeAutogroup(nice) {
  try {
    fs.writeFileSync(AUTOGROUP, String(nice));
    return 'done';
  } catch (err) {
    return err.code === 'EAGAIN' ? 'again' : err.message;
  }
}

/** CAP_SYS_NICE, or an RLIMIT_NICE that lets an unprivileged process back up to `priority`. */
export function mayRaiseTo(priority) {
  try {
    const cap = /^CapEff:\s*([0-9a-f]+)$/m.exec(fs.readFileSync('/proc/self/status', 'utf8'));
    if (cap && (BigInt(`0x${cap[1]}`) >> CAP_SYS_NICE) & 1n) return true;
    const limit = /^Max nice priority\s+(\S+)/m.exec(fs.readFileSync('/proc/self/limits', 'utf8'));
    return limit !== null && (limit[1] === 'unlimited' || 20 - Number(limit[1]) <= priority);
  } catch {
    return false;
  }
}
