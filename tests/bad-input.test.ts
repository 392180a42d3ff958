import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from './support/app';

describe('bad input', () => {
  let app: TestApp;
  const MAX_BODY_BYTES = 4096;
  beforeAll(async () => {
    app = await startApp({ MAX_BODY_BYTES: String(MAX_BODY_BYTES) });
  });
  afterAll(() => app.stop());

  const stored = async () => {
    const [r] = await app.db.query<{ queues: number; partitions: number; messages: number }>(
      `select (select count(*) from queen.queues)::int as queues, (select count(*) from queen.partitions)::int as partitions,
              (select count(*) from queen.messages)::int as messages`,
    );
    return r;
  };

  const cases: [string, string, unknown, RegExp][] = [
    ['push without items', '/api/v1/push', {}, /^items: /],
    ['push with items not an array', '/api/v1/push', { items: { queue: 'q' } }, /^items: .*expected array/],
    ['push with a body that is not an object', '/api/v1/push', [1, 2], /^body: .*expected object/],
    [
      'push item without queue',
      '/api/v1/push',
      { items: [{ queue: 'ok' }, { payload: 1 }] },
      /^items\[1\]\.queue: .*expected string/,
    ],
    [
      'push item with a numeric queue',
      '/api/v1/push',
      { items: [{ queue: 7 }] },
      /^items\[0\]\.queue: .*expected string/,
    ],
    [
      'push item with a numeric partition',
      '/api/v1/push',
      { items: [{ queue: 'q', partition: 1 }] },
      /^items\[0\]\.partition: .*expected string/,
    ],
    [
      'push item with a numeric transactionId',
      '/api/v1/push',
      { items: [{ queue: 'q', transactionId: 12 }] },
      /^items\[0\]\.transactionId: .*expected string/,
    ],
    [
      'push item whose payload holds U+0000',
      '/api/v1/push',
      { items: [{ queue: 'q' }, { queue: 'q', payload: { s: 'a\u0000b' } }] },
      /^items\[1\]\.payload\.s: contains the character U\+0000/,
    ],
    [
      'configure with U+0000 in the queue name',
      '/api/v1/configure',
      { queue: 'a\u0000b' },
      /^queue: contains the character U\+0000/,
    ],
    ['configure without queue', '/api/v1/configure', { options: {} }, /^queue: .*expected string/],
    ['configure with a numeric namespace', '/api/v1/configure', { queue: 'q', namespace: 5 }, /^namespace: /],
    [
      'configure with a string option',
      '/api/v1/configure',
      { queue: 'q', options: { leaseTime: '30' } },
      /^options\.leaseTime: .*expected number/,
    ],
    [
      'configure with a fractional option',
      '/api/v1/configure',
      { queue: 'q', options: { retryLimit: 1.5 } },
      /^options\.retryLimit: .*expected int/,
    ],
    [
      'configure with a negative option',
      '/api/v1/configure',
      { queue: 'q', options: { retryDelay: -1 } },
      /^options\.retryDelay: .*>=0/,
    ],
    [
      'configure with a zero lease',
      '/api/v1/configure',
      { queue: 'q', options: { leaseTime: 0 } },
      /^options\.leaseTime: .*>=1/,
    ],
    [
      'configure with a non-boolean flag',
      '/api/v1/configure',
      { queue: 'q', options: { deadLetterQueue: 'yes' } },
      /^options\.deadLetterQueue: .*expected boolean/,
    ],
    [
      'configure with options not an object',
      '/api/v1/configure',
      { queue: 'q', options: 3 },
      /^options: .*expected object/,
    ],
  ];

  for (const [name, path, body, message] of cases) {
    it(`answers 400 naming the field: ${name}; nothing is written`, async () => {
      const before = await stored();
      const res = await app.api.post(path, body);
      expect(res.status).toBe(400);
      expect(Object.keys(res.body)).toEqual(['error']);
      expect(res.body.error).toMatch(message);
      expect(await stored()).toEqual(before);
    });
  }

  for (const path of ['/api/v1/push', '/api/v1/configure']) {
    it(`answers 400 for malformed JSON on ${path}`, async () => {
      const before = await stored();
      const res = await app.api.post(path, '{"items": [ {"queue": "q" ');
      expect(res.status).toBe(400);
      expect(res.body.error).toMatch(/^malformed JSON body/);
      expect(await stored()).toEqual(before);
    });

    it(`answers 400 for an empty body on ${path}`, async () => {
      const res = await app.api.post(path, '');
      expect(res.status).toBe(400);
    });

    it(`answers 413 for a body over MAX_BODY_BYTES on ${path}`, async () => {
      const before = await stored();
      const big = JSON.stringify({ queue: 'q', items: [{ queue: 'q', payload: 'x'.repeat(MAX_BODY_BYTES) }] });
      const res = await app.api.post(path, big);
      expect(res.status).toBe(413);
      expect(res.body.error).toMatch(/exceeds 4096 bytes/);
      expect(res.headers.get('connection')).toBe('close'); // the unread rest of the body ends the connection
      expect(await stored()).toEqual(before);
    });
  }

  it('answers 413 for a chunked body over the limit that announces no length', async () => {
    const before = await stored();
    const chunk = new TextEncoder().encode(' '.repeat(1024));
    let sent = 0;
    const stream = new ReadableStream({
      pull(controller) {
        if (sent++ < 8) controller.enqueue(chunk);
        else controller.close();
      },
    });
    const res = await fetch(`${app.server.url}/api/v1/push`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: stream,
      duplex: 'half',
    } as RequestInit);
    expect(res.status).toBe(413);
    expect(await stored()).toEqual(before);
  });

  it('answers 413 without stalling for a declared length well over the limit, and logs no stream error', async () => {
    const big = JSON.stringify({ items: [{ queue: 'q', payload: 'x'.repeat(MAX_BODY_BYTES * 2) }] });
    // A stall until the server gives up on the unread rest would abort this request.
    const res = await fetch(`${app.server.url}/api/v1/push`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: big,
      signal: AbortSignal.timeout(3000),
    });
    expect(res.status).toBe(413);
    expect(app.server.output()).not.toMatch(/Controller is already closed|ERR_INVALID_STATE/);
  });

  it('writes nothing of a batch that holds one bad item', async () => {
    const before = await stored();
    const res = await app.api.push([
      { queue: 'fine', payload: 1 },
      { queue: 'fine', partition: null },
    ]);
    expect(res.status).toBe(400);
    expect(await stored()).toEqual(before);
  });

  it('over-long names and ids are a 400 naming the field, and nothing is written', async () => {
    const long = 'x'.repeat(600);
    const cases: [string, () => Promise<any>, RegExp][] = [
      [
        'partition',
        () => app.api.push([{ queue: 'd6.q', partition: long, payload: 1 }]),
        /^items\[0\]\.partition: must be at most 512 bytes/,
      ],
      ['queue', () => app.api.push([{ queue: `d6.${long}`, payload: 1 }]), /^items\[0\]\.queue: /],
      [
        'transactionId',
        () => app.api.push([{ queue: 'd6.q', payload: 1, transactionId: long }]),
        /^items\[0\]\.transactionId: /,
      ],
      ['consumerGroup', () => app.api.get(`/api/v1/pop/queue/d6.q?consumerGroup=${long}`), /^consumerGroup: /],
      ['queue in the path', () => app.api.get(`/api/v1/pop/queue/${long}`), /^queue: /],
      [
        'namespace',
        () => app.api.post('/api/v1/configure', { queue: 'd6.q', namespace: '名'.repeat(200) }),
        /^namespace: /,
      ],
      [
        'ack group',
        () =>
          app.api.post('/api/v1/ack', {
            transactionId: 't',
            partitionId: '00000000-0000-0000-0000-000000000000',
            consumerGroup: long,
          }),
        /^consumerGroup: /,
      ],
    ];
    for (const [what, call, error] of cases) {
      const res = await call();
      expect(res.status, what).toBe(400);
      expect(res.body.error, what).toMatch(error);
    }
    expect(await app.db.query(`select 1 from queen.queues where name like 'd6.%'`)).toEqual([]);
  });
});
