// Memory given back when the server goes quiet. V8 keeps its young generation at the size the last
// busy stretch grew it to (the boot's, a load's: 2 x 16 MB semi-spaces, ~25-30 MB resident) and
// shrinks it only in a collection made while little is being allocated, which an idle server does
// not make on its own (V8's memory reducer does, but only armed by an old-generation collection,
// which a load often ends without: RSS stayed ~150 MB after a bp-10 run). A full collection once
// the process has been quiet for a whole interval gives that back, and a compacting one after it the
// old space's fragmented pages (docs/performance.md, "Memory").
// Nothing runs per request: a timer reads the process's CPU time.
import v8 from 'node:v8';
import { runInNewContext } from 'node:vm';

// the young generation's committed bytes; at or under SMALL_YOUNG there is nothing to give back
const young = () => v8.getHeapSpaceStatistics().find((s) => s.space_name === 'new_space')?.space_size ?? 0;
const SMALL_YOUNG = 4 * 1024 * 1024;

/**
 * Every `intervalMs`, reads the process's CPU time: an interval that used more than `busyShare` of
 * it is busy; the first quiet interval after a busy one (the boot counts as one) runs one full
 * collection. A steadily idle or lightly loaded server collects once, not every interval. V8
 * shrinks the young generation only if its allocation rate over the last ~5 s is low, so the
 * interval stays above that; where it still judged the rate high (its estimate can lag on a
 * loaded machine), the next quiet interval tries again, up to `attempts` in all.
 * @param {{ intervalMs?: number, busyShare?: number, attempts?: number, onCollect?: (young: number) => void }} [options]
 * @returns {() => void} stops the timer
 */
export function collectWhenIdle({ intervalMs = 10_000, busyShare = 0.05, attempts = 3, onCollect } = {}) {
  /** @type {(() => void) | undefined} */
  let gc;
  let last = process.cpuUsage();
  let busy = true;
  let tries = 0;
  const timer = setInterval(() => {
    const now = process.cpuUsage();
    const usedMs = (now.user - last.user + now.system - last.system) / 1000;
    last = now;
    if (usedMs > intervalMs * busyShare) {
      busy = true;
      tries = 0;
      return;
    }
    if (!busy) return;
    if (!gc) {
      v8.setFlagsFromString('--expose-gc');
      gc = runInNewContext('gc');
    }
    const grown = young();
    gc();
    v8.setFlagsFromString('--compact-on-every-full-gc');
    gc();
    v8.setFlagsFromString('--no-compact-on-every-full-gc');
    const after = young();
    busy = after >= grown && grown > SMALL_YOUNG && ++tries < attempts;
    onCollect?.(after);
  }, intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}
