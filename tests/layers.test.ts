// The layer rule of docs/architecture.md's layout: lib/broker (the operations) imports neither the HTTP
// adapters (lib/http) nor the dashboard's read models (lib/dashboard); lib/dashboard may use the
// broker but not the HTTP adapters. Reads the import specifiers of every module, static and dynamic.
import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = resolve(__dirname, '..');

function modulesUnder(dir: string): string[] {
  return readdirSync(join(root, dir), { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return modulesUnder(path);
    return /\.(ts|tsx|mts|mjs|js)$/.test(e.name) ? [path] : [];
  });
}

/** Every module specifier the file names: `import … from`, `export … from`, `import()`, bare `import '…'`. */
function specifiersOf(text: string): string[] {
  const found: string[] = [];
  for (const m of text.matchAll(
    /\bfrom\s*['"]([^'"]+)['"]|\bimport\s*\(\s*['"]([^'"]+)['"]|^\s*import\s*['"]([^'"]+)['"]/gm,
  )) {
    found.push(m[1] ?? m[2] ?? m[3]);
  }
  return found;
}

/** The repository path a specifier points to (`@/` is the root), or undefined for a package. */
function targetOf(file: string, specifier: string): string | undefined {
  if (specifier.startsWith('@/')) return specifier.slice(2);
  if (specifier.startsWith('.')) return relative(root, resolve(root, dirname(file), specifier));
  return undefined;
}

function violations(layer: string, forbidden: string[]): string[] {
  return modulesUnder(layer).flatMap((file) =>
    specifiersOf(readFileSync(join(root, file), 'utf8'))
      .filter((s) => {
        const target = targetOf(file, s);
        return target !== undefined && forbidden.some((f) => target === f || target.startsWith(`${f}/`));
      })
      .map((s) => `${file} imports ${s}`),
  );
}

describe('layers', () => {
  it('finds the imports it checks (a relative one and an @/ one)', () => {
    expect(targetOf('lib/broker/a.ts', '../http/route')).toBe('lib/http/route');
    expect(targetOf('lib/broker/streams/a.ts', '../../dashboard/x')).toBe('lib/dashboard/x');
    expect(
      specifiersOf(
        "import { a } from '@/lib/http/x';\nconst b = await import('../dashboard/y');\nexport * from \"./z\";",
      ),
    ).toEqual(['@/lib/http/x', '../dashboard/y', './z']);
    expect(modulesUnder('lib/broker').length).toBeGreaterThan(20);
  });

  it('lib/broker imports neither lib/http nor lib/dashboard', () => {
    expect(violations('lib/broker', ['lib/http', 'lib/dashboard'])).toEqual([]);
  });

  it('lib/dashboard does not import lib/http', () => {
    expect(violations('lib/dashboard', ['lib/http'])).toEqual([]);
  });
});
