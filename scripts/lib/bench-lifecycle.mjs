// The lifecycle job's cost (issue 17): a run with nothing due among 100,000 partitions, and a run
// with work, per removed message. Both call queen.run_lifecycle on our own database, as the
// job's instance does (its session settings included), timed from the client on the same machine.
import pg from 'pg';

const SESSION = 'set enable_seqscan = off; set jit = off; set plan_cache_mode = force_custom_plan';
const run = (client) => client.query('call queen.run_lifecycle(200, 90, 30, $1, 1000, null)', ['bench']);

async function timedRuns(client, n) {
  const ms = [];
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    await run(client);
    ms.push(performance.now() - t);
  }
  ms.sort((a, b) => a - b);
  return { p50: +ms[Math.floor(n / 2)].toFixed(2), p99: +ms[Math.min(n - 1, Math.floor(n * 0.99))].toFixed(2) };
}

/** `partitions` partitions of `perPartition` consumed messages each, in one queue with ttl 60 s, written straight into the database. */
async function consumedQueue(client, name, partitions, perPartition) {
  await client.query(
    `
    with q as (insert into queen.queues (id, name, ttl) values (queen.uuidv7(), $1, 60) returning id),
    g as (insert into queen.queue_groups (queue_id, consumer_group) select q.id, 'done' from q),
    p as (
      insert into queen.partitions (id, queue_id, name, head_offset, last_push_at, retain_check_at)
      select queen.uuidv7(), q.id, 'p' || j, $3, now(), now() + interval '1 hour' from q, generate_series(1, $2::int) j
      returning id, queue_id),
    s as (insert into queen.segments (partition_id, first_offset, last_offset, created_at) select p.id, 1, $3, now() from p),
    m as (
      insert into queen.messages (partition_id, "offset", id, transaction_id, payload, segment_offset)
      select p.id, o, queen.uuidv7(), p.id::text || '-' || o, '{"body":"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"}', 1
      from p, generate_series(1, $3::int) o)
    insert into queen.cursors (partition_id, consumer_group, queue_id, committed_offset, max_delivered_offset)
    select p.id, 'done', p.queue_id, $3, $3 from p`,
    [name, partitions, perPartition],
  );
  await client.query('analyze');
}

export async function lifecycleScenarios({ url, run: runId, report, wanted }) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(SESSION);
    if (wanted('lifecycle-idle-100k')) {
      await consumedQueue(client, `bench.lc.idle.${runId}`, 100_000, 1);
      await client.query(
        `update queen.partitions set retain_check_at = now() + interval '1 hour' where retain_check_at <= now() + interval '1 hour'`,
      );
      const { rows } = await client.query('select count(*)::int as n from queen.partitions');
      await run(client); // warm
      const r = await timedRuns(client, 50);
      report(
        'lifecycle-idle-100k',
        { perSecond: '', calls: 50, ...r },
        '',
        `one run of the lifecycle job with nothing due, ${rows[0].n.toLocaleString('en')} partitions in the database (target ≤ 10 ms)`,
      );
    }
    if (wanted('lifecycle-work')) {
      const queue = `bench.lc.work.${runId}`;
      await consumedQueue(client, queue, 200, 500);
      await client.query(
        `update queen.segments s set created_at = now() - interval '2 hours'
        from queen.partitions p join queen.queues q on q.id = p.queue_id where s.partition_id = p.id and q.name = $1`,
        [queue],
      );
      await client.query(
        `update queen.partitions p set retain_check_at = now() - interval '1 second'
        from queen.queues q where q.id = p.queue_id and q.name = $1`,
        [queue],
      );
      const t = performance.now();
      const { rows } = await run(client);
      const ms = performance.now() - t;
      const removed = rows[0].p_summary.removedByOption.ttl ?? 0;
      report(
        'lifecycle-work',
        { perSecond: Math.round(removed / (ms / 1000)), calls: 1, p50: +ms.toFixed(1), p99: +ms.toFixed(1) },
        'msg/s',
        `one run removing ${removed.toLocaleString('en')} consumed messages of 200 due partitions (the app's own job may take some of them): ${((ms * 1000) / Math.max(removed, 1)).toFixed(1)} µs per removed message`,
      );
    }
  } finally {
    await client.end();
  }
}
