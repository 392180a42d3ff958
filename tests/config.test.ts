import { availableParallelism } from 'node:os';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '@/lib/config.mjs';

describe('the config module', () => {
  it('has the documented defaults', () => {
    const c = loadConfig({});
    expect(c.port).toBe(6632);
    expect(c.host).toBe('127.0.0.1');
    expect(c.databaseUrl).toBeUndefined();
    expect(c.dataDir).toBe('.data');
    expect(c.db).toEqual({
      poolSize: 20,
      acquireTimeoutMs: 3000,
      statementTimeoutMs: 30000,
      pushCallsInFlight: Math.min(10, availableParallelism()),
      warmConnections: 4,
    });
    expect(c.bootNice).toBe(19);
    expect(c.pop).toEqual({
      defaultTimeoutMs: 30000,
      waitInitialIntervalMs: 100,
      waitBackoffThreshold: 3,
      waitBackoffMultiplier: 2,
      waitMaxIntervalMs: 1000,
    });
  });

  it('takes the pop timeout from DEFAULT_TIMEOUT, else POP_DEFAULT_TIMEOUT_MS', () => {
    expect(loadConfig({ POP_DEFAULT_TIMEOUT_MS: '5000' }).pop.defaultTimeoutMs).toBe(5000);
    expect(loadConfig({ DEFAULT_TIMEOUT: '7000', POP_DEFAULT_TIMEOUT_MS: '5000' }).pop.defaultTimeoutMs).toBe(7000);
  });

  it('caps push calls in flight at the cores and half the pool, unless PUSH_CALLS_IN_FLIGHT says', () => {
    expect(loadConfig({ DB_POOL_SIZE: '2' }).db.pushCallsInFlight).toBe(1);
    expect(loadConfig({ DB_POOL_SIZE: '1' }).db.pushCallsInFlight).toBe(1);
    expect(loadConfig({ PUSH_CALLS_IN_FLIGHT: '7' }).db.pushCallsInFlight).toBe(7);
    expect(() => loadConfig({ PUSH_CALLS_IN_FLIGHT: '0' })).toThrow(/PUSH_CALLS_IN_FLIGHT/);
  });

  it('warms 4 connections at boot, never more than the pool holds, and refuses DB_POOL_WARM above DB_POOL_SIZE', () => {
    expect(loadConfig({ DB_POOL_SIZE: '2' }).db.warmConnections).toBe(2);
    expect(loadConfig({ DB_POOL_WARM: '0' }).db.warmConnections).toBe(0);
    expect(loadConfig({ DB_POOL_WARM: '8', DB_POOL_SIZE: '8' }).db.warmConnections).toBe(8);
    expect(() => loadConfig({ DB_POOL_WARM: '9', DB_POOL_SIZE: '8' })).toThrow(
      /DB_POOL_WARM \(9\) is more than DB_POOL_SIZE \(8\)/,
    );
    expect(() => loadConfig({ DB_POOL_WARM: '-1' })).toThrow(/DB_POOL_WARM/);
  });

  it('lowers the boot by BOOT_NICE, 0 to 19', () => {
    expect(loadConfig({ BOOT_NICE: '0' }).bootNice).toBe(0);
    expect(() => loadConfig({ BOOT_NICE: '20' })).toThrow(/BOOT_NICE/);
  });

  it('fails naming every bad variable', () => {
    expect(() => loadConfig({ PORT: 'eighty' })).toThrow(/PORT/);
    expect(() => loadConfig({ DB_POOL_SIZE: '0', POP_WAIT_BACKOFF_MULTIPLIER: 'x' })).toThrow(
      /DB_POOL_SIZE.*POP_WAIT_BACKOFF_MULTIPLIER/,
    );
    expect(() => loadConfig({ QUEEN_ENCRYPTION_KEY: 'abc' })).toThrow(/QUEEN_ENCRYPTION_KEY: must be 64 hexadecimal/);
  });

  it('takes DATABASE_READ_URL only as a postgres URL, and only beside DATABASE_URL', () => {
    expect(loadConfig({}).databaseReadUrl).toBeUndefined();
    const primary = 'postgres://queen@db:5432/queen';
    const replica = 'postgres://queen@replica:5432/queen';
    expect(loadConfig({ DATABASE_URL: primary, DATABASE_READ_URL: replica }).databaseReadUrl).toBe(replica);
    expect(() => loadConfig({ DATABASE_URL: primary, DATABASE_READ_URL: 'replica:5432' })).toThrow(
      /DATABASE_READ_URL: must be a postgres/,
    );
    expect(() => loadConfig({ DATABASE_READ_URL: replica })).toThrow(
      /DATABASE_READ_URL is set but DATABASE_URL is not/,
    );
  });

  it('treats an empty variable as unset', () => {
    expect(loadConfig({ PORT: '' }).port).toBe(6632);
  });
});
