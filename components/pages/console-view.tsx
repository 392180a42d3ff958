'use client';
import { CreatesNotice } from '../console/creates-notice';
import { CurlSection } from '../console/curl-section';
import { LeaseActions } from '../console/lease-actions';
import { PopForm } from '../console/pop-form';
import { ReplySection } from '../console/reply-section';
import { type Form, type Params, useTryPop } from '../console/use-try-pop';

/** The Try-pop page: a pop (or its dry run) with every parameter, its reply, and the lease it took. */
export function ConsoleView({ initial, params }: { initial: Partial<Form>; params: Params }) {
  const t = useTryPop(initial, params);
  return (
    <div className="space-y-4">
      <div>
        <h1 className="text-2xl font-semibold">Try pop</h1>
        <p
          className="mt-1 rounded border border-amber-300 bg-amber-50 px-3 py-2 text-sm text-amber-900 dark:border-amber-800 dark:bg-amber-950 dark:text-amber-200"
          role="note"
        >
          A real pop leases real messages: the group&apos;s consumers will not get them until you ack them or the lease
          expires, and with <code>autoAck</code> they are gone for that group. Use <strong>Dry run</strong> to see what
          a pop would claim without claiming it.
        </p>
      </div>
      <PopForm t={t} />
      <CreatesNotice t={t} />
      <CurlSection t={t} />
      <ReplySection reply={t.reply} />
      <LeaseActions t={t} />
    </div>
  );
}
