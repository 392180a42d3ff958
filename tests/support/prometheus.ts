// A strict parser of the Prometheus text exposition format (0.0.4): every line is a HELP, a TYPE,
// or a sample of a family declared before it; names, label syntax and escapes, values and
// duplicate series are checked. Throws naming the line on anything else.

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface Family {
  name: string;
  type: 'counter' | 'gauge' | 'histogram' | 'summary' | 'untyped';
  help?: string;
  samples: Sample[];
}

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
const TYPES = ['counter', 'gauge', 'histogram', 'summary', 'untyped'];
const SUFFIXES: Record<string, string[]> = {
  counter: ['', '_total'],
  gauge: [''],
  untyped: [''],
  histogram: ['_bucket', '_sum', '_count'],
  summary: ['', '_sum', '_count'],
};

export function parsePrometheus(text: string): Map<string, Family> {
  const families = new Map<string, Family>();
  const seen = new Set<string>();
  const typed = new Set<string>();
  if (!text.endsWith('\n')) throw new Error('the exposition must end with a newline');
  const lines = text.slice(0, -1).split('\n');
  lines.forEach((line, i) => {
    const where = `line ${i + 1}: ${line}`;
    if (line === '') return;
    if (line.startsWith('#')) {
      const m = /^# (HELP|TYPE) (\S+) ?(.*)$/.exec(line);
      if (!m) {
        if (/^# (HELP|TYPE)/.test(line)) throw new Error(`malformed ${where}`);
        return; // a comment
      }
      const [, kind, name, rest] = m;
      if (!NAME.test(name)) throw new Error(`bad metric name, ${where}`);
      const family = families.get(name) ?? { name, type: 'untyped' as const, samples: [] };
      if (kind === 'TYPE') {
        if (!TYPES.includes(rest)) throw new Error(`unknown type, ${where}`);
        if (family.samples.length) throw new Error(`TYPE after samples, ${where}`);
        if (typed.has(name)) throw new Error(`second TYPE, ${where}`);
        family.type = rest as Family['type'];
        typed.add(name);
      } else {
        if (family.help !== undefined) throw new Error(`second HELP, ${where}`);
        family.help = rest;
      }
      families.set(name, family);
      return;
    }
    const sample = parseSample(line, where);
    const family = familyOf(families, sample.name);
    if (!family) throw new Error(`sample of an undeclared family, ${where}`);
    if (sample.name.endsWith('_bucket') && !('le' in sample.labels)) throw new Error(`bucket without le, ${where}`);
    const key = `${sample.name}{${Object.entries(sample.labels)
      .sort()
      .map(([k, v]) => `${k}=${v}`)
      .join(',')}}`;
    if (seen.has(key)) throw new Error(`duplicate series ${key}, ${where}`);
    seen.add(key);
    family.samples.push(sample);
  });
  return families;
}

function familyOf(families: Map<string, Family>, sampleName: string): Family | undefined {
  for (const f of families.values()) {
    if (!sampleName.startsWith(f.name)) continue;
    if (SUFFIXES[f.type].includes(sampleName.slice(f.name.length))) return f;
  }
  return undefined;
}

function parseSample(line: string, where: string): Sample {
  let i = 0;
  const nameMatch = /^[a-zA-Z_:][a-zA-Z0-9_:]*/.exec(line);
  if (!nameMatch) throw new Error(`bad sample name, ${where}`);
  const name = nameMatch[0];
  i = name.length;
  const labels: Record<string, string> = {};
  if (line[i] === '{') {
    i++;
    while (line[i] !== '}') {
      const l = /^[a-zA-Z_][a-zA-Z0-9_]*/.exec(line.slice(i));
      if (!l || !LABEL.test(l[0])) throw new Error(`bad label name, ${where}`);
      i += l[0].length;
      if (line.slice(i, i + 2) !== '="') throw new Error(`expected =" after a label name, ${where}`);
      i += 2;
      let value = '';
      for (;;) {
        const c = line[i++];
        if (c === undefined) throw new Error(`unterminated label value, ${where}`);
        if (c === '"') break;
        if (c === '\\') {
          const e = line[i++];
          if (e === 'n') value += '\n';
          else if (e === '\\' || e === '"') value += e;
          else throw new Error(`bad escape \\${e}, ${where}`);
        } else value += c;
      }
      if (l[0] in labels) throw new Error(`label ${l[0]} twice, ${where}`);
      labels[l[0]] = value;
      if (line[i] === ',') i++;
      else if (line[i] !== '}') throw new Error(`expected , or } in labels, ${where}`);
    }
    i++;
  }
  const rest = line.slice(i);
  const m = /^ (\S+)(?: (-?\d+))?$/.exec(rest);
  if (!m) throw new Error(`expected one space, a value and an optional timestamp, ${where}`);
  const raw = m[1];
  // Prometheus reads values with Go's ParseFloat: Inf and NaN in any case (prom-client writes `Nan`)
  const nan = /^nan$/i.test(raw);
  const value = /^\+?inf$/i.test(raw) ? Infinity : /^-inf$/i.test(raw) ? -Infinity : nan ? NaN : Number(raw);
  if (Number.isNaN(value) && !nan) throw new Error(`bad value ${raw}, ${where}`);
  if (!/^([-+]?(\d+\.?\d*([eE][-+]?\d+)?|\.\d+([eE][-+]?\d+)?|inf)|nan)$/i.test(raw))
    throw new Error(`bad value ${raw}, ${where}`);
  return { name, labels, value };
}

/** The value of one series; undefined when the scrape does not have it. */
export function valueOf(
  families: Map<string, Family>,
  sampleName: string,
  labels: Record<string, string> = {},
): number | undefined {
  for (const f of families.values()) {
    for (const s of f.samples) {
      if (s.name !== sampleName) continue;
      if (Object.keys(labels).length !== Object.keys(s.labels).length) continue;
      if (Object.entries(labels).every(([k, v]) => s.labels[k] === v)) return s.value;
    }
  }
  return undefined;
}
