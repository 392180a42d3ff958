'use client';
import Link from 'next/link';
import { Fragment } from 'react';
import { leasesHref } from '@/lib/dashboard/links';
import { Countdown } from '../countdown';
import { INPUT } from './pop-form';
import type { TryPop } from './use-try-pop';

/** What to do with the lease a pop took: ack or fail every message, extend it, release it; and what that answered. */
export function LeaseActions({ t }: { t: TryPop }) {
  if (!t.leased) return null;
  const l = t.lease;
  const write = { disabled: Boolean(t.writeDenied), title: t.writeDenied };
  const red =
    'rounded border border-red-300 px-3 py-1 text-red-700 disabled:opacity-50 dark:border-red-800 dark:text-red-300';
  // each action, after the field it takes (if any), in the order shown
  const actions: LeaseAction[] = [
    {
      label: 'Ack all',
      run: () => l.ackAll('completed'),
      ...write,
      className: 'rounded bg-emerald-600 px-3 py-1 text-white disabled:opacity-50',
    },
    {
      field: { value: l.failError, set: l.setFailError, label: 'Failure reason' },
      label: 'Fail all',
      run: () => l.ackAll('failed'),
      ...write,
      className: red,
    },
    {
      field: {
        value: l.extendBy,
        set: l.setExtendBy,
        label: 'Extend by seconds',
        type: 'number',
        className: `${INPUT} w-20`,
      },
      label: 'Extend',
      run: l.extend,
      ...write,
      className: 'rounded border border-zinc-300 px-3 py-1 disabled:opacity-50 dark:border-zinc-700',
    },
    {
      field: {
        value: l.releaseReason,
        set: l.setReleaseReason,
        label: 'Release reason',
        placeholder: 'reason to release',
      },
      label: 'Release',
      run: l.release,
      disabled: !l.releaseReason.trim() || Boolean(t.adminDenied),
      title: t.adminDenied,
      className: red,
    },
  ];
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
        {actions.map(({ field, ...x }) => (
          <Fragment key={x.label}>
            {field && (
              <input
                value={field.value}
                onChange={(e) => field.set(e.target.value)}
                type={field.type}
                placeholder={field.placeholder}
                className={field.className ?? INPUT}
                aria-label={field.label}
              />
            )}
            <button
              type="button"
              disabled={x.disabled}
              title={x.title}
              onClick={() => void x.run()}
              className={x.className}
            >
              {x.label}
            </button>
          </Fragment>
        ))}
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

interface LeaseAction {
  label: string;
  run: () => Promise<unknown>;
  disabled: boolean;
  title: string | undefined;
  className: string;
  /** the text field the action reads, shown before its button */
  field?: {
    value: string;
    set: (v: string) => void;
    label: string;
    type?: string;
    placeholder?: string;
    className?: string;
  };
}
