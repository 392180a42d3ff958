// A booting instance takes only the CPU that the processes serving beside it leave (BOOT_NICE). A
// boot is ~1.2 s of CPU (loading Next.js and the app, migrations, warming connections): on a host
// whose cores other instances share, a rolling restart took it from them, and their requests slowed
// while it lasted (docs/scaling.md, "Behind a load balancer"). Linux only, and only where the
// process may raise its priority back afterwards: otherwise it would serve at the lower one.
import fs from 'node:fs';
import os from 'node:os';

const TASKS = '/proc/self/task';
// With CONFIG_SCHED_AUTOGROUP (most distributions) the scheduler shares the CPU between sessions
// first, each session's autogroup by its own nice value, and only then between a session's threads
// by theirs: a server that is its own session (a service, a detached child) is lowered only by its
// autogroup's value.
const AUTOGROUP = '/proc/self/autogroup';
const CAP_SYS_NICE = 23n;

/**
 * Lowers every thread of this process, and its autogroup, by `niceness` (0: nothing); returns
 * what puts them back as they were.
 * @param {number} niceness
 * @returns {() => void}
 */
export function yieldCpuWhileBooting(niceness) {
  if (niceness === 0 || !fs.existsSync(TASKS)) return () => {};
  const threads = os.getPriority();
  if (threads >= 19 || !mayRaiseTo(threads)) return () => {};
  setThreads(Math.min(19, threads + niceness));
  const group = readAutogroup();
  if (group !== undefined) writeAutogroup(Math.min(19, group + niceness));
  return () => {
    setThreads(threads);
    if (group !== undefined) writeAutogroup(group);
  };
}

/** Every thread: setpriority() on Linux sets one thread, and the boot has started several. */
function setThreads(priority) {
  for (const tid of fs.readdirSync(TASKS)) {
    try {
      os.setPriority(Number(tid), priority);
    } catch {
      // a thread that ended meanwhile
    }
  }
}

function readAutogroup() {
  try {
    const nice = /nice (-?\d+)/.exec(fs.readFileSync(AUTOGROUP, 'utf8'));
    return nice ? Number(nice[1]) : undefined;
  } catch {
    return undefined; // no autogroups in this kernel
  }
}

function writeAutogroup(nice) {
  try {
    fs.writeFileSync(AUTOGROUP, String(nice));
  } catch {
    // autogroups turned off (kernel.sched_autogroup_enabled=0)
  }
}

/** CAP_SYS_NICE, or an RLIMIT_NICE that lets an unprivileged process back up to `priority`. */
function mayRaiseTo(priority) {
  try {
    const cap = /^CapEff:\s*([0-9a-f]+)$/m.exec(fs.readFileSync('/proc/self/status', 'utf8'));
    if (cap && (BigInt(`0x${cap[1]}`) >> CAP_SYS_NICE) & 1n) return true;
    const limit = /^Max nice priority\s+(\S+)/m.exec(fs.readFileSync('/proc/self/limits', 'utf8'));
    return limit !== null && (limit[1] === 'unlimited' || 20 - Number(limit[1]) <= priority);
  } catch {
    return false;
  }
}
