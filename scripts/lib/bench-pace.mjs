// `--only lifecycle-pace` (issue 30): does the lifecycle job keep pace at the bench's top rate under
// default options (ttl 3600 s, dedup window 7200 s, deliveries kept 24 h)? A broker that has run at
// that rate for hours has, every second, as much becoming due as it takes in: a second's consumed
// messages past their ttl (whose transaction ids are then remembered), a second's remembered ids
// past the dedup window, a second's claims past the deliveries' retention. So before the load, this
// writes straight into the database an earlier hour of that rate, as long as the run and all due
// now: consumed messages 1.5 h old, remembered ids past their window, deliveries 25 h old. Then it
// pushes and pops + acks at full speed with default options for --minutes (default 3), and prints
// the rows and size of every `queen` table at the start and the end, and what is still due.
// Kept pace: nothing seeded is left, and the tables grew by what the load itself wrote.
//
//   --minutes N        length of the load (default 3)
//   --pace-rate N      messages a second the seeded hour stands for (default 11000, popack-8p's rate)
import pg from 'pg';

const arg = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : fallback;
};

/** Every table of the queen schema: exact rows and total size (table, indexes, toast). */
async function tables(client) {
  const { rows } = await client.query(
    `select c.relname as name, pg_total_relation_size(c.oid)::bigint as bytes
     from pg_class c join pg_namespace n on n.oid = c.relnamespace
     where n.nspname = 'queen' and c.relkind in ('r', 'p') order by c.relname`,
  );
  for (const r of rows) {
    const { rows: n } = await client.query(`select count(*)::bigint as n from queen.${pg.escapeIdentifier(r.name)}`);
    r.rows = Number(n[0].n);
    r.bytes = Number(r.bytes);
  }
  return rows;
}

/** What is due now and not yet removed: of the seeded hour, and past each retention. */
async function stillDue(client, oldQueue) {
  const { rows } = await client.query(
    `select (select count(*) from queen.messages m join queen.partitions p on p.id = m.partition_id
             join queen.queues q on q.id = p.queue_id where q.name = $1)::int as messages,
            (select count(*) from queen.removed_transactions r where r.forget_at <= now())::int as "transactionIds",
            (select count(*) from queen.deliveries d where d.claimed_at < now() - interval '24 hours')::int as deliveries`,
    [oldQueue],
  );
  return rows[0];
}

/** An earlier hour at `rate` msg/s for `seconds`: consumed messages due under ttl, due remembered ids, old deliveries. */
async function seed(client, queue, rate, seconds) {
  const total = rate * seconds;
  const partitions = 8;
  const perPartition = Math.ceil(total / partitions);
  // segments of 100, as pushes of 100 make them; one group that consumed everything
  await client.query(
    `with q as (insert into queen.queues (id, name) values (queen.uuidv7(), $1) returning id),
     g as (insert into queen.queue_groups (queue_id, consumer_group) select q.id, 'done' from q),
     p as (
       insert into queen.partitions (id, queue_id, name, head_offset, last_push_at, retain_check_at)
       select queen.uuidv7(), q.id, 'p' || j, $3, now(), now() from q, generate_series(1, $2::int) j
       returning id, queue_id),
     s as (
       insert into queen.segments (partition_id, first_offset, last_offset, created_at)
       select p.id, f, least(f + 99, $3::bigint), now() - interval '90 minutes'
       from p, generate_series(1, $3::bigint, 100) f),
     m as (
       insert into queen.messages (partition_id, "offset", id, transaction_id, payload, segment_offset)
       select p.id, o, queen.uuidv7(), gen_random_uuid()::text, '{"seq":1,"body":"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"}',
              ((o - 1) / 100) * 100 + 1
       from p, generate_series(1, $3::bigint) o)
     insert into queen.cursors (partition_id, consumer_group, queue_id, committed_offset, max_delivered_offset)
     select p.id, 'done', p.queue_id, $3, $3 from p`,
    [queue, partitions, perPartition],
  );
  await client.query(
    `insert into queen.queue_stats as t (queue_id, shard, partitions, messages)
     select q.id, 0, $2, $3 from queen.queues q where q.name = $1
     on conflict (queue_id, shard) do update set partitions = t.partitions + excluded.partitions, messages = t.messages + excluded.messages`,
    [queue, partitions, partitions * perPartition],
  );
  await client.query(
    `insert into queen.removed_transactions (transaction_id, partition_id, message_id, forget_at)
     select gen_random_uuid()::text, p.id, queen.uuidv7(), now() - interval '1 minute'
     from queen.partitions p join queen.queues q on q.id = p.queue_id, generate_series(1, $2::bigint) i
     where q.name = $1`,
    [queue, perPartition],
  );
  // a claim per 100 messages, at least 250 a second (wide-5k-x1-p1 claims 230 a second)
  const claims = Math.max(Math.ceil(total / 100), 250 * seconds);
  await client.query(
    `insert into queen.deliveries (partition_id, consumer_group, lease_id, from_offset, to_offset, holder, claimed_at,
                                   expires_at, extensions, ended_at, ended)
     select p.id, 'done', gen_random_uuid(), i, i + 99, 'bench', now() - interval '25 hours', now() - interval '25 hours', 0,
            now() - interval '25 hours', 'acked'
     from (select min(p.id::text)::uuid as id from queen.partitions p join queen.queues q on q.id = p.queue_id where q.name = $1) p,
          generate_series(1, $2::bigint) i`,
    [queue, claims],
  );
  return { messages: partitions * perPartition, transactionIds: partitions * perPartition, deliveries: claims };
}

