// Queues with encryptionEnabled (DESIGN.md §4): payloads stored AES-256-GCM encrypted, read back
// transparently by pops and the management routes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from './support/app';
import { ackAll, popQueue } from './support/broker';
import { startServer } from './support/server';

const KEY = 'a'.repeat(64);

describe('encryption', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startApp({ QUEEN_ENCRYPTION_KEY: KEY });
  });
  afterAll(() => app.stop());

  const stored = (queue: string) =>
    app.db.query<{ payload: any; encrypted: boolean }>(
      `select m.payload, m.encrypted from queen.messages m join queen.partitions p on p.id = m.partition_id
     join queen.queues q on q.id = p.queue_id where q.name = $1 order by m."offset"`,
      [queue],
    );

  it('stores the payloads of an encrypted queue encrypted, and pops them decrypted', async () => {
    const configured = await app.api.post('/api/v1/configure', {
      queue: 'enc.q',
      options: { encryptionEnabled: true, retryLimit: 0 },
    });
    expect(configured.body.options.encryptionEnabled).toBe(true);
    const payload = { card: '4111 1111 1111 1111', amount: 42 };
    await app.api.push([{ queue: 'enc.q', payload, transactionId: 'secret-1' }]);
    const [row] = await stored('enc.q');
    expect(row.encrypted).toBe(true);
    expect(Object.keys(row.payload).sort()).toEqual(['authTag', 'encrypted', 'iv']);
    expect(JSON.stringify(row.payload)).not.toContain('4111');
    const r = await popQueue(app.api, 'enc.q', { consumerGroup: 'g' });
    expect(r.body.messages[0].data).toEqual(payload);
    const message = await app.api.get(`/api/v1/messages/${r.body.partitionId}/secret-1`);
    expect(message.body.data).toEqual(payload);
    await ackAll(app.api, r, 'failed', 'x');
    const dlq = await app.api.get('/api/v1/dlq?queue=enc.q');
    expect(dlq.body.messages[0].data).toEqual(payload);
  });

  it('encrypts pushes made through a transaction', async () => {
    await app.api.post('/api/v1/configure', { queue: 'enc.tx', options: { encryptionEnabled: true } });
    await app.api.post('/api/v1/transaction', {
      operations: [{ type: 'push', items: [{ queue: 'enc.tx', payload: 'hidden' }] }],
    });
    expect((await stored('enc.tx'))[0].encrypted).toBe(true);
    expect((await popQueue(app.api, 'enc.tx')).body.messages[0].data).toBe('hidden');
  });

  it('never stores plaintext for an encrypted queue, even when this instance has not heard of the change yet', async () => {
    await app.api.push([{ queue: 'enc.late', payload: 'before' }]);
    // Flip the flag behind the app's back: no notification reaches its cache.
    await app.db.query("update queen.queues set encryption_enabled = true where name = 'enc.late'");
    await app.api.push([{ queue: 'enc.late', payload: 'after' }]);
    expect((await stored('enc.late')).map((r) => r.encrypted)).toEqual([false, true]);
    const r = await popQueue(app.api, 'enc.late', { batch: 10 });
    expect(r.body.messages.map((m: any) => m.data)).toEqual(['before', 'after']);
  });

  it('leaves other queues in plaintext', async () => {
    await app.api.push([{ queue: 'enc.plain', payload: { visible: true } }]);
    expect(await stored('enc.plain')).toEqual([{ payload: { visible: true }, encrypted: false }]);
  });

  it('refuses to start without QUEEN_ENCRYPTION_KEY while encrypted queues exist', async () => {
    await app.api.post('/api/v1/configure', { queue: 'enc.boot', options: { encryptionEnabled: true } });
    await expect(startServer(app.db.url, { QUEEN_ENCRYPTION_KEY: '' })).rejects.toThrow(
      /encryptionEnabled exist \(.*enc\.boot.*\) but QUEEN_ENCRYPTION_KEY is not set/,
    );
  });
});
