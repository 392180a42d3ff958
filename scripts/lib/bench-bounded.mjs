// Reads a low role can make, at the sizes that once pinned the database (issue 29), each set up
// straight in our own database (far faster than over HTTP) and then asked over HTTP:
//   seek-preview-100k        a seek preview of a 100,000-partition queue (a page of 1,000 partitions)
//   seek-preview-100k-one    the same queue's preview of one partition
//   streams-state-get-200k   a state get of 10,000 keys on a shard of 200,000
//   streams-cycle-200k       a cycle of 10,000 upserts on that shard
//   streams-list-3k          a page of the Streams listing (50 queries) with 3,000 registered
// Statistics are taken before the tables grow, as on a database that grew since its last ANALYZE.
import pg from 'pg';

const CALLS = 10;

/** `calls` sequential runs of `step`: p50 and p99 of their latencies, in ms. */
async function measured(calls, step) {
  await step(); // warm
  const ms = [];
  for (let i = 0; i < calls; i++) {
    const t = performance.now();
    await step(i);
    ms.push(performance.now() - t);
  }
  ms.sort((a, b) => a - b);
  const at = (p) => +ms[Math.min(ms.length - 1, Math.floor(ms.length * p))].toFixed(1);
  return { perSecond: '', calls, p50: at(0.5), p99: at(0.99) };
}

export async function boundedScenarios({ url, base, run, report, wanted, post }) {
  const names = ['seek-preview-100k', 'seek-preview-100k-one', 'streams-state-get-200k', 'streams-cycle-200k'];
  if (![...names, 'streams-list-3k'].some(wanted)) return;
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const get = async (path) => {
    const res = await fetch(base + path, { signal: AbortSignal.timeout(120_000) });
    const text = await res.text();
    if (res.status !== 200) throw new Error(`${path} answered ${res.status}: ${text.slice(0, 200)}`);
    return text;
  };
  try {
    await client.query('analyze');
    if (wanted('seek-preview-100k') || wanted('seek-preview-100k-one')) {
      const queue = `bench.seek.${run}`;
      await client.query(
        `with q as (insert into queen.queues (id, name, namespace, task) values (queen.uuidv7(), $1, 'bench', 'seek') returning id),
         p as (insert into queen.partitions (id, queue_id, name, head_offset, last_push_at)
               select queen.uuidv7(), q.id, 'p' || lpad(j::text, 6, '0'), 2, now() from q, generate_series(1, 100000) j
               returning id, queue_id),
         s as (insert into queen.segments (partition_id, first_offset, last_offset, created_at)
               select p.id, 1, 2, now() - interval '1 hour' from p),
         m as (insert into queen.messages (partition_id, "offset", id, transaction_id, payload, segment_offset)
               select p.id, o, queen.uuidv7(), p.id::text || '-' || o, '{}', 1 from p, generate_series(1, 2) o),
         g as (insert into queen.queue_groups (queue_id, consumer_group) select id, 'g' from q)
         insert into queen.cursors (partition_id, consumer_group, queue_id, committed_offset)
         select p.id, 'g', p.queue_id, 1 from p`,
        [queue],
      );
      const path = `/api/v1/consumer-groups/g/queues/${queue}/seek/preview?timestamp=2000-01-01T00:00:00Z`;
      if (wanted('seek-preview-100k')) {
        let body;
        const r = await measured(CALLS, async () => (body = JSON.parse(await get(path))));
        report(
          'seek-preview-100k',
          r,
          '',
          `a preview of the whole queue: a page of ${body.partitions.toLocaleString('en')} partitions of 100,000 (next: ${body.next})`,
        );
      }
      if (wanted('seek-preview-100k-one')) {
        const r = await measured(CALLS, () => get(`${path}&partition=p050000`));
        report('seek-preview-100k-one', r, '', 'a preview of one partition of that queue');
      }
    }
    if (wanted('streams-state-get-200k') || wanted('streams-cycle-200k')) {
      const name = `bench.state.${run}`;
      const { rows } = await client.query(
        `with q as (insert into queen.queues (id, name, namespace, task) values (queen.uuidv7(), $1, 'bench', 'state') returning id),
         p as (insert into queen.partitions (id, queue_id, name) select queen.uuidv7(), q.id, 'p' from q returning id),
         query as (insert into queen_streams.queries (id, name, source_queue, config_hash)
                   values (queen.uuidv7(), $1, $1, 'bench') returning id)
         select query.id as query, p.id as partition from query, p`,
        [name],
      );
      const { query, partition } = rows[0];
      await client.query(
        `insert into queen_streams.state (query_id, partition_id, key, value)
         select $1, $2, 'k' || i, jsonb_build_object('n', i) from generate_series(1, 200000) i`,
        [query, partition],
      );
      await client.query(
        `insert into queen_streams.shards (query_id, partition_id, state_keys, state_bytes)
         select $1, $2, count(*), sum(octet_length(key) + octet_length(value::text)) from queen_streams.state where query_id = $1`,
        [query, partition],
      );
      const keys = (k) => Array.from({ length: 10_000 }, (_, i) => `k${(i * 19 + k * 7) % 200_000}`);
      if (wanted('streams-state-get-200k')) {
        const r = await measured(CALLS, (i = 0) =>
          post('/streams/v1/state/get', { query_id: query, partition_id: partition, keys: keys(i) }),
        );
        report(
          'streams-state-get-200k',
          r,
          '',
          'POST /streams/v1/state/get of 10,000 keys, 200,000 stored on the shard',
        );
      }
      if (wanted('streams-cycle-200k')) {
        const r = await measured(CALLS, async (i = 0) => {
          const res = await post('/streams/v1/cycle', {
            query_id: query,
            partition_id: partition,
            state_ops: keys(i).map((key) => ({ type: 'upsert', key, value: { n: i } })),
          });
          if (!res.success) throw new Error(`cycle refused: ${res.error}`);
        });
        report('streams-cycle-200k', r, '', 'POST /streams/v1/cycle of 10,000 upserts on that shard (no ack)');
      }
    }
    if (wanted('streams-list-3k')) {
      await client.query(
        `with q as (insert into queen_streams.queries (id, name, source_queue, config_hash)
                    select queen.uuidv7(), $1 || lpad(i::text, 4, '0'), $1 || 'src', 'bench' from generate_series(1, 3000) i
                    returning id)
         insert into queen_streams.shards (query_id, partition_id, cycles, state_keys, state_bytes, last_cycle_at)
         select q.id, queen.uuidv7(), 1, j, 10 * j, now() from q, generate_series(1, 10) j`,
        [`bench.list.${run}.`],
      );
      let bytes = 0;
      const r = await measured(CALLS, async () => (bytes = (await get('/api/dashboard/streams')).length));
      report(
        'streams-list-3k',
        r,
        '',
        `GET /api/dashboard/streams, 3,000 queries of 10 shards: a page of 50, ${(bytes / 1024).toFixed(0)} KB`,
      );
    }
  } finally {
    await client.end();
  }
}
