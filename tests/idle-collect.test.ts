// The server (scripts/serve.mjs) gives back the young generation a busy stretch grew (the boot's, a load's) once
// the process goes quiet: V8 alone keeps it at full size (docs/performance.md, "Memory").
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const moduleUrl = `file://${path.join(import.meta.dirname, '..', 'scripts', 'lib', 'idle-collect.mjs')}`;

// A child process grows its young generation with a burst of short-lived allocations, then waits
// for the collection and reports the young generation's committed size before and after.
const child = `
import v8 from 'node:v8';
import { collectWhenIdle } from ${JSON.stringify(moduleUrl)};
const young = () => v8.getHeapSpaceStatistics().find((s) => s.space_name === 'new_space').space_size;
let keep = [];
for (let i = 0; i < 3e6; i++) { keep.push({ i, s: 'x' + i }); if (keep.length > 300000) keep = []; }
keep = undefined;
const before = young();
const sizes = [];
const done = () => { console.log(JSON.stringify({ before, sizes })); process.exit(0); };
collectWhenIdle({ intervalMs: 6000, onCollect: (after) => {
  sizes.push(after);
  if (after < before / 4 || sizes.length === 3) done();
} });
// a collection that shrank it only partly is not tried again: what there is, after the three intervals
setTimeout(done, 3 * 6000 + 2000);
setInterval(() => {}, 1000);
`;

describe('collectWhenIdle', () => {
  it('shrinks the young generation in a quiet interval after a busy one, trying again if V8 kept it', () => {
    const out = execFileSync(process.execPath, ['--input-type=module', '-e', child], {
      encoding: 'utf8',
      timeout: 60_000,
    });
    const { before, sizes } = JSON.parse(out);
    expect(before).toBeGreaterThan(8 * 1024 * 1024);
    // V8 may judge the allocation rate still high at the first quiet interval; the next one tries again
    expect(Math.min(...sizes)).toBeLessThan(before / 4);
  });
});
