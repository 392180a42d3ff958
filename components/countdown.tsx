'use client';
import { duration } from '@/lib/dashboard/format';
import { useServerNow } from './clock';

/** Seconds left on a lease, ticking every second against the server's clock. */
export function Countdown({ expiresAt }: { expiresAt: string | null }) {
  const now = useServerNow();
  if (!expiresAt) return <span className="text-muted">—</span>;
  if (now === null) return <span title={expiresAt}>expires {expiresAt.slice(11, 19)} UTC</span>;
  const left = (Date.parse(expiresAt) - now) / 1000;
  if (left <= 0) {
    return (
      <span className="font-medium text-red-800 dark:text-red-300" data-testid="lease-state">
        expired {duration(-left)} ago
      </span>
    );
  }
  return (
    <span className={left < 10 ? 'text-amber-600 dark:text-amber-400' : ''} data-testid="lease-state" title={expiresAt}>
      expires in {duration(left)}
    </span>
  );
}