const mb = (bytes) => `${(bytes / 1048576).toFixed(1)} MB`;

export async function paceScenario({ url, base, run, post, pop, ackBatch, batchFor, report }) {
  const minutes = Number(arg('minutes', 3));
  const rate = Number(arg('pace-rate', 11_000));
  const seconds = Math.round(minutes * 60);
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const oldQueue = `bench.pace.old.${run}`;
    const q = `bench.pace.${run}`;
    const t0 = performance.now();
    // the start's figures are read in the transaction that writes the seeded hour: the job sees
    // none of it before they are taken
    await client.query('begin');
    const seeded = await seed(client, oldQueue, rate, seconds);
    const before = await tables(client);
    const dueBefore = await stillDue(client, oldQueue);
    await client.query('commit');
    console.log(
      `lifecycle-pace: seeded an earlier hour at ${rate.toLocaleString('en')} msg/s for ${seconds} s, all due now: ${seeded.messages.toLocaleString('en')} consumed messages, ${seeded.transactionIds.toLocaleString('en')} remembered ids, ${seeded.deliveries.toLocaleString('en')} deliveries (${((performance.now() - t0) / 1000).toFixed(0)} s)`,
    );
    const jobBefore = await jobFigures(base);

    // the load: pushes of 100 over 8 partitions from 8 connections, pops + acks of 100 from 4, default options
    const deadline = Date.now() + seconds * 1000;
    let pushed = 0;
    let consumed = 0;
    const started = performance.now();
    await Promise.all([
      ...Array.from({ length: 8 }, async () => {
        while (Date.now() < deadline) {
          const n = (await post('/api/v1/push', { items: batchFor(q, 8, 100) })).length; // not `pushed += await …`
          pushed += n;
        }
      }),
      ...Array.from({ length: 4 }, async () => {
        while (Date.now() < deadline) {
          const body = await pop(`/queue/${q}?consumerGroup=bench&batch=100&wait=true&timeout=2000`);
          if (!body) continue;
          await ackBatch('bench', body.messages);
          consumed += body.messages.length;
        }
      }),
    ]);
    const loadSeconds = (performance.now() - started) / 1000;
    await new Promise((r) => setTimeout(r, 3000)); // the job's run after the last push
    const after = await tables(client);
    const dueAfter = await stillDue(client, oldQueue);
    const jobAfter = await jobFigures(base);

    console.log(
      `${'  table'.padEnd(34)} ${'rows at start'.padStart(14)} ${'rows at end'.padStart(14)} ${'size at start'.padStart(14)} ${'size at end'.padStart(14)}`,
    );
    for (const b of before) {
      const a = after.find((x) => x.name === b.name) ?? { rows: 0, bytes: 0 };
      console.log(
        `  ${b.name.padEnd(32)} ${b.rows.toLocaleString('en').padStart(14)} ${a.rows.toLocaleString('en').padStart(14)} ${mb(b.bytes).padStart(14)} ${mb(a.bytes).padStart(14)}`,
      );
    }
    const runs = jobAfter.runs - jobBefore.runs;
    const runSeconds = jobAfter.seconds - jobBefore.seconds;
    const removed =
      dueBefore.messages -
      dueAfter.messages +
      (dueBefore.transactionIds - dueAfter.transactionIds) +
      (dueBefore.deliveries - dueAfter.deliveries);
    console.log(
      `  due at start ${JSON.stringify(dueBefore)}, still due at end ${JSON.stringify(dueAfter)}; the job: ${runs} runs, ${runSeconds.toFixed(1)} s in runs (${((runSeconds / loadSeconds) * 100).toFixed(0)}% of the load's time), ${((runSeconds * 1e6) / Math.max(removed, 1)).toFixed(1)} µs a removed row`,
    );
    report(
      'lifecycle-pace',
      {
        perSecond: Math.round(consumed / loadSeconds),
        calls: runs,
        p50: '',
        p99: '',
        pushedPerSecond: Math.round(pushed / loadSeconds),
        dueBefore,
        dueAfter,
        before,
        after,
      },
      'msg/s',
      `pop + ack under default options for ${minutes} min while ${pushed.toLocaleString('en')} pushed (${Math.round(pushed / loadSeconds).toLocaleString('en')}/s); the job ${dueAfter.messages + dueAfter.transactionIds + dueAfter.deliveries === 0 ? 'kept pace: nothing due left' : 'fell behind: rows still due'}`,
    );
  } finally {
    await client.end();
  }
}

/** The job's runs and seconds so far, from the server's Prometheus counters. */
async function jobFigures(base) {
  const text = await (await fetch(`${base}/metrics/prometheus`)).text();
  const value = (name) => Number(new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, 'm').exec(text)?.[1] ?? 0);
  return { runs: value('queen_lifecycle_runs_total'), seconds: value('queen_lifecycle_run_seconds_total') };
}
