import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { is } from 'drizzle-orm';
import { getTableConfig, PgTable } from 'drizzle-orm/pg-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MIGRATIONS_DIR, migrate } from '@/db/migrate';
import * as schema from '@/db/schema';
import { testDatabase, type TestDatabase } from './support/db';

const migrationFiles = fs
  .readdirSync(MIGRATIONS_DIR)
  .filter((f) => /^\d{3}_.*\.sql$/.test(f))
  .sort();
const versions = [...migrationFiles.map((f) => f.replace(/\.sql$/, '')), 'functions'];
// The last migration of the previous landed release (0.1.0).
const LANDED_RELEASE_LAST = '020_browse_and_search.sql';

function copyOfSql({ upTo, withFunctions }: { upTo?: string; withFunctions: boolean }): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'queen-migrations-'));
  for (const f of migrationFiles)
    if (upTo === undefined || f <= upTo) fs.copyFileSync(path.join(MIGRATIONS_DIR, f), path.join(dir, f));
  if (withFunctions)
    fs.cpSync(path.join(MIGRATIONS_DIR, 'functions'), path.join(dir, 'functions'), { recursive: true });
  return dir;
}

/** Everything of the queen schemas that the code relies on, read from the catalog. */
async function catalog(db: TestDatabase): Promise<string[]> {
  const rows = await db.query<{ item: string }>(`
    select 'column ' || table_schema || '.' || table_name || '.' || column_name || ' ' || udt_name || ' ' || is_nullable
           || ' ' || coalesce(column_default, '') as item
      from information_schema.columns where table_schema like 'queen%'
    union all
    select 'index ' || schemaname || ' ' || indexdef from pg_indexes where schemaname like 'queen%'
    union all
    select 'constraint ' || conrelid::regclass || ' ' || conname || ' ' || pg_get_constraintdef(c.oid)
      from pg_constraint c join pg_namespace n on n.oid = c.connamespace where n.nspname like 'queen%'
    union all
    select 'function ' || pg_get_functiondef(p.oid)
      from pg_proc p join pg_namespace n on n.oid = p.pronamespace where n.nspname like 'queen%'
    union all
    select 'trigger ' || pg_get_triggerdef(t.oid)
      from pg_trigger t join pg_class r on r.oid = t.tgrelid join pg_namespace n on n.oid = r.relnamespace
     where n.nspname like 'queen%' and not t.tgisinternal`);
  return rows.map((r) => r.item).sort();
}

