'use client';
import Link from 'next/link';
import { leasesHref } from '@/lib/dashboard/links';
import { Countdown } from '../countdown';
import type { Reply } from './use-try-pop';

/** The broker's answer to the pop or the dry run: status, time, why a dry run came back empty, headers, body. */
export function ReplySection({ reply }: { reply: Reply | null }) {
  if (!reply) return null;
  return (
    <section className="space-y-2" aria-label="Reply">
      <h2 className="text-sm font-semibold">
        {reply.kind === 'dry run' ? 'Dry run (nothing was claimed): ' : 'Reply: '}
        <span
          data-testid="reply-status"
          className={
            reply.status === 200
              ? 'text-emerald-700 dark:text-emerald-400'
              : reply.status === 204
                ? 'text-muted'
                : 'text-red-600'
          }
        >
          HTTP {reply.status}
        </span>
        <span className="font-normal text-muted">
          {' '}
          in {Math.round(reply.ms)} ms{reply.body?.messages ? `, ${reply.body.messages.length} messages` : ''}
        </span>
      </h2>
      {reply.kind === 'dry run' &&
        reply.status === 204 &&
        reply.why &&
        (reply.why.leases?.length ? (
          <HeldBy why={reply.why} />
        ) : (
          <p className="text-sm font-medium text-amber-800 dark:text-amber-300" data-testid="dry-run-why">
            {reply.why.text}
          </p>
        ))}
      {reply.kind === 'dry run' && reply.status === 200 && (
        <p className="text-sm text-zinc-600 dark:text-zinc-300" data-testid="dry-run-lease">
          No lease: a dry run holds none, so its <code>leaseId</code> is null.
        </p>
      )}
      {reply.headers.length > 0 && (
        <pre className="overflow-x-auto rounded bg-zinc-100 p-2 text-xs dark:bg-zinc-900" data-testid="reply-headers">
          {reply.headers.map(([k, v]) => `${k}: ${v}`).join('\n')}
        </pre>
      )}
      <pre className="max-h-96 overflow-auto rounded bg-zinc-100 p-2 text-xs dark:bg-zinc-900" data-testid="reply-body">
        {reply.text ? JSON.stringify(reply.body, null, 2) : '(no body)'}
      </pre>
    </section>
  );
}

/**
 * A dry run held back by other leases of the group: each one's partition, holder, its expiry as a
 * countdown against the server's clock (the UTC time as its title, as elsewhere) and the lease
 * linked to the Leases page.
 */
function HeldBy({ why }: { why: NonNullable<Reply['why']> }) {
  const leases = why.leases ?? [];
  const more = (why.held ?? leases.length) - leases.length;
  return (
    <div className="text-sm font-medium text-amber-800 dark:text-amber-300" data-testid="dry-run-why">
      <p>Held by other leases of group {why.group}:</p>
      <ul className="list-disc pl-5">
        {leases.map((l) => (
          <li key={l.leaseId}>
            {l.partition} is leased by {l.holder ?? 'an unknown holder'}, <Countdown expiresAt={l.expiresAt} /> (lease{' '}
            <Link
              href={leasesHref({ lease: l.leaseId })}
              className="font-mono text-xs text-sky-700 hover:underline dark:text-sky-400"
            >
              {l.leaseId}
            </Link>
            )
          </li>
        ))}
      </ul>
      {more > 0 && <p>and {more} more.</p>}
    </div>
  );
}
