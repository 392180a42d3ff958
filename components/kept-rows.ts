'use client';
import { useCallback, useMemo, useState } from 'react';

interface Kept<T> {
  key: string;
  index: number;
  row: T;
  mark: string;
}

/**
 * Rows an operator just acted on stay where they were, marked, until the filters or the page
 * change: a paused partition re-sorts to the top and a released lease leaves the list, and either
 * would pull the row from under the operator's eyes. A kept row shows its fresh data while the
 * server still lists it, and its last known data (with the mark) once it no longer does.
 */
export function useKeptRows<T>(rows: T[], keyOf: (row: T) => string, resetWhen: string) {
  const [kept, setKept] = useState<Kept<T>[]>([]);
  const [keptFor, setKeptFor] = useState(resetWhen);
  if (keptFor !== resetWhen) {
    setKeptFor(resetWhen);
    setKept([]);
  }
  const shown = useMemo(() => {
    const keys = new Set(kept.map((k) => k.key));
    const out = rows.filter((r) => !keys.has(keyOf(r)));
    for (const k of [...kept].sort((a, b) => a.index - b.index)) {
      out.splice(Math.min(k.index, out.length), 0, rows.find((r) => keyOf(r) === k.key) ?? k.row);
    }
    return out;
  }, [rows, kept, keyOf]);
  const keep = useCallback(
    (row: T, mark: string) => {
      const key = keyOf(row);
      const index = shown.findIndex((r) => keyOf(r) === key);
      setKept((list) => [
        ...list.filter((k) => k.key !== key),
        { key, index: index < 0 ? list.length : index, row, mark },
      ]);
    },
    [shown, keyOf],
  );
  const markOf = useCallback((row: T) => kept.find((k) => k.key === keyOf(row))?.mark, [kept, keyOf]);
  return { shown, keep, markOf };
}
