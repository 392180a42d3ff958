// A consumer process for the fault suite, killed and restarted by the tests:
//   node consumer.mjs <base url> <queue> <group> <log file> <autoAck 0|1> <lease seconds> [work ms]
// It pops (long-polling), writes what it got to its log, acks, and loops. Each log line is JSON:
// {t:'claim', name, requestedAt, receivedAt, leaseId, messages:[{partition, seq, transactionId, partitionId}]}
// {t:'acking', name, at, leaseId} just before an ack is sent, {t:'acked', name, at, ok} after.
import fs from 'node:fs';

const [base, queue, group, log, autoAck, leaseSeconds, workMs = '0'] = process.argv.slice(2);
const name = `${group}-${process.pid}`;
const write = (line) => fs.appendFileSync(log, `${JSON.stringify({ name, ...line })}\n`);
const query = new URLSearchParams({
  consumerGroup: group,
  batch: '5',
  wait: 'true',
  timeout: '1000',
  leaseSeconds,
  autoAck: autoAck === '1' ? 'true' : 'false',
});

for (;;) {
  const requestedAt = Date.now();
  let res;
  try {
    res = await fetch(`${base}/api/v1/pop/queue/${queue}?${query}`);
  } catch {
    await new Promise((r) => setTimeout(r, 200)); // the server is away: back off
    continue;
  }
  if (res.status !== 200) {
    await res.arrayBuffer();
    if (res.status >= 500) await new Promise((r) => setTimeout(r, 200));
    continue;
  }
  const body = await res.json();
  write({
    t: 'claim',
    requestedAt,
    receivedAt: Date.now(),
    leaseId: body.leaseId,
    messages: body.messages.map((m) => ({
      partition: m.partition,
      seq: m.data.seq,
      transactionId: m.transactionId,
      partitionId: m.partitionId,
    })),
  });
  if (autoAck === '1') continue;
  await new Promise((r) => setTimeout(r, Math.random() * Number(workMs))); // the work
  write({ t: 'acking', at: Date.now(), leaseId: body.leaseId });
  try {
    const acked = await fetch(`${base}/api/v1/ack/batch`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        consumerGroup: group,
        acknowledgments: body.messages.map((m) => ({
          transactionId: m.transactionId,
          partitionId: m.partitionId,
          leaseId: m.leaseId,
        })),
      }),
    });
    const results = await acked.json();
    write({
      t: 'acked',
      at: Date.now(),
      leaseId: body.leaseId,
      ok: acked.status === 200 && results.every((r) => r.success),
    });
  } catch {
    write({ t: 'acked', at: Date.now(), leaseId: body.leaseId, ok: false });
  }
}
