// lib/exact-json.ts on its own: what JSON.parse would alter is read as its text and written back as it.
import { describe, expect, it } from 'vitest';
import { RawJson, exactOnlyIn, isExactNumber, parseExact, stringifyExact } from '@/lib/exact-json';

describe('exact JSON', () => {
  it('tells which numbers JavaScript writes back as written', () => {
    for (const t of ['0', '7', '-3', '42', '123456789012345', '0.5', '-1.25']) expect(isExactNumber(t), t).toBe(true);
    for (const t of ['12345678901234567891', '1e400', '1e-400', '1.0', '19.990', '-0', '1E5', '0.1000'])
      expect(isExactNumber(t), t).toBe(false);
  });

  it('parses as JSON.parse does, keeping inexact numbers as their text, and writes them back', () => {
    const text = `{"id": 12345678901234567891, "s": "a \\" b \\\\", "n": [1, 1.0, -0, true, false, null, {}, []], "__proto__": {"x": 1e400}}`;
    const parsed = parseExact(text) as Record<string, unknown>;
    expect(parsed.id).toEqual(new RawJson('12345678901234567891'));
    expect(parsed.s).toBe('a " b \\');
    expect(Object.getPrototypeOf(parsed)).toBe(Object.prototype);
    expect(Object.keys(parsed)).toEqual(['id', 's', 'n', '__proto__']);
    expect(stringifyExact(parsed)).toBe(
      '{"id":12345678901234567891,"s":"a \\" b \\\\","n":[1,1.0,-0,true,false,null,{},[]],"__proto__":{"x":1e400}}',
    );
    expect(stringifyExact({ data: new RawJson('{"a": "x\\"y"}') })).toBe('{"data":{"a": "x\\"y"}}');
  });

  it('keeps exact numbers only inside user data', () => {
    const v = exactOnlyIn(parseExact('{"leaseTime": 30.0, "items": [{"payload": {"n": 1.0}}]}'), new Set(['payload']));
    expect(stringifyExact(v)).toBe('{"leaseTime":30,"items":[{"payload":{"n":1.0}}]}');
  });
});
