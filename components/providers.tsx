'use client';
import { QueryClient, QueryClientProvider, keepPreviousData, useQuery, type QueryKey } from '@tanstack/react-query';
import { createContext, useCallback, useContext, useEffect, useMemo, useState } from 'react';
import { api } from './api';
import { noteServerTime } from './clock';

interface Refresh {
  intervalMs: number;
  setIntervalMs: (ms: number) => void;
  paused: boolean;
  setPaused: (paused: boolean) => void;
  /** The user is selecting text: refreshing would pull it from under them. */
  selecting: boolean;
}

const RefreshContext = createContext<Refresh | null>(null);

export const REFRESH_CHOICES = [1000, 2000, 5000, 10000, 30000];

export function Providers({ children }: { children: React.ReactNode }) {
  const [client] = useState(
    () => new QueryClient({ defaultOptions: { queries: { refetchOnWindowFocus: false, retry: 1 } } }),
  );
  const [intervalMs, setIntervalMs] = useStoredState('queen.refresh.intervalMs', 2000, (v) =>
    REFRESH_CHOICES.includes(v as number),
  );
  const [paused, setPaused] = useStoredState('queen.refresh.paused', false, (v) => typeof v === 'boolean');
  const [selecting, setSelecting] = useState(false);
  useEffect(() => {
    const onSelection = () => setSelecting(Boolean(window.getSelection()?.toString()));
    onSelection(); // a selection made before this mounted counts too
    document.addEventListener('selectionchange', onSelection);
    return () => document.removeEventListener('selectionchange', onSelection);
  }, []);
  const refresh = useMemo(
    () => ({ intervalMs, setIntervalMs, paused, setPaused, selecting }),
    [intervalMs, paused, selecting],
  );
  return (
    <QueryClientProvider client={client}>
      <RefreshContext.Provider value={refresh}>{children}</RefreshContext.Provider>
    </QueryClientProvider>
  );
}

/**
 * State kept in localStorage, so the refresh interval and pause survive a reload. Read after
 * hydration (the server cannot know it); a stored value that fails `valid` is ignored.
 */
function useStoredState<T>(key: string, initial: T, valid: (v: unknown) => boolean): [T, (v: T) => void] {
  const [value, setValue] = useState(initial);
  useEffect(() => {
    try {
      const stored = JSON.parse(localStorage.getItem(key) ?? 'null');
      if (valid(stored)) setValue(stored as T);
    } catch {
      // unreadable: keep the default
    }
  }, [key]);
  const store = useCallback(
    (v: T) => {
      setValue(v);
      localStorage.setItem(key, JSON.stringify(v));
    },
    [key],
  );
  return [value, store];
}

export function useRefresh(): Refresh {
  const r = useContext(RefreshContext);
  if (!r) throw new Error('useRefresh outside <Providers>');
  return r;
}

/**
 * A read model that refreshes on the picker's interval (a refresh never overlaps the one in
 * flight), pauses while the user selects text, and keeps the server's clock for countdowns.
 */
export function useLiveQuery<T>(key: QueryKey, path: string, initialData?: T) {
  const { intervalMs, paused, selecting } = useRefresh();
  useEffect(() => {
    const now = (initialData as { now?: unknown } | undefined)?.now;
    if (typeof now === 'string') noteServerTime(now);
  }, [initialData]);
  return useQuery<T>({
    queryKey: key,
    queryFn: async ({ signal }) => {
      const data = await api<T>('GET', path, undefined, signal);
      const now = (data as { now?: unknown } | null)?.now;
      if (typeof now === 'string') noteServerTime(now);
      return data;
    },
    initialData,
    initialDataUpdatedAt: initialData ? Date.now() : undefined,
    placeholderData: keepPreviousData,
    refetchInterval: paused || selecting ? false : intervalMs,
  });
}
