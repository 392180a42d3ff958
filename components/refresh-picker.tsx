'use client';
import { REFRESH_CHOICES, useRefresh } from './providers';

export function RefreshPicker() {
  const { intervalMs, setIntervalMs, paused, setPaused, selecting } = useRefresh();
  return (
    <div className="flex flex-wrap items-center gap-2 text-sm" role="group" aria-label="Refresh">
      <label className="flex items-center gap-1">
        <span className="text-muted">Refresh</span>
        <select
          className="rounded border border-zinc-300 bg-white px-1 py-0.5 dark:border-zinc-700 dark:bg-zinc-900"
          value={intervalMs}
          onChange={(e) => setIntervalMs(Number(e.target.value))}
          aria-label="Refresh interval"
        >
          {REFRESH_CHOICES.map((ms) => (
            <option key={ms} value={ms}>
              {ms / 1000} s
            </option>
          ))}
        </select>
      </label>
      <button
        type="button"
        onClick={() => setPaused(!paused)}
        className="rounded border border-zinc-300 px-2 py-0.5 hover:bg-zinc-100 dark:border-zinc-700 dark:hover:bg-zinc-800"
        aria-pressed={paused}
      >
        {paused ? 'Resume' : 'Pause'}
      </button>
      {(paused || selecting) && (
        <span className="text-xs text-amber-600 dark:text-amber-400" role="status">
          {paused ? 'refresh paused' : 'paused while you select'}
        </span>
      )}
    </div>
  );
}
