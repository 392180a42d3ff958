// Payloads are delivered as pushed, numbers included (issue 30): the push body went through
// JSON.parse, so 12345678901234567891 came back as 12345678901234567000 and 1e400 as null. The
// contract splices `data` back verbatim (PostgreSQL's jsonb text of what was pushed); jsonb keeps
// such numbers exactly, and so does the C++ broker. Checked on every path that writes a payload:
// push, a transaction's push, an encrypted queue, a dead letter requeued; and on the reads that
// answer a payload as JSON (the message route, the dead-letter listing).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from './support/app';

// numbers JavaScript cannot write back as written, beside ordinary ones
const PAYLOAD = `{"id": 12345678901234567891, "huge": 1e400, "tiny": 1e-400, "f": 1.0, "amount": 19.990, "list": [0.1000, 123456789012345678901234567890, 7], "ok": 42}`;
const KEY = 'ab'.repeat(32);

describe('payload numbers are kept exactly', () => {
  let app: TestApp;
  /** What PostgreSQL's jsonb makes of the payload text: what `data` must be. */
  let asJsonb: string;
  beforeAll(async () => {
    app = await startApp({ QUEEN_ENCRYPTION_KEY: KEY });
    [{ t: asJsonb }] = await app.db.query<{ t: string }>('select $1::jsonb::text as t', [PAYLOAD]);
  });
  afterAll(() => app.stop());

  const send = async (method: string, path: string, body?: string) => {
    const res = await fetch(app.server.url + path, {
      method,
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      body,
    });
    return { status: res.status, text: await res.text() };
  };
  const popText = async (queue: string, extra = '') => {
    const r = await send('GET', `/api/v1/pop/queue/${queue}?consumerGroup=g&wait=false${extra}`);
    expect(r.status).toBe(200);
    return r.text;
  };

  it('push: the pop answers the payload as stored, the message route too', async () => {
    const pushed = await send(
      'POST',
      '/api/v1/push',
      `{"items":[{"queue":"exact.push","transactionId":"t1","payload":${PAYLOAD}}]}`,
    );
    expect(pushed.status).toBe(201);
    const popped = await popText('exact.push');
    expect(popped).toContain(`"data":${asJsonb}`);
    expect(popped).toContain('12345678901234567891');
    const partitionId = JSON.parse(popped).partitionId;
    const message = await send('GET', `/api/v1/messages/${partitionId}/t1`);
    expect(message.status).toBe(200);
    expect(message.text).toContain(`"data":${asJsonb}`);
  });

  it("a transaction's push", async () => {
    const r = await send(
      'POST',
      '/api/v1/transaction',
      `{"operations":[{"type":"push","items":[{"queue":"exact.tx","payload":${PAYLOAD}}]}]}`,
    );
    expect(r.status).toBe(200);
    expect(JSON.parse(r.text).success).toBe(true);
    expect(await popText('exact.tx')).toContain(`"data":${asJsonb}`);
  });

  it('an encrypted queue: the decrypted payload holds the same numbers', async () => {
    const configured = await send(
      'POST',
      '/api/v1/configure',
      JSON.stringify({ queue: 'exact.enc', options: { encryptionEnabled: true } }),
    );
    expect(configured.status).toBe(200);
    expect((await send('POST', '/api/v1/push', `{"items":[{"queue":"exact.enc","payload":${PAYLOAD}}]}`)).status).toBe(
      201,
    );
    const data = (await popText('exact.enc')).match(/"data":(\{.*?\}),"producerSub"/)?.[1];
    const [{ same }] = await app.db.query<{ same: boolean }>('select $1::jsonb = $2::jsonb as same', [data, PAYLOAD]);
    expect(same).toBe(true);
    expect(data).toContain('1e400');
  });

  it('a dead letter: listed and requeued with the same numbers', async () => {
    await send(
      'POST',
      '/api/v1/configure',
      JSON.stringify({ queue: 'exact.dlq', options: { retryLimit: 0, dlqAfterMaxRetries: true } }),
    );
    await send('POST', '/api/v1/push', `{"items":[{"queue":"exact.dlq","payload":${PAYLOAD}}]}`);
    const m = JSON.parse(await popText('exact.dlq')).messages[0];
    const failed = await send(
      'POST',
      '/api/v1/ack',
      JSON.stringify({
        transactionId: m.transactionId,
        partitionId: m.partitionId,
        leaseId: m.leaseId,
        consumerGroup: 'g',
        status: 'failed',
        error: 'boom',
      }),
    );
    expect(failed.status).toBe(200);
    const listed = await send('GET', '/api/v1/dlq?queue=exact.dlq');
    expect(listed.status).toBe(200);
    expect(listed.text).toContain(`"data":${asJsonb}`);
    const requeued = await send(
      'POST',
      '/api/v1/dlq/requeue',
      JSON.stringify({
        items: [
          {
            partitionId: m.partitionId,
            consumerGroup: 'g',
            offset: Number(JSON.parse(listed.text).messages[0].offset),
          },
        ],
        reason: 'retry',
      }),
    );
    expect(requeued.status).toBe(200);
    expect(await popText('exact.dlq')).toContain(`"data":${asJsonb}`);
  });

  it('a stream cycle: state values and sink pushes keep their numbers', async () => {
    await send('POST', '/api/v1/push', JSON.stringify({ items: [{ queue: 'exact.src', payload: { n: 1 } }] }));
    const registered = await send(
      'POST',
      '/streams/v1/queries',
      JSON.stringify({ name: 'exact-query', source_queue: 'exact.src', sink_queue: 'exact.sink', config_hash: 'h1' }),
    );
    expect(registered.status).toBe(200);
    const queryId = JSON.parse(registered.text).query_id;
    const m = JSON.parse(await popText('exact.src')).messages[0];
    const cycle = await send(
      'POST',
      '/streams/v1/cycle',
      `{"query_id":"${queryId}","partition_id":"${m.partitionId}","consumer_group":"g",
        "state_ops":[{"type":"upsert","key":"k","value":${PAYLOAD}}],
        "push_items":[{"queue":"exact.sink","payload":${PAYLOAD}}],
        "ack":{"transactionId":"${m.transactionId}","leaseId":"${m.leaseId}"}}`,
    );
    expect(cycle.status).toBe(200);
    expect(JSON.parse(cycle.text).success).toBe(true);
    const state = await send(
      'POST',
      '/streams/v1/state/get',
      JSON.stringify({ query_id: queryId, partition_id: m.partitionId }),
    );
    expect(state.text).toContain(`"value": ${asJsonb}`); // the rows are jsonb text too
    expect(await popText('exact.sink')).toContain(`"data":${asJsonb}`);
  });

  it('numbers outside user data are read as numbers: an option of 30.0 is 30', async () => {
    const r = await send('POST', '/api/v1/configure', `{"queue":"exact.opts","options":{"leaseTime":30.0}}`);
    expect(r.status).toBe(200);
    expect(JSON.parse(r.text).options.leaseTime).toBe(30);
  });
});
