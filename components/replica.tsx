'use client';
import type { ReadSource } from '@/lib/dashboard/replica';
import { bytes, duration } from '@/lib/dashboard/format';
import { REPLICA_PATH } from './client/system';
import { useLiveQuery } from './providers';

/** What the pages show may be behind the broker: said on every page while reads go to a replica. */
export function ReplicaBanner() {
  const { data } = useLiveQuery<ReadSource>(['replica'], REPLICA_PATH);
  if (!data || data.reads === 'primary') return null;
  const behind = 'error' in data ? undefined : data;
  const warn = !behind?.standby || behind.replayPaused || behind.lagBytes > 0;
  return (
    <div
      role="status"
      data-testid="replica-banner"
      className={`px-4 py-1 text-sm ${warn ? 'bg-amber-100 text-amber-900 dark:bg-amber-950 dark:text-amber-200' : 'bg-sky-50 text-sky-900 dark:bg-sky-950 dark:text-sky-200'}`}
    >
      Pages read from a replica: {replicaState(data)}. Actions go to the primary.
    </div>
  );
}

export function replicaState(s: ReadSource): string {
  if (s.reads === 'primary') return 'reads from the primary';
  if ('error' in s) return `cannot read it (${s.error})`;
  if (!s.standby) return 'DATABASE_READ_URL is not a standby';
  const paused = s.replayPaused ? ', replay paused' : '';
  if (s.lagBytes === 0) return `caught up${paused}`;
  const age = s.lagSeconds === null ? 'an unknown time' : duration(s.lagSeconds);
  return `up to ${age} behind (${bytes(s.lagBytes)} of WAL not replayed${paused})`;
}
