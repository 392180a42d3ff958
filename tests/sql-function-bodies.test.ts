// Each SQL function's current body lives in one place (DESIGN.md: sql/functions/*.sql, reapplied
// by db/migrate.ts): a function signature defined twice there has two current bodies, and which one
// wins depends on the order the files are read in.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const dir = path.join(__dirname, '..', 'sql', 'functions');

/** `schema.name(argument types)` of every function a file of sql/functions defines, with its file. */
function definitions(): { signature: string; file: string }[] {
  const out: { signature: string; file: string }[] = [];
  for (const file of fs.readdirSync(dir).filter((f) => f.endsWith('.sql'))) {
    const text = fs.readFileSync(path.join(dir, file), 'utf8').replace(/--[^\n]*/g, '');
    for (const m of text.matchAll(/create\s+or\s+replace\s+function\s+([\w.]+)\s*\(/gi)) {
      let depth = 1;
      let i = m.index + m[0].length;
      const start = i;
      for (; depth > 0 && i < text.length; i++) depth += text[i] === '(' ? 1 : text[i] === ')' ? -1 : 0;
      // the argument types only: names and defaults do not make another signature
      const types = text
        .slice(start, i - 1)
        .split(/,(?![^(]*\))/)
        .map((a) =>
          a
            .replace(/\s+default\s+.*$/is, '')
            .trim()
            .split(/\s+/)
            .slice(1)
            .join(' ')
            .toLowerCase(),
        )
        .filter(Boolean);
      out.push({ signature: `${m[1].toLowerCase()}(${types.join(', ')})`, file });
    }
  }
  return out;
}

describe('sql/functions', () => {
  it('defines every function signature exactly once', () => {
    const seen = new Map<string, string[]>();
    for (const { signature, file } of definitions()) seen.set(signature, [...(seen.get(signature) ?? []), file]);
    const twice = [...seen].filter(([, files]) => files.length > 1).map(([s, files]) => `${s}: ${files.join(', ')}`);
    expect(definitions().length).toBeGreaterThan(50);
    expect(twice).toEqual([]);
  });
});
