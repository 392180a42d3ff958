'use client';
import { useSyncExternalStore } from 'react';

// The server's clock, as seen from here: countdowns count against it, not the browser's.
let offsetMs = 0;

/** Records the server time a response carried; the latest sample wins. */
export function noteServerTime(serverNowIso: string) {
  const server = Date.parse(serverNowIso);
  if (!Number.isNaN(server)) offsetMs = server - Date.now();
}

export const serverNow = () => Date.now() + offsetMs;

// One shared one-second ticker for every countdown on the page.
const listeners = new Set<() => void>();
let ticker: ReturnType<typeof setInterval> | undefined;
let tick = Date.now();

function subscribe(listener: () => void) {
  listeners.add(listener);
  ticker ??= setInterval(() => {
    tick = Date.now();
    listeners.forEach((l) => l());
  }, 1000);
  return () => {
    listeners.delete(listener);
    if (listeners.size === 0 && ticker) {
      clearInterval(ticker);
      ticker = undefined;
    }
  };
}

/**
 * Server time, re-rendering every second; null while rendering on the server and hydrating, so
 * that the server's HTML and the browser's first render agree.
 */
export function useServerNow(): number | null {
  const hydrated = useSyncExternalStore(
    subscribe,
    () => tick,
    () => null,
  );
  return hydrated === null ? null : serverNow();
}
