'use client';
import { useEffect, useRef, useState } from 'react';

export interface TimeField {
  label: string;
  required?: boolean;
}

/**
 * Confirms a destructive action and asks why: the reason is required and goes to the audit log.
 * `timeField` adds a time (an auto-resume time, a seek target) that comes back with the reason.
 */
export function ReasonDialog({
  title, description, confirmLabel, open, onCancel, onConfirm, busy, error, timeField, typeToConfirm,
}: {
  title: string;
  description: React.ReactNode;
  confirmLabel: string;
  open: boolean;
  onCancel: () => void;
  onConfirm: (reason: string, until: string | null) => void;
  busy?: boolean;
  error?: string | null;
  timeField?: TimeField;
  /** The confirm button stays disabled until this text is typed exactly. */
  typeToConfirm?: string;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  const [reason, setReason] = useState('');
  const [until, setUntil] = useState('');
  const [typed, setTyped] = useState('');
  const typedOk = typeToConfirm === undefined || typed === typeToConfirm;
  useEffect(() => {
    const d = ref.current;
    if (!d) return;
    if (open && !d.open) {
      setReason('');
      setUntil('');
      setTyped('');
      d.showModal();
    }
    if (!open && d.open) d.close();
  }, [open]);
  return (
    <dialog
      ref={ref}
      onCancel={(e) => {
        e.preventDefault();
        onCancel();
      }}
      className="w-[28rem] rounded-lg border border-zinc-300 bg-white p-0 text-zinc-900 shadow-xl backdrop:bg-black/40 dark:border-zinc-700 dark:bg-zinc-900 dark:text-zinc-100"
    >
      <form
        method="dialog"
        className="space-y-3 p-4"
        onSubmit={(e) => {
          e.preventDefault();
          if (reason.trim() && typedOk && (!timeField?.required || until)) onConfirm(reason.trim(), timeField && until ? new Date(until).toISOString() : null);
        }}
      >
        <h2 className="text-lg font-semibold">{title}</h2>
        <div className="text-sm text-zinc-600 dark:text-zinc-300">{description}</div>
        <label className="block text-sm">
          <span className="font-medium">Reason</span> <span className="text-zinc-500">(required, written to the audit log)</span>
          <textarea
            autoFocus
            required
            value={reason}
            onChange={(e) => setReason(e.target.value)}
            className="mt-1 w-full rounded border border-zinc-300 bg-white p-2 dark:border-zinc-700 dark:bg-zinc-950"
            rows={2}
            name="reason"
          />
        </label>
        {timeField && (
          <label className="block text-sm">
            <span className="font-medium">{timeField.label}</span> <span className="text-zinc-500">({timeField.required ? 'required' : 'optional'}, your local time)</span>
            <input
              type="datetime-local"
              step="1"
              required={timeField.required}
              value={until}
              onChange={(e) => setUntil(e.target.value)}
              className="mt-1 w-full rounded border border-zinc-300 bg-white p-1 dark:border-zinc-700 dark:bg-zinc-950"
              name="time"
            />
          </label>
        )}
        {typeToConfirm !== undefined && (
          <label className="block text-sm">
            <span className="font-medium">Type <code className="rounded bg-zinc-100 px-1 dark:bg-zinc-800">{typeToConfirm}</code> to confirm</span>
            <input
              value={typed}
              onChange={(e) => setTyped(e.target.value)}
              autoComplete="off"
              spellCheck={false}
              className="mt-1 w-full rounded border border-zinc-300 bg-white p-1 font-mono dark:border-zinc-700 dark:bg-zinc-950"
              name="confirm-name"
            />
          </label>
        )}
        {error && <p className="text-sm text-red-600" role="alert">{error}</p>}
        <div className="flex justify-end gap-2">
          <button type="button" onClick={onCancel} className="rounded border border-zinc-300 px-3 py-1 text-sm dark:border-zinc-700">
            Cancel
          </button>
          <button type="submit" disabled={!reason.trim() || !typedOk || (timeField?.required && !until) || busy} className="rounded bg-red-600 px-3 py-1 text-sm font-medium text-white disabled:opacity-50">
            {busy ? 'Working…' : confirmLabel}
          </button>
        </div>
      </form>
    </dialog>
  );
}
