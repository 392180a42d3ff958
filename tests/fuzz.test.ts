// Hostile input over every route: a few thousand generated requests from a fixed seed (set
// FUZZ_SEED to replay another run). Every answer must be below 500, the server must stay healthy,
// and a refused request (4xx) must not have changed a single row: a row trigger on every table of
// the broker counts row writes (rolled back or not), so even work begun before a refusal shows.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ACCESS } from '@/lib/http/route-table';
import { startApp, type TestApp } from './support/app';

const SEED = Number(process.env.FUZZ_SEED ?? 20261130);
const RUNS = Number(process.env.FUZZ_RUNS ?? 3000);

const hostileString = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'grapheme', maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.string({ minLength: 500, maxLength: 3000 }),
  fc.constantFrom(
    "'; drop table queen.messages; --",
    '" or 1=1 --',
    '../../etc/passwd',
    '/',
    'a/b',
    '%00',
    '\u0000',
    'a\u0000b',
    '%2F',
    '%',
    '%zz',
    '\u202e',
    '\ud800',
    '🦄'.repeat(200),
    'é'.repeat(400),
    'x'.repeat(513),
    'x'.repeat(3000),
    '',
    ' ',
    'null',
    'NaN',
    '-1',
    '1e400',
    '9'.repeat(40),
    '__QUEUE_MODE__',
    'Default',
    '$1',
    '\\',
    '\n',
    '\t',
    '<script>alert(1)</script>',
  ),
);
const hostileNumber = fc.oneof(
  fc.integer(),
  fc.double(),
  fc.constantFrom(-1, 0, 1, 2 ** 31, 2 ** 53, 1e308, -1e308, Number.MAX_SAFE_INTEGER + 2, 0.5),
);
const anyJson = fc.oneof(hostileString, hostileNumber, fc.boolean(), fc.constant(null), fc.jsonValue({ maxDepth: 4 }));
// Mostly well-formed, so that requests get past validation and hostile values reach the SQL.
const plausible = (values: unknown[]) =>
  fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...values) }, { weight: 1, arbitrary: anyJson });
const uuid = fc.uuid();

const queueName = fc.oneof(plausible(['fuzz.q', 'fuzz.other', 'fuzz']), hostileString);
const pushItem = fc.record(
  {
    queue: queueName,
    partition: plausible(['p', 'Default']),
    payload: anyJson,
    transactionId: plausible(['t1', 't2']),
    traceId: anyJson,
    producerSub: anyJson,
  },
  { requiredKeys: [] },
);
const ack = fc.record(
  {
    transactionId: plausible(['t1']),
    partitionId: fc.oneof(uuid, anyJson),
    status: plausible(['completed', 'failed']),
    consumerGroup: plausible(['g']),
    leaseId: fc.oneof(uuid, anyJson),
    error: anyJson,
  },
  { requiredKeys: [] },
);
const reason = plausible(['maintenance drill', 'x'.repeat(501), 'a\u0007b']);

