// Where the broker's PostgreSQL backends spend their active time: samples pg_stat_activity every
// 10 ms until interrupted (Ctrl-C, SIGTERM), then prints, per call (push, pop, claim, ack) and wait
// event, how often it was seen and its share of that call's samples (docs/performance.md,
// "Pushes under fan-out"). A measuring tool, run beside a load:
//   DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres node scripts/pg-waits.mjs
import pg from 'pg';

const client = new pg.Client({ connectionString: process.env.DATABASE_URL });
await client.connect();
const counts = new Map();
let samples = 0;
let stop = false;
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => (stop = true));
while (!stop) {
  const { rows } = await client.query(`
    select case when query like '%queen.push%' then 'push' when query like '%claim_for_waiters%' then 'claim'
                when query like '%pop_or_why%' then 'pop' when query like '%queen.ack%' then 'ack' else 'other' end as call,
           coalesce(wait_event_type || ':' || wait_event, 'cpu') as wait
    from pg_stat_activity
    where backend_type = 'client backend' and application_name like 'queen-pg%' and state = 'active'`);
  samples++;
  for (const { call, wait } of rows) counts.set(`${call} ${wait}`, (counts.get(`${call} ${wait}`) ?? 0) + 1);
  await new Promise((r) => setTimeout(r, 10));
}
await client.end();
const perCall = new Map();
for (const [key, n] of counts) perCall.set(key.split(' ')[0], (perCall.get(key.split(' ')[0]) ?? 0) + n);
console.log(`${samples} samples`);
for (const [key, n] of [...counts].sort((a, b) => b[1] - a[1])) {
  const call = key.split(' ')[0];
  console.log(`${key.padEnd(32)} ${String(n).padStart(6)}  ${((100 * n) / perCall.get(call)).toFixed(0)}% of ${call}`);
}
