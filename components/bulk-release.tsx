'use client';
import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import type { BulkReleaseResult } from '@/lib/broker/leases';
import { count, plural } from '@/lib/dashboard/format';
import { ACTION_BUTTON } from './reason-action';
import { ReasonDialog } from './reason-dialog';
import { useDenied } from './session';
import { type Lease, listLeases, releaseLeases } from './client/leases';

/** What a bulk release acts on: the leases selected, or every lease of a filter (a holder), read once when the dialog opens. */
export type BulkTarget = { leases: Lease[] } | { filter: Record<string, string> };

/** The leases listed, one line per partition, grouped by lease id (a multi-partition pop holds one id over several). */
function LeaseLines({ leases }: { leases: Lease[] }) {
  const ids = new Set(leases.map((l) => l.leaseId));
  const holders = [...new Set(leases.map((l) => l.holder ?? 'unknown'))];
  return (
    <div className="space-y-2" data-testid="bulk-release-preview">
      <p>
        <strong data-testid="bulk-release-count">{plural(ids.size, 'lease')}</strong> on{' '}
        {plural(leases.length, 'partition')}, held by{' '}
        {holders.length <= 3
          ? holders.map((h) => (
              <strong key={h} className="mr-1">
                {h}
              </strong>
            ))
          : `${count(holders.length)} holders`}
        , are released; each becomes claimable at once:
      </p>
      <ul className="max-h-56 list-disc space-y-0.5 overflow-y-auto pl-5">
        {leases.map((l) => (
          <li key={`${l.leaseId}/${l.partitionId}/${l.consumerGroup}`} data-testid="bulk-release-item">
            <span className="font-mono">
              {l.queue} / {l.partition}
            </span>
            , group <span className="font-mono">{l.consumerGroup}</span>: offsets {l.span.from}–{l.span.to}
            {l.state === 'expired' ? ', expired' : ''}{' '}
            <span className="font-mono text-xs text-muted">({l.leaseId.slice(0, 8)}…)</span>
          </li>
        ))}
      </ul>
      <p>
        Each is one force release with this reason, and one audit entry: their holders&apos; acks with those lease ids
        are refused, so the batches are processed again. A lease that ends before you confirm is left alone, and so is
        any lease taken after this list was read.
      </p>
    </div>
  );
}

/**
 * A button that releases several leases with one reason and one confirmation, which lists every
 * lease released. `onDone` gets the lease ids released.
 */
export function BulkRelease({
  label,
  accessibleName,
  target,
  onDone,
  className,
}: {
  label: string;
  accessibleName?: string;
  target: BulkTarget;
  onDone?: (released: string[]) => void;
  className?: string;
}) {
  const denied = useDenied('admin');
  const [open, setOpen] = useState(false);
  // each opening reads the leases afresh: what it lists is what the confirm releases
  const [opened, setOpened] = useState(0);
  const filter = 'filter' in target ? target.filter : null;
  const { data, error } = useQuery({
    queryKey: ['bulk-release', filter, opened],
    queryFn: ({ signal }) => listLeases(filter!, signal),
    enabled: open && filter !== null,
    staleTime: Infinity,
    gcTime: 0,
  });
  const leases = 'leases' in target ? target.leases : (data?.leases ?? null);
  const ids = leases ? [...new Set(leases.map((l) => l.leaseId))] : [];
  const empty = 'leases' in target && target.leases.length === 0;
  return (
    <>
      <button
        type="button"
        disabled={Boolean(denied) || empty}
        title={denied}
        aria-label={accessibleName}
        onClick={() => {
          setOpened((n) => n + 1);
          setOpen(true);
        }}
        className={className ?? ACTION_BUTTON}
      >
        {label}
      </button>
      <ReasonDialog
        title="Release these leases?"
        confirmLabel={ids.length ? `Release ${plural(ids.length, 'lease')}` : 'Release'}
        description={
          !open ? null : error ? (
            <p role="alert" className="text-red-600">
              Could not read the leases: {(error as Error).message}
            </p>
          ) : !leases ? (
            <p>Reading the leases…</p>
          ) : leases.length === 0 ? (
            <p data-testid="bulk-release-preview">There is nothing to release: no lease matches any more.</p>
          ) : (
            <LeaseLines leases={leases} />
          )
        }
        success={(result) => {
          const r = result as { released: number; results: BulkReleaseResult[] };
          const gone = r.results.length - r.released;
          return `Released ${plural(r.released, 'lease')}${gone ? `; ${plural(gone, 'lease')} had ended already` : ''}`;
        }}
        open={open}
        onClose={() => setOpen(false)}
        run={async (reason) => {
          if (ids.length === 0) throw new Error('There is nothing to release');
          const r = await releaseLeases(ids, reason);
          onDone?.(r.results.filter((x) => x.released).map((x) => x.leaseId));
          return r;
        }}
      />
    </>
  );
}