/** Body shapes close to what each route reads, with any field replaced by anything. */
const BODIES: Record<string, fc.Arbitrary<unknown>> = {
  '/api/v1/push': fc.record({ items: fc.oneof(fc.array(pushItem, { maxLength: 5 }), anyJson) }, { requiredKeys: [] }),
  '/api/v1/ack': ack,
  '/api/v1/ack/batch': fc.record(
    { consumerGroup: plausible(['g']), acknowledgments: fc.oneof(fc.array(ack, { maxLength: 4 }), anyJson) },
    { requiredKeys: [] },
  ),
  '/api/v1/lease/[leaseId]/extend': fc.record({ seconds: fc.oneof(hostileNumber, anyJson) }, { requiredKeys: [] }),
  '/api/v1/transaction': fc.record(
    {
      operations: fc.oneof(
        fc.array(
          fc.oneof(
            fc.record({ type: fc.constant('push'), items: fc.array(pushItem, { maxLength: 3 }) }),
            fc.record({ type: fc.constant('ack'), ...{ transactionId: plausible(['t1']), partitionId: uuid } }),
          ),
          { maxLength: 3 },
        ),
        anyJson,
      ),
    },
    { requiredKeys: [] },
  ),
  '/api/v1/configure': fc.record(
    {
      queue: queueName,
      namespace: anyJson,
      task: anyJson,
      options: fc.oneof(
        fc.dictionary(
          fc.constantFrom(
            'leaseTime',
            'retryLimit',
            'retryDelay',
            'maxSize',
            'ttl',
            'retentionSeconds',
            'retentionEnabled',
            'completedRetentionSeconds',
            'maxWaitTimeSeconds',
            'encryptionEnabled',
            'priority',
            'delayedProcessing',
            'windowBuffer',
          ),
          fc.oneof(hostileNumber, anyJson),
        ),
        anyJson,
      ),
    },
    { requiredKeys: [] },
  ),
  '/api/v1/consumer-groups/[group]/subscription': fc.record(
    {
      queue: queueName,
      subscriptionMode: plausible(['new', 'all']),
      subscriptionFrom: plausible(['now', '2026-01-01T00:00:00Z', '2026-01-01']),
      subscriptionTimestamp: plausible(['2026-01-01T00:00:00Z', 'yesterday']),
    },
    { requiredKeys: [] },
  ),
  '/api/v1/consumer-groups/[group]/queues/[queue]/seek': fc.record(
    {
      toEnd: plausible([true]),
      timestamp: plausible(['2026-01-01T00:00:00Z', '+275760-09-13T00:00:00Z', '2026-13-45T99:99:99Z']),
      reason,
    },
    { requiredKeys: [] },
  ),
  '/api/v1/consumer-groups/[group]/queues/[queue]/partitions/[partition]/seek': fc.record(
    { toEnd: plausible([true]), timestamp: plausible(['2026-01-01T00:00:00Z', '2026-13-45T99:99:99Z']), reason },
    { requiredKeys: [] },
  ),
  '/api/v1/traces': fc.record(
    {
      transactionId: plausible(['t1', 't2']),
      partitionId: fc.oneof(uuid, anyJson),
      consumerGroup: plausible(['g', null]),
      eventType: plausible(['info', 'error']),
      data: anyJson,
      traceNames: fc.oneof(plausible(['n1', '']), fc.array(plausible(['n1', 'n2']), { maxLength: 25 })),
    },
    { requiredKeys: [] },
  ),
  '/api/v1/system/maintenance/pop': fc.record({ enabled: plausible([false]), reason }, { requiredKeys: [] }),
  '/api/v1/leases/[leaseId]/release': fc.record({ reason }, { requiredKeys: [] }),
  '/api/v1/cursors/[partitionId]/[group]/pause': fc.record(
    { paused: plausible([true, false]), reason, until: plausible([null, '2099-01-01T00:00:00Z', 'soon']) },
    { requiredKeys: [] },
  ),
  '/api/auth/session': fc.record({ token: anyJson }, { requiredKeys: [] }),
};

const QUERY_NAMES = [
  'batch',
  'partitions',
  'autoAck',
  'timeout',
  'leaseSeconds',
  'consumerGroup',
  'subscriptionMode',
  'subscriptionFrom',
  'namespace',
  'task',
  'limit',
  'offset',
  'page',
  'queue',
  'group',
  'partition',
  'state',
  'holder',
  'sort',
  'deleteMetadata',
  'reason',
  'target',
  'action',
  'actor',
  'q',
  'ns',
  'status',
  'from',
  'to',
  'minLagSeconds',
];
const queryValue = fc.oneof(
  hostileString,
  hostileNumber.map(String),
  fc.constantFrom('true', 'false', 'NaN', 'Infinity', '-0', '0x10', '1e3', '  5', 'live', 'stuck'),
);

/** encodeURIComponent, except that a lone surrogate goes out as its raw UTF-8 bytes (not valid UTF-8). */
const encode = (v: string) =>
  v
    .split(/([\ud800-\udfff])/)
    .map((part, i) => (i % 2 ? '%ED%A0%80' : encodeURIComponent(part)))
    .join('');

interface FuzzRequest {
  method: string;
  url: string;
  contentType: string | null;
  body: string | undefined;
}

