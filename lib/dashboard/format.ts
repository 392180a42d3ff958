/** "4 s", "3 min 20 s", "2 h 5 min", "3 d 4 h": the two largest units. */
export function duration(seconds: number | null | undefined): string {
  if (seconds === null || seconds === undefined || Number.isNaN(seconds)) return '—';
  const s = Math.max(0, Math.round(seconds));
  const units: [number, string][] = [
    [86400, 'd'],
    [3600, 'h'],
    [60, 'min'],
    [1, 's'],
  ];
  const parts: string[] = [];
  let rest = s;
  for (const [size, name] of units) {
    if (rest >= size || (parts.length === 0 && size === 1)) {
      parts.push(`${Math.floor(rest / size)} ${name}`);
      rest %= size;
    }
    if (parts.length === 2) break;
  }
  return parts.join(' ');
}

export const count = (n: number | null | undefined) =>
  n === null || n === undefined ? '—' : n.toLocaleString('en-US');

/** "1 dead letter", "1,200 dead letters". */
export const plural = (n: number, word: string) => `${count(n)} ${word}${n === 1 ? '' : 's'}`;

export const shortId = (id: string | null | undefined) => (id ? `${id.slice(0, 8)}…${id.slice(-4)}` : '—');

/** "2026-11-29 21:02:15 UTC": operators compare times across machines, so always UTC. */
export function utc(iso: string | null | undefined): string {
  if (!iso) return '—';
  return `${iso.slice(0, 10)} ${iso.slice(11, 19)} UTC`;
}

/** "512 B", "3.4 KB", "1.2 MB", "2.0 GB". */
export function bytes(n: number): string {
  if (n < 1024) return `${n} B`;
  const [size, unit] = n < 1024 ** 2 ? [1024, 'KB'] : n < 1024 ** 3 ? [1024 ** 2, 'MB'] : [1024 ** 3, 'GB'];
  return `${(n / size).toFixed(1)} ${unit}`;
}

/** "2026-11-29 21:02:15.123 UTC": for events a few milliseconds apart, such as a message's traces. */
export function utcMillis(iso: string | null | undefined): string {
  if (!iso) return '—';
  return `${iso.slice(0, 10)} ${iso.slice(11, 23)} UTC`;
}

/** "7 min ago", "in 40 s": how far `iso` is from `nowMs` (the server's clock), in `duration`'s words. */
export function relative(iso: string | null | undefined, nowMs: number): string {
  if (!iso) return '—';
  const s = (Date.parse(iso) - nowMs) / 1000;
  return s < 0 ? `${duration(-s)} ago` : `in ${duration(s)}`;
}
