'use client';
import { useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { ReasonDialog, type TimeField } from './reason-dialog';
import { useDenied } from './session';

/**
 * A button for a destructive operator action (every one needs the admin role): it opens a
 * confirmation that requires a reason, runs the action, and refreshes every read model on the page.
 */
export function ReasonAction({
  label, title, description, confirmLabel, run, timeField, className, disabledReason, typeToConfirm, onOpenChange,
}: {
  label: string;
  title: string;
  description: React.ReactNode;
  confirmLabel: string;
  run: (reason: string, until: string | null) => Promise<unknown>;
  timeField?: TimeField;
  className?: string;
  /** When set, the action is not allowed and the button says why. */
  disabledReason?: string;
  /** A name the operator must type before confirming (irreversible actions). */
  typeToConfirm?: string;
  /** Told when the dialog opens and closes (a preview loads only while it is open). */
  onOpenChange?: (open: boolean) => void;
}) {
  const client = useQueryClient();
  const denied = useDenied('admin');
  const why = disabledReason ?? denied;
  const [open, setOpenState] = useState(false);
  const setOpen = (next: boolean) => {
    setOpenState(next);
    onOpenChange?.(next);
  };
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  return (
    <>
      <button
        type="button"
        disabled={Boolean(why)}
        title={why}
        onClick={() => {
          setError(null);
          setOpen(true);
        }}
        className={className ?? 'rounded border border-red-300 px-2 py-0.5 text-xs text-red-700 hover:bg-red-50 disabled:opacity-50 dark:border-red-800 dark:text-red-300 dark:hover:bg-red-950'}
      >
        {label}
      </button>
      <ReasonDialog
        open={open}
        title={title}
        description={open ? description : null /* mounted only when open: a description may read data */}
        confirmLabel={confirmLabel}
        timeField={timeField}
        typeToConfirm={typeToConfirm}
        busy={busy}
        error={error}
        onCancel={() => setOpen(false)}
        onConfirm={async (reason, until) => {
          setBusy(true);
          try {
            await run(reason, until);
            setOpen(false);
            await client.invalidateQueries();
          } catch (err) {
            setError((err as Error).message);
          } finally {
            setBusy(false);
          }
        }}
      />
    </>
  );
}