const request: fc.Arbitrary<FuzzRequest> = fc
  .record({
    entry: fc.constantFrom(...Object.keys(ACCESS).filter((k) => k !== 'GET /api/v1/events')),
    params: fc.array(fc.oneof(hostileString, uuid, fc.constantFrom('fuzz.q', 'g', 'p')), {
      minLength: 4,
      maxLength: 4,
    }),
    rawParam: fc.boolean(),
    query: fc.dictionary(fc.constantFrom(...QUERY_NAMES), queryValue, { maxKeys: 4 }),
    body: fc.oneof(
      { weight: 6, arbitrary: fc.constant('template') },
      { weight: 1, arbitrary: anyJson.map((v) => JSON.stringify(v)) },
      { weight: 1, arbitrary: hostileString },
    ),
    contentType: fc.oneof(
      { weight: 8, arbitrary: fc.constant('application/json') },
      {
        weight: 1,
        arbitrary: fc.constantFrom(
          'text/plain',
          null,
          'application/x-www-form-urlencoded',
          'application/json; charset=latin1',
        ),
      },
    ),
  })
  .chain((r) => {
    const [method, pattern] = r.entry.split(' ');
    const shape = BODIES[pattern] ?? fc.constant({});
    return shape.map((templateBody) => {
      let i = 0;
      // raw: the value goes into the path unencoded (slashes, %, spaces and all); else encoded
      const url = pattern.replace(/\[(\w+)\]/g, () => {
        const v = r.params[i++ % r.params.length];
        return r.rawParam ? v.replace(/[\s#?]/g, '') || 'x' : encode(v);
      });
      const qs = new URLSearchParams(url.startsWith('/api/v1/pop') ? [['wait', 'false']] : []);
      for (const [k, v] of Object.entries(r.query)) qs.append(k, v);
      const hasBody = method !== 'GET';
      const body = !hasBody ? undefined : r.body === 'template' ? JSON.stringify(templateBody) : r.body;
      return {
        method,
        url: `${url}${qs.size ? `?${qs}` : ''}`,
        contentType: hasBody ? r.contentType : 'application/json',
        body,
      };
    });
  });

describe('fuzz: hostile requests over every route', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startApp({ RETENTION_INTERVAL_MS: '3600000', STATS_SAMPLE_SECONDS: '3600' });
    // Every row written to the broker's tables, except by the instances' heartbeat, counts. The
    // heartbeat also takes the rate samples (and folds the holder minutes) whenever it is time,
    // which in a database that had no queue at start-up is as soon as the first queue appears, so
    // during whatever request is under way. What a request writes there follows a cursor's update,
    // which counts.
    await app.db.query(`
      create sequence public.fuzz_writes;
      create function public.fuzz_count_write() returns trigger language plpgsql as $$
      begin perform nextval('public.fuzz_writes'); return null; end $$;
      do $$ declare t text; begin
        for t in select tablename from pg_tables where schemaname = 'queen' and tablename not in ('instances', 'stats_samples', 'holder_stats', 'holder_clients') loop
          execute format('create trigger fuzz_count after insert or update or delete on queen.%I for each row execute function public.fuzz_count_write()', t);
        end loop;
      end $$;`);
  });
  afterAll(() => app?.stop());

  const writes = async () =>
    Number(
      (await app.db.query(`select case when is_called then last_value else 0 end as n from public.fuzz_writes`))[0].n,
    );

  async function send(r: FuzzRequest) {
    const headers: Record<string, string> = {};
    if (r.contentType) headers['content-type'] = r.contentType;
    const res = await fetch(app.server.url + r.url, { method: r.method, headers, body: r.body });
    return {
      status: res.status,
      json: Boolean(res.headers.get('content-type')?.includes('json')),
      text: await res.text(),
    };
  }

  it(`answers ${RUNS} generated requests (seed ${SEED}) without a 5xx, and refusals write nothing`, async () => {
    const requests = fc.sample(request, { seed: SEED, numRuns: RUNS });
    const failures: string[] = [];
    const statuses: Record<number, number> = {};
    const first = await writes();
    for (const [i, r] of requests.entries()) {
      const before = await writes();
      let outcome: Awaited<ReturnType<typeof send>>;
      try {
        outcome = await send(r);
      } catch (err) {
        failures.push(`#${i} ${r.method} ${r.url}: no answer (${(err as Error).message})`);
        continue;
      }
      statuses[outcome.status] = (statuses[outcome.status] ?? 0) + 1;
      const wrote = (await writes()) - before;
      const what = `#${i} ${r.method} ${r.url.slice(0, 200)} [${r.contentType}] ${String(r.body).slice(0, 200)} → ${outcome.status} ${outcome.text.slice(0, 200)}`;
      if (outcome.status >= 500) failures.push(what);
      else if (outcome.status >= 400 && wrote > 0) failures.push(`${what} (refused but wrote ${wrote} rows)`);
      else if (outcome.status >= 400 && outcome.json && typeof JSON.parse(outcome.text).error !== 'string')
        failures.push(`${what} (no error text)`);
    }
    const written = (await writes()) - first;
    console.log(
      `fuzz seed ${SEED}: ${requests.length} requests, statuses ${JSON.stringify(statuses)}, ${written} rows written by the accepted ones`,
    );
    expect(failures).toEqual([]);
    expect(written, 'the write counter sees what accepted requests write').toBeGreaterThan(0);
    expect((await fetch(`${app.server.url}/health`)).status).toBe(200);
  }, 600_000);

  it('refuses JSON nested too deep and bodies over the limit, with a 4xx that says so', async () => {
    const deep = '['.repeat(100_000) + ']'.repeat(100_000);
    const before = await writes();
    for (const path of ['/api/v1/push', '/api/v1/configure', '/api/v1/transaction', '/api/v1/ack/batch']) {
      const res = await send({
        method: 'POST',
        url: path,
        contentType: 'application/json',
        body: `{"items":[{"queue":"q","payload":${deep}}]}`,
      });
      expect(res.status, path).toBe(400);
      expect(JSON.parse(res.text).error).toMatch(/^body: nested \d+ levels deep; at most 100 are accepted$/);
    }
    const tenMb = JSON.stringify({ items: [{ queue: 'q', payload: 'x'.repeat(10 * 1024 * 1024) }] });
    const big = await send({ method: 'POST', url: '/api/v1/push', contentType: 'application/json', body: tenMb });
    expect(big.status).toBe(413);
    expect(await writes()).toBe(before);
    expect((await fetch(`${app.server.url}/health`)).status).toBe(200);
  });
});
