'use client';
import { useQuery } from '@tanstack/react-query';
import type { Level } from '@/lib/http/access';
import { allows } from '@/lib/http/access';
import { readSession, type Session } from './client/session';

/** Who the dashboard is signed in as; refreshed every minute so an expiry shows without a click. */
export function useSession() {
  return useQuery<Session>({
    queryKey: ['session'],
    queryFn: ({ signal }) => readSession(signal),
    refetchInterval: 60_000,
  });
}

/** Why the signed-in user may not do what needs `level`; undefined when they may. */
export function useDenied(level: Level): string | undefined {
  const { data } = useSession();
  if (!data) return 'checking your access…';
  if (!data.authEnabled) return undefined;
  if (!data.signedIn) return 'signed out: sign in again';
  return allows(data.role ?? undefined, level)
    ? undefined
    : `needs the ${level} role; you are ${data.role ?? 'without a role'}`;
}
