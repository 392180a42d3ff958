'use client';
import { QueryClient, QueryClientProvider, keepPreviousData, useQuery, type QueryKey } from '@tanstack/react-query';
import { createContext, useContext, useEffect, useMemo, useState } from 'react';
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
  const [client] = useState(() => new QueryClient({ defaultOptions: { queries: { refetchOnWindowFocus: false, retry: 1 } } }));
  const [intervalMs, setIntervalMs] = useState(2000);
  const [paused, setPaused] = useState(false);
  const [selecting, setSelecting] = useState(false);
  useEffect(() => {
    const onSelection = () => setSelecting(Boolean(window.getSelection()?.toString()));
    onSelection(); // a selection made before this mounted counts too
    document.addEventListener('selectionchange', onSelection);
    return () => document.removeEventListener('selectionchange', onSelection);
  }, []);
  const refresh = useMemo(() => ({ intervalMs, setIntervalMs, paused, setPaused, selecting }), [intervalMs, paused, selecting]);
  return (
    <QueryClientProvider client={client}>
      <RefreshContext.Provider value={refresh}>{children}</RefreshContext.Provider>
    </QueryClientProvider>
  );
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
