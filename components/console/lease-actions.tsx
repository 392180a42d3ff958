'use client';
import Link from 'next/link';
import { leasesHref } from '@/lib/dashboard/links';
import { Countdown } from '../countdown';
import { INPUT } from './pop-form';
import type { TryPop } from './use-try-pop';

/** What to do with the lease a pop took: ack or fail every message, extend it, release it; and what that answered. */
export function LeaseActions({ t }: { t: TryPop }) {
  if (!t.leased) return null;
  const l = t.lease;
  return (
    <section
      className="space-y-2 rounded border border-zinc-200 p-3 text-sm dark:border-zinc-800"
      aria-label="Lease actions"
    >
      <h2 className="font-semibold">
        Lease{' '}
        <Link
          href={leasesHref({ lease: t.leased.leaseId })}
          className="font-mono text-xs text-sky-700 hover:underline dark:text-sky-400"
          aria-label={`Lease ${t.leased.leaseId} on the Leases page`}
        >
          {t.leased.leaseId}
        </Link>
      </h2>
      <div className="flex flex-wrap items-center gap-2">
        <button
          type="button"
          disabled={Boolean(t.writeDenied)}
          title={t.writeDenied}
          onClick={() => void l.ackAll('completed')}
          className="rounded bg-emerald-600 px-3 py-1 text-white disabled:opacity-50"
        >
          Ack all
        </button>
        <input
          value={l.failError}
          onChange={(e) => l.setFailError(e.target.value)}
          className={INPUT}
          aria-label="Failure reason"
        />
        <button
          type="button"
          disabled={Boolean(t.writeDenied)}
          title={t.writeDenied}
          onClick={() => void l.ackAll('failed')}
          className="rounded border border-red-300 px-3 py-1 text-red-700 disabled:opacity-50 dark:border-red-800 dark:text-red-300"
        >
          Fail all
        </button>
        <input
          value={l.extendBy}
          onChange={(e) => l.setExtendBy(e.target.value)}
          type="number"
          className={`${INPUT} w-20`}
          aria-label="Extend by seconds"
        />
        <button
          type="button"
          disabled={Boolean(t.writeDenied)}
          title={t.writeDenied}
          onClick={() => void l.extend()}
          className="rounded border border-zinc-300 px-3 py-1 disabled:opacity-50 dark:border-zinc-700"
        >
          Extend
        </button>
        <input
          value={l.releaseReason}
          onChange={(e) => l.setReleaseReason(e.target.value)}
          placeholder="reason to release"
          className={INPUT}
          aria-label="Release reason"
        />
        <button
          type="button"
          disabled={!l.releaseReason.trim() || Boolean(t.adminDenied)}
          title={t.adminDenied}
          onClick={() => void l.release()}
          className="rounded border border-red-300 px-3 py-1 text-red-700 disabled:opacity-50 dark:border-red-800 dark:text-red-300"
        >
          Release
        </button>
      </div>
      {t.action && (
        <div>
          <h3 className="text-xs font-semibold">{t.action.label}:</h3>
          {Array.isArray(t.action.result) && t.action.result[0]?.expiresAt && (
            <p className="text-xs" data-testid="extended-until">
              The lease now <Countdown expiresAt={t.action.result[0].expiresAt} />.
            </p>
          )}
          <pre
            className="max-h-64 overflow-auto rounded bg-zinc-100 p-2 text-xs dark:bg-zinc-900"
            data-testid="action-result"
          >
            {JSON.stringify(t.action.result, null, 2)}
          </pre>
        </div>
      )}
    </section>
  );
}
