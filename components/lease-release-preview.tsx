'use client';
import type { LeaseList, ReleasedPartition } from '@/lib/broker/leases';
import { count } from '@/lib/dashboard/format';
import { useLiveQuery } from './providers';
import { leasesPath, releaseLease } from './client/leases';

/** What a force release would free, read when the dialog opens: every partition and span the lease id holds. */
function LeaseReleasePreview({ leaseId }: { leaseId: string }) {
  const { data, error } = useLiveQuery<LeaseList>(['lease-release', leaseId], leasesPath({ lease: leaseId }));
  if (error)
    return (
      <p role="alert" className="text-red-600">
        Could not read the lease: {(error as Error).message}
      </p>
    );
  if (!data)
    return (
      <p>
        Reading what lease <span className="font-mono">{leaseId}</span> holds…
      </p>
    );
  if (data.leases.length === 0) {
    return (
      <p data-testid="release-preview">
        Lease <span className="font-mono">{leaseId}</span> no longer exists (acked, released, or reclaimed after it
        expired): there is nothing to release.
      </p>
    );
  }
  const holder = data.leases[0].holder ?? 'unknown';
  const n = data.leases.length;
  return (
    <div className="space-y-2" data-testid="release-preview">
      <p>
        Lease <span className="font-mono wrap-anywhere">{leaseId}</span> is released whole:{' '}
        {n === 1 ? 'the partition' : `all ${n} partitions`} it holds become{n === 1 ? 's' : ''} claimable at once:
      </p>
      <ul className="max-h-48 list-disc space-y-0.5 overflow-y-auto pl-5">
        {data.leases.map((l) => (
          <li key={`${l.partitionId}/${l.consumerGroup}`} data-testid="release-partition">
            <span className="font-mono">
              {l.queue} / {l.partition}
            </span>
            , group <span className="font-mono">{l.consumerGroup}</span>: offsets {l.span.from}–{l.span.to} (
            {count(l.span.size)}, {count(l.acked)} acked){l.state === 'expired' ? ', expired' : ''}
          </li>
        ))}
      </ul>
      <p>
        The holder <strong>{holder}</strong> may still be working on them: its acks that carry this lease id are refused
        (&ldquo;Invalid or expired lease&rdquo;) for every offset not yet done, so the batch is processed again. An ack
        without a lease id cannot be told apart from the next holder&apos;s: it is accepted while its offset lies inside
        the group&apos;s live lease on that partition, and refused while none is. An ack of an offset already done
        succeeds and changes nothing, whoever sends it.
      </p>
    </div>
  );
}

/** The force release of a lease id, for `ReasonDialog` / `ReasonAction`: what it frees, then what it freed. */
export const forceReleaseDialog = (leaseId: string) => ({
  title: 'Force release this lease?',
  description: <LeaseReleasePreview leaseId={leaseId} />,
  confirmLabel: 'Release',
  success: (result: unknown) => {
    const { partitions } = result as { partitions: ReleasedPartition[] };
    return `Released lease ${leaseId} on ${partitions.map((p) => `${p.partition}/${p.consumerGroup}`).join(', ')}`;
  },
  run: (reason: string) => releaseLease(leaseId, reason),
});
