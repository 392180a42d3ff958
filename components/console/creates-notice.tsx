'use client';
import { IMPLICIT_QUEUE_DEFAULTS } from '@/lib/broker/option-defaults';
import { PopButton } from './pop-form';
import type { TryPop } from './use-try-pop';

/** Before a pop that would create the queue or the group's cursors: what it creates, and "create and pop". */
export function CreatesNotice({ t }: { t: TryPop }) {
  const creates = t.creates;
  if (!creates) return null;
  return (
    <section
      role="alert"
      aria-label="What the pop creates"
      className="space-y-2 rounded border border-amber-300 bg-amber-50 px-3 py-2 text-sm text-amber-900 dark:border-amber-800 dark:bg-amber-950 dark:text-amber-200"
    >
      {!creates.queueExists && (
        <p data-testid="creates-queue">
          Queue <strong className="font-mono">{creates.queue}</strong> does not exist. A pop creates it (implicitly:
          lease {IMPLICIT_QUEUE_DEFAULTS.leaseTime} s, default options), and it stays until deleted.
        </p>
      )}
      {t.form.consumerGroup && !creates.groupExists && (
        <p data-testid="creates-group">
          Group <strong className="font-mono">{creates.consumerGroup}</strong> has never read {creates.queue}: a pop
          creates its cursors on every partition of the queue, and they persist after this pop (delete the group on the
          queue page to drop them).
        </p>
      )}
      <div className="flex gap-2">
        <PopButton t={t} onClick={t.createAndPop} className="py-1">
          {creates.queueExists ? 'Create group and pop' : 'Create queue and pop'}
        </PopButton>
        <button
          type="button"
          onClick={t.cancelCreate}
          className="rounded border border-amber-400 px-3 py-1 dark:border-amber-700"
        >
          Cancel
        </button>
      </div>
    </section>
  );
}
