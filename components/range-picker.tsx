'use client';
import { TREND_RANGES } from '@/lib/dashboard/trend-ranges';

export const rangeLabel = (minutes: number) => (minutes < 60 ? `${minutes} min` : `${minutes / 60} h`);

/** The window a chart shows, 15 min to 24 h; `onChange` gets minutes. */
export function RangePicker({
  minutes,
  onChange,
  label = 'Chart range',
}: {
  minutes: number;
  onChange: (minutes: number) => void;
  label?: string;
}) {
  return (
    <div
      role="group"
      aria-label={label}
      className="inline-flex overflow-hidden rounded border border-zinc-300 text-xs dark:border-zinc-700"
    >
      {TREND_RANGES.map((m) => (
        <button
          key={m}
          type="button"
          aria-pressed={m === minutes}
          onClick={() => onChange(m)}
          className={`px-2 py-0.5 ${m === minutes ? 'bg-zinc-800 text-white dark:bg-zinc-200 dark:text-zinc-900' : 'hover:bg-zinc-100 dark:hover:bg-zinc-800'}`}
        >
          {rangeLabel(m)}
        </button>
      ))}
    </div>
  );
}
