// User data (payloads, stream state values) goes from the request's JSON text to PostgreSQL's jsonb
// and back byte for byte where it matters: numbers. JSON.parse reads 12345678901234567891 as
// 12345678901234567000 and 1e400 as Infinity (written as null); jsonb keeps both exactly, and so
// does the C++ broker. A number whose text a JavaScript number would not write back the same is
// read as a RawJson holding its text, and written back as that text by stringifyExact. The same
// RawJson carries a stored payload's text into an answer without parsing it.

/**
 * Marks a RawJson inside JSON.stringify's output: a string that starts with U+0000. No user string
 * can (a body with U+0000 is refused, and PostgreSQL text cannot hold one), so the mark is never data.
 */
const MARK = '\u0000#';
const MARKED = /"\\u0000#((?:[^"\\]|\\.)*)"/g;

/** JSON text to be written as it is where a value goes. */
export class RawJson {
  constructor(readonly text: string) {}
  toJSON(): string {
    return MARK + this.text;
  }
}

/** JSON.stringify, with every RawJson written as its own text. */
export function stringifyExact(value: unknown): string {
  const text = JSON.stringify(value);
  if (text === undefined || !text.includes('\\u0000#')) return text;
  return text.replace(MARKED, (_, inner: string) => JSON.parse(`"${inner}"`));
}

/** Whether JavaScript writes the number this JSON token names back as the same text. */
export function isExactNumber(token: string): boolean {
  const digits = token.charCodeAt(0) === 45 ? token.length - 1 : token.length;
  if (digits <= 15 && /^-?(0|[1-9]\d*)$/.test(token) && token !== '-0') return true;
  return JSON.stringify(Number(token)) === token;
}

/**
 * Parses JSON text already known to be valid (JSON.parse accepted it) as JSON.parse does, but a
 * number that JavaScript cannot write back as the same text becomes a RawJson of that text.
 */
export function parseExact(text: string): unknown {
  let i = 0;
  const ws = () => {
    for (let c = text.charCodeAt(i); c === 32 || c === 9 || c === 10 || c === 13; c = text.charCodeAt(++i));
  };
  const string = (): string => {
    const start = i++;
    for (let c = text.charCodeAt(i); c !== 34; c = text.charCodeAt(++i)) if (c === 92) i++;
    i++;
    return JSON.parse(text.slice(start, i));
  };
  const value = (): unknown => {
    ws();
    const c = text.charCodeAt(i);
    if (c === 123) {
      i++;
      const out: Record<string, unknown> = {};
      ws();
      if (text.charCodeAt(i) === 125) return (i++, out);
      for (;;) {
        ws();
        const key = string();
        ws();
        i++; // :
        const v = value();
        // as JSON.parse: an own property, even one named __proto__
        if (key === '__proto__')
          Object.defineProperty(out, key, { value: v, enumerable: true, writable: true, configurable: true });
        else out[key] = v;
        ws();
        if (text.charCodeAt(i++) === 125) return out;
      }
    }
    if (c === 91) {
      i++;
      const out: unknown[] = [];
      ws();
      if (text.charCodeAt(i) === 93) return (i++, out);
      for (;;) {
        out.push(value());
        ws();
        if (text.charCodeAt(i++) === 93) return out;
      }
    }
    if (c === 34) return string();
    if (c === 116) return ((i += 4), true);
    if (c === 102) return ((i += 5), false);
    if (c === 110) return ((i += 4), null);
    const start = i;
    for (
      let d = text.charCodeAt(i);
      (d >= 48 && d <= 57) || d === 45 || d === 43 || d === 46 || d === 101 || d === 69;
      d = text.charCodeAt(++i)
    );
    const token = text.slice(start, i);
    return isExactNumber(token) ? Number(token) : new RawJson(token);
  };
  return value();
}

/**
 * Keeps RawJson numbers only in the values of `keep` keys (user data: payloads, state values);
 * elsewhere (options, limits) a number is read as JSON.parse reads it, so a `1.0` is still 1.
 */
export function exactOnlyIn(value: unknown, keep: ReadonlySet<string>, inside = false): unknown {
  if (value instanceof RawJson) return inside ? value : Number(value.text);
  if (Array.isArray(value)) {
    for (let k = 0; k < value.length; k++) value[k] = exactOnlyIn(value[k], keep, inside);
  } else if (value !== null && typeof value === 'object') {
    const o = value as Record<string, unknown>;
    for (const k of Object.keys(o)) o[k] = exactOnlyIn(o[k], keep, inside || keep.has(k));
  }
  return value;
}

/** The value as a client component receives it: plain objects, numbers as JSON.parse reads them (as the browser's own fetch does). */
export const plain = <T>(value: T): T => JSON.parse(stringifyExact(value));
