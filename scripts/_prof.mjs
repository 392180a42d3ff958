import pg from 'pg';
const c = new pg.Client({ connectionString: 'postgres://postgres@127.0.0.1:5432/scratch3' });
await c.connect();
const notices = [];
c.on('notice', (n) => notices.push(n.message));
const run = async (log) => {
  notices.length = 0;
  let t = performance.now();
  const { rows } = await c.query(`select * from queen.pop('w.q', null, '', '', 'g2', 10, 1, false, 0, queen.uuidv7(), 'all', null, 'me', false)`);
  const popMs = performance.now() - t;
  const popNotices = [...notices]; notices.length = 0;
  const items = rows.map((r) => ({ transactionId: r.transaction_id, partitionId: r.partition_id, status: 'completed', consumerGroup: 'g2' }));
  t = performance.now();
  await c.query(`select * from queen.ack($1::jsonb, null)`, [JSON.stringify(items)]);
  const ackMs = performance.now() - t;
  if (log) {
    console.log('--- pop', popMs.toFixed(2));
    for (const n of popNotices) { const m = n.match(/duration: ([\d.]+) ms\s+plan:\s*\nQuery Text: ([^\n]*)/); if (m) console.log(m[1].padStart(8), m[2].slice(0, 100)); }
    console.log('--- ack', ackMs.toFixed(2));
    for (const n of notices) { const m = n.match(/duration: ([\d.]+) ms\s+plan:\s*\nQuery Text: ([^\n]*)/); if (m) console.log(m[1].padStart(8), m[2].slice(0, 100)); }
  }
};
for (let i = 0; i < 20; i++) await run(false);
await c.query(`load 'auto_explain'`);
await c.query(`set auto_explain.log_min_duration = 0; set auto_explain.log_nested_statements = on; set auto_explain.log_level = notice; set auto_explain.log_timing = off`);
await run(true);
await c.end();
