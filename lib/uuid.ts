import { randomFillSync } from 'node:crypto';

const pool = Buffer.alloc(16 * 256);
let poolOffset = pool.length;

/** RFC 9562 UUIDv7: 48-bit Unix milliseconds, version 7, variant 10, random rest. */
export function uuidv7(now = Date.now()): string {
  if (poolOffset === pool.length) {
    randomFillSync(pool);
    poolOffset = 0;
  }
  const b = pool.subarray(poolOffset, poolOffset + 16);
  poolOffset += 16;
  b.writeUIntBE(now, 0, 6);
  b[6] = (b[6] & 0x0f) | 0x70;
  b[8] = (b[8] & 0x3f) | 0x80;
  const h = b.toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export const isUuid = (value: string) => UUID.test(value);
