'use client';
import { useState } from 'react';
import { ReasonDialog, type ReasonDialogProps } from './reason-dialog';
import { useDenied } from './session';

/**
 * A button for a destructive operator action (every one needs the admin role) and its confirmation
 * dialog, rendered on the first click. `accessibleName` tells this button from every other one on the page ("Pause p-7/billing"
 * where the visible label says "Pause").
 */
export function ReasonAction({
  label,
  accessibleName,
  className,
  disabledReason,
  onOpenChange,
  description,
  ...dialog
}: Omit<ReasonDialogProps, 'open' | 'onClose'> & {
  label: string;
  accessibleName?: string;
  className?: string;
  /** When set, the action is not allowed and the button says why. */
  disabledReason?: string;
  /** Told when the dialog opens and closes (a preview loads only while it is open). */
  onOpenChange?: (open: boolean) => void;
}) {
  const denied = useDenied('admin');
  const why = disabledReason ?? denied;
  const [open, setOpenState] = useState(false);
  // the dialog is rendered once first asked for, not with every row (a queue page of 50 rows
  // carried 200 closed dialogs, 453 KB of HTML); it stays mounted after, so closing it can give
  // focus back
  const [wanted, setWanted] = useState(false);
  const setOpen = (next: boolean) => {
    if (next) setWanted(true);
    setOpenState(next);
    onOpenChange?.(next);
  };
  return (
    <>
      <button
        type="button"
        disabled={Boolean(why)}
        title={why}
        aria-label={accessibleName}
        onClick={() => setOpen(true)}
        className={className ?? ACTION_BUTTON}
      >
        {label}
      </button>
      {wanted && (
        <ReasonDialog
          {...dialog}
          description={open ? description : null /* mounted only when open: a description may read data */}
          open={open}
          onClose={() => setOpen(false)}
        />
      )}
    </>
  );
}

export const ACTION_BUTTON =
  'rounded border border-red-300 px-2 py-0.5 text-xs text-red-700 hover:bg-red-50 disabled:opacity-50 dark:border-red-800 dark:text-red-300 dark:hover:bg-red-950';