describe('migrations', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await testDatabase({ migrated: false });
  });
  afterAll(() => db.drop());

  it('bring a fresh database to the latest version', async () => {
    expect(await migrate(db.url)).toEqual(versions);
    const rows = await db.query<{ version: string }>('select version from queen.migrations order by version');
    expect(rows.map((r) => r.version)).toEqual(versions);
  });

  it('change nothing when run again', async () => {
    const before = await db.query('select version, checksum, applied_at from queen.migrations order by version');
    expect(await migrate(db.url)).toEqual([]);
    expect(await db.query('select version, checksum, applied_at from queen.migrations order by version')).toEqual(
      before,
    );
  });

  it('refuse a landed migration whose text was edited', async () => {
    const dir = copyOfSql({ withFunctions: true });
    fs.appendFileSync(path.join(dir, `${versions[0]}.sql`), '\n-- edited\n');
    await expect(migrate(db.url, dir)).rejects.toThrow(/was edited after it was applied/);
    fs.rmSync(dir, { recursive: true });
  });

  it('roll a failing migration back whole and do not record it', async () => {
    const dir = copyOfSql({ withFunctions: true });
    fs.writeFileSync(path.join(dir, '999_broken.sql'), 'create table queen.half_done (id int);\nselect 1/0;');
    await expect(migrate(db.url, dir)).rejects.toThrow(/999_broken failed/);
    expect(await db.query("select to_regclass('queen.half_done') as t")).toEqual([{ t: null }]);
    expect(await db.query("select 1 from queen.migrations where version = '999_broken'")).toEqual([]);
    fs.rmSync(dir, { recursive: true });
  });

  it('apply the function files again when one of them changed, and only then', async () => {
    const dir = copyOfSql({ withFunctions: true });
    expect(await migrate(db.url, dir)).toEqual([]);
    fs.appendFileSync(
      path.join(dir, 'functions', 'util.sql'),
      "\ncreate or replace function queen.iso(ts timestamptz) returns text language sql immutable as $$ select 'changed' $$;\n",
    );
    expect(await migrate(db.url, dir)).toEqual(['functions']);
    expect(await db.query('select queen.iso(now()) as v')).toEqual([{ v: 'changed' }]);
    expect(await migrate(db.url)).toEqual(['functions']);
    expect(await db.query("select queen.iso('2026-01-01T00:00:00Z') as v")).not.toEqual([{ v: 'changed' }]);
    fs.rmSync(dir, { recursive: true });
  });

  it('apply the pending migrations and the function files in one transaction: a failing function file records neither', async () => {
    const dir = copyOfSql({ withFunctions: true });
    fs.writeFileSync(path.join(dir, '999_with_functions.sql'), 'create table queen.with_functions (id int);');
    fs.appendFileSync(path.join(dir, 'functions', 'util.sql'), '\nselect 1/0;\n');
    try {
      await expect(migrate(db.url, dir)).rejects.toThrow(/SQL functions failed/);
      expect(await db.query("select to_regclass('queen.with_functions') as t")).toEqual([{ t: null }]);
      expect(await db.query("select 1 from queen.migrations where version = '999_with_functions'")).toEqual([]);
    } finally {
      fs.rmSync(dir, { recursive: true });
    }
  });

  it("keep a newer release's function files on a database it migrated (an older instance restarting in a rolling upgrade)", async () => {
    const dir = copyOfSql({ withFunctions: true });
    fs.appendFileSync(
      path.join(dir, 'functions', 'util.sql'),
      "\ncreate or replace function queen.iso(ts timestamptz) returns text language sql immutable as $$ select 'newer' $$;\n",
    );
    fs.writeFileSync(path.join(dir, '999_newer_release.sql'), 'select 1;');
    try {
      expect(await migrate(db.url, dir)).toEqual(['999_newer_release', 'functions']);
      const heard: string[][] = [];
      expect(await migrate(db.url, undefined, (newer) => heard.push(newer))).toEqual([]);
      expect(heard).toEqual([['999_newer_release']]);
      expect(await db.query('select queen.iso(now()) as v')).toEqual([{ v: 'newer' }]);
    } finally {
      await db.query(`delete from queen.migrations where version = '999_newer_release'`);
      await migrate(db.url);
      fs.rmSync(dir, { recursive: true });
    }
  });

  it('give a database upgraded from the previous landed release the same schema as a fresh one', async () => {
    const upgraded = await testDatabase({ migrated: false });
    const fresh = await testDatabase();
    try {
      const landed = copyOfSql({ upTo: LANDED_RELEASE_LAST, withFunctions: false });
      await migrate(upgraded.url, landed);
      fs.rmSync(landed, { recursive: true });
      await migrate(upgraded.url);
      expect(await catalog(upgraded)).toEqual(await catalog(fresh));
    } finally {
      await upgraded.drop();
      await fresh.drop();
    }
  });

  it('let four runners started at once all succeed, applying each migration once', async () => {
    const fresh = await testDatabase({ migrated: false });
    try {
      const results = await Promise.all([1, 2, 3, 4].map(() => migrate(fresh.url)));
      expect(results.flat().sort()).toEqual(versions);
      expect(results.filter((r) => r.length > 0)).toHaveLength(1);
      const rows = await fresh.query<{ n: number }>('select count(*)::int as n from queen.migrations');
      expect(rows[0].n).toBe(versions.length);
    } finally {
      await fresh.drop();
    }
  });
});

describe('the Drizzle schema', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await testDatabase();
  });
  afterAll(() => db.drop());

  const tables = (Object.values(schema) as unknown[]).filter((v): v is PgTable => is(v, PgTable));

  it('covers every table of the migrated database', async () => {
    const rows = await db.query<{ table_name: string }>(
      "select table_schema || '.' || table_name as table_name from information_schema.tables where table_schema like 'queen%' order by 1",
    );
    expect(tables.map((t) => `${getTableConfig(t).schema}.${getTableConfig(t).name}`).sort()).toEqual(
      rows.map((r) => r.table_name),
    );
  });

  it('matches every column: name, type, nullability', async () => {
    const rows = await db.query<{ table_name: string; column_name: string; udt_name: string; is_nullable: string }>(
      "select table_schema || '.' || table_name as table_name, column_name, udt_name, is_nullable from information_schema.columns where table_schema like 'queen%'",
    );
    const inDatabase = rows
      .map((r) => `${r.table_name}.${r.column_name} ${r.udt_name} ${r.is_nullable === 'YES' ? 'null' : 'not null'}`)
      .sort();
    const pgType = (sqlType: string) =>
      ({
        bigint: 'int8',
        'bigint[]': '_int8',
        'text[]': '_text',
        integer: 'int4',
        smallint: 'int2',
        text: 'text',
        uuid: 'uuid',
        boolean: 'bool',
        jsonb: 'jsonb',
        'timestamp with time zone': 'timestamptz',
      })[sqlType] ?? sqlType;
    const inDrizzle = tables
      .flatMap((t) => {
        const c = getTableConfig(t);
        return c.columns.map(
          (col) => `${c.schema}.${c.name}.${col.name} ${pgType(col.getSQLType())} ${col.notNull ? 'not null' : 'null'}`,
        );
      })
      .sort();
    expect(inDrizzle).toEqual(inDatabase);
  });
});
