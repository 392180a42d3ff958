// Each queue option's default is written once (lib/broker/option-defaults.ts, issue 31); every other
// place that states one is checked against it here, so a second copy cannot drift: PostgreSQL's column
// defaults of queen.queues (the implicit queue's), what configure stores for an omitted option
// (0.1.0's configure sends no deadLetterAfterExpiries), the Drizzle schema, the OpenAPI document's
// field descriptions (lib/http/field-docs.ts), and docs/api.md, which states none.
import fs from 'node:fs';
import path from 'node:path';
import { getTableConfig } from 'drizzle-orm/pg-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as schema from '@/db/schema';
import { CONFIGURED_QUEUE_DEFAULTS, IMPLICIT_QUEUE_DEFAULTS, OPTION_COLUMNS } from '@/lib/broker/option-defaults';
import { queueOptions } from '@/lib/broker/options';
import { testDatabase, type TestDatabase } from './support/db';

type Name = keyof typeof CONFIGURED_QUEUE_DEFAULTS;
const names = Object.keys(CONFIGURED_QUEUE_DEFAULTS) as Name[];

describe('queue option defaults', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await testDatabase();
  });
  afterAll(() => db?.drop());

  it('the two sets differ only where pop-routes.md says (leaseTime: 60 implicit, 300 configured)', () => {
    expect(IMPLICIT_QUEUE_DEFAULTS.leaseTime).toBe(60);
    expect(CONFIGURED_QUEUE_DEFAULTS.leaseTime).toBe(300);
    const differ = names.filter((n) => IMPLICIT_QUEUE_DEFAULTS[n] !== CONFIGURED_QUEUE_DEFAULTS[n]);
    expect(differ).toEqual(['leaseTime']);
    expect(queueOptions.parse({})).toEqual(CONFIGURED_QUEUE_DEFAULTS);
  });

  it("queen.queues' column defaults are the implicit set, and an option without one has none", async () => {
    const rows = await db.query<{ column_name: string; column_default: string | null }>(
      `select column_name, column_default from information_schema.columns
        where table_schema = 'queen' and table_name = 'queues'`,
    );
    const inDatabase = Object.fromEntries(rows.map((r) => [r.column_name, r.column_default]));
    const expected = Object.fromEntries(names.map((n) => [OPTION_COLUMNS[n], String(IMPLICIT_QUEUE_DEFAULTS[n])]));
    expect(Object.fromEntries(names.map((n) => [OPTION_COLUMNS[n], inDatabase[OPTION_COLUMNS[n]]]))).toEqual(expected);
  });

  it('an implicit queue has the implicit set; a configure with nothing, the configured set', async () => {
    await db.query(`select queen.ensure_queues(array['defaults.implicit'])`);
    const [implicit] = await db.query<{ options: Record<string, unknown> }>(
      `select queen.queue_options(q) as options from queen.queues q where q.name = 'defaults.implicit'`,
    );
    expect(implicit.options).toEqual(IMPLICIT_QUEUE_DEFAULTS);
    const [configured] = await db.query<{ options: Record<string, unknown> }>(
      `select options from queen.configure_queue('defaults.configured', '', '', $1::jsonb)`,
      [JSON.stringify(queueOptions.parse({}))],
    );
    expect(configured.options).toEqual(CONFIGURED_QUEUE_DEFAULTS);
    // 0.1.0's configure sends its full set, which has no deadLetterAfterExpiries
    const { deadLetterAfterExpiries: _, ...older } = queueOptions.parse({});
    const [old] = await db.query<{ options: Record<string, unknown> }>(
      `select options from queen.configure_queue('defaults.older', '', '', $1::jsonb)`,
      [JSON.stringify(older)],
    );
    expect(old.options).toEqual(CONFIGURED_QUEUE_DEFAULTS);
  });

  it('the Drizzle schema states the implicit set', () => {
    const columns = new Map(getTableConfig(schema.queues).columns.map((c) => [c.name, c.default]));
    const expected = Object.fromEntries(names.map((n) => [n, IMPLICIT_QUEUE_DEFAULTS[n]]));
    expect(Object.fromEntries(names.map((n) => [n, columns.get(OPTION_COLUMNS[n])]))).toEqual(expected);
  });

  it("the OpenAPI document states each option's default from them, and docs/api.md states none", async () => {
    const { FIELD_DOCS } = await import('@/lib/http/field-docs');
    for (const n of names) {
      const stated = FIELD_DOCS[n]?.match(/\(default ([^;)]+)/)?.[1];
      if (n === 'leaseTime')
        expect(FIELD_DOCS[n]).toContain(
          `${CONFIGURED_QUEUE_DEFAULTS.leaseTime} once configured, ${IMPLICIT_QUEUE_DEFAULTS.leaseTime} for an implicit queue`,
        );
      else expect([n, stated]).toEqual([n, String(CONFIGURED_QUEUE_DEFAULTS[n])]);
    }
    // a default stated again in prose would be a copy that can drift: the docs point to the schema
    const text = fs.readFileSync(path.join(__dirname, '..', 'docs', 'api.md'), 'utf8');
    const copies = text
      .split('\n')
      .filter((line) => names.some((n) => line.includes(`\`${n}\``)) && /\bdefault\b/i.test(line) && /\d/.test(line));
    expect(copies).toEqual([]);
  });
});
