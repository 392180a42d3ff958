/**
 * committed → leased span → head, in one bar: green is done, blue is leased (red when the lease
 * expired), grey is waiting.
 */
export function OffsetBar({
  committed,
  leaseEnd,
  head,
  leaseState,
}: {
  committed: number;
  leaseEnd: number | null;
  head: number;
  leaseState: 'live' | 'expired' | null;
}) {
  const total = Math.max(head, 1);
  const done = (committed / total) * 100;
  const leased = leaseEnd !== null && leaseState ? ((leaseEnd - committed) / total) * 100 : 0;
  const label = `committed ${committed}${leaseEnd !== null && leaseState ? `, leased to ${leaseEnd}` : ''}, head ${head}`;
  return (
    <div className="w-40" title={label}>
      <div className="flex h-2 overflow-hidden rounded bg-zinc-200 dark:bg-zinc-800" role="img" aria-label={label}>
        <div className="bg-emerald-500" style={{ width: `${done}%` }} />
        <div className={leaseState === 'expired' ? 'bg-red-500' : 'bg-sky-500'} style={{ width: `${leased}%` }} />
      </div>
      <div className="mt-0.5 flex justify-between font-mono text-[11px] text-muted">
        <span>{committed}</span>
        {leaseEnd !== null && leaseState && (
          <span className={leaseState === 'expired' ? 'text-red-500' : 'text-sky-600 dark:text-sky-400'}>
            →{leaseEnd}
          </span>
        )}
        <span>{head}</span>
      </div>
    </div>
  );
}
