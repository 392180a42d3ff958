'use client';
import { useQueryClient } from '@tanstack/react-query';
import { useEffect, useId, useRef, useState, useSyncExternalStore } from 'react';

export interface TimeField {
  label: string;
  required?: boolean;
}

export interface ReasonDialogProps {
  title: string;
  /** What the action does to which objects, naming each one: the operator confirms exactly this. */
  description: React.ReactNode;
  confirmLabel: string;
  /**
   * Said (politely, to screen readers too) once the action succeeded, naming the objects again;
   * a function builds it from the action's answer (a release names the partitions it freed).
   */
  success: string | ((result: unknown) => string);
  open: boolean;
  onClose: () => void;
  run: (reason: string, until: string | null) => Promise<unknown>;
  /** Called after a success, before the page's read models refresh. */
  onDone?: () => void;
  /** Called when the operator cancels (Cancel, Escape), before the dialog closes. */
  onCancel?: () => void;
  timeField?: TimeField;
  /** The confirm button stays disabled until this text is typed exactly (irreversible actions). */
  typeToConfirm?: string;
}

/**
 * Confirms a destructive action and asks why: the reason is required and goes to the audit log.
 * `timeField` adds a time (an auto-resume time, a seek target) that comes back with the reason.
 * On success every read model on the page refreshes, the outcome is announced, and focus goes back
 * to the invoking control, or, when the refresh replaced it, to the nearest control in its cell or row.
 */
export function ReasonDialog({
  title,
  description,
  confirmLabel,
  success,
  open,
  onClose,
  run,
  onDone,
  onCancel,
  timeField,
  typeToConfirm,
}: ReasonDialogProps) {
  const client = useQueryClient();
  const ref = useRef<HTMLDialogElement>(null);
  const titleId = useId();
  const invoker = useRef<Invoker>({ control: null, around: [] });
  const [reason, setReason] = useState('');
  const [until, setUntil] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [typed, setTyped] = useState('');
  const typedOk = typeToConfirm === undefined || typed === typeToConfirm;
  useEffect(() => {
    const d = ref.current;
    if (!d) return;
    if (open && !d.open) {
      invoker.current = invokerOf(document.activeElement);
      setReason('');
      setUntil('');
      setError(null);
      setTyped('');
      d.showModal();
    }
    if (!open && d.open) {
      d.close();
      keepFocusNear(invoker.current);
    }
  }, [open]);
  const confirm = async () => {
    setBusy(true);
    let result: unknown;
    try {
      result = await run(reason.trim(), timeField && until ? new Date(until).toISOString() : null);
    } catch (err) {
      setError((err as Error).message);
      return;
    } finally {
      setBusy(false);
    }
    onDone?.();
    onClose();
    announce(typeof success === 'function' ? success(result) : success);
    await client.invalidateQueries();
  };
  return (
    <dialog
      ref={ref}
      aria-labelledby={titleId}
      onCancel={(e) => {
        e.preventDefault();
        onCancel?.();
        onClose();
      }}
      className="m-auto w-[min(28rem,calc(100vw-2rem))] rounded-lg border border-zinc-300 bg-white p-0 text-zinc-900 shadow-xl backdrop:bg-black/40 dark:border-zinc-700 dark:bg-zinc-900 dark:text-zinc-100"
    >
      <form
        method="dialog"
        className="space-y-3 p-4"
        onSubmit={(e) => {
          e.preventDefault();
          if (reason.trim() && typedOk && (!timeField?.required || until)) void confirm();
        }}
      >
        <h2 id={titleId} className="text-lg font-semibold">
          {title}
        </h2>
        <div className="text-sm text-zinc-700 dark:text-zinc-300" data-testid="dialog-description">
          {description}
        </div>
        <label className="block text-sm">
          <span className="font-medium">Reason</span>{' '}
          <span className="text-muted">(required, written to the audit log)</span>
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
            <span className="font-medium">{timeField.label}</span>{' '}
            <span className="text-muted">({timeField.required ? 'required' : 'optional'}, your local time)</span>
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
            <span className="font-medium">
              Type <code className="rounded bg-zinc-100 px-1 dark:bg-zinc-800">{typeToConfirm}</code> to confirm
            </span>
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
        {error && (
          <p className="text-sm text-red-700 dark:text-red-400" role="alert">
            {error}
          </p>
        )}
        <div className="flex justify-end gap-2">
          <button
            type="button"
            onClick={() => {
              onCancel?.();
              onClose();
            }}
            className="rounded border border-zinc-300 px-3 py-1 text-sm dark:border-zinc-700"
          >
            Cancel
          </button>
          <button
            type="submit"
            disabled={!reason.trim() || !typedOk || (timeField?.required && !until) || busy}
            className="rounded bg-red-600 px-3 py-1 text-sm font-medium text-white disabled:opacity-50"
          >
            {busy ? 'Working…' : confirmLabel}
          </button>
        </div>
      </form>
    </dialog>
  );
}

const FOCUSABLE = 'button:not(:disabled), a[href], select:not(:disabled), input:not(:disabled)';

/** The control that opened a dialog and the cell, row and section around it, noted while it is still in the page. */
interface Invoker {
  control: HTMLElement | null;
  around: Element[];
}

function invokerOf(active: Element | null): Invoker {
  const control = active instanceof HTMLElement ? active : null;
  return {
    control,
    around: ['td', 'tr', 'li', 'section'].map((s) => control?.closest(s)).filter((e): e is Element => Boolean(e)),
  };
}

function restoreFocus({ control, around }: Invoker) {
  if (control?.isConnected && control.matches(FOCUSABLE)) return control.focus();
  for (const scope of around) {
    const target = scope.isConnected ? scope.querySelector<HTMLElement>(FOCUSABLE) : null;
    if (target) return target.focus();
  }
  document.getElementById('main')?.focus();
}

/**
 * Focus goes back to the invoking control now, and again if the refresh that follows an action
 * replaces that control (Pause becomes Resume) and leaves focus nowhere.
 */
function keepFocusNear(invoker: Invoker) {
  restoreFocus(invoker);
  const { control } = invoker;
  const scope = invoker.around.find((e) => e.isConnected);
  if (!control?.isConnected || !scope) return;
  const observer = new MutationObserver(() => {
    if (control.isConnected) return;
    observer.disconnect();
    if (document.activeElement === null || document.activeElement === document.body) restoreFocus(invoker);
  });
  observer.observe(scope, { childList: true, subtree: true });
  setTimeout(() => observer.disconnect(), 30_000);
}

/** The last outcome announced, shown until the next one or until dismissed. */
let announcement: { id: number; text: string } | null = null;
const listeners = new Set<() => void>();

function announce(text: string) {
  announcement = { id: (announcement?.id ?? 0) + 1, text };
  for (const l of listeners) l();
}

function subscribe(l: () => void) {
  listeners.add(l);
  return () => listeners.delete(l);
}

/** A polite live region (rendered once per page) where every confirmed action reports its outcome. */
export function Announcements() {
  const current = useSyncExternalStore(
    subscribe,
    () => announcement,
    () => null,
  );
  const [dismissed, setDismissed] = useState(0);
  const shown = current && current.id !== dismissed ? current : null;
  return (
    <div
      role="status"
      aria-live="polite"
      className="pointer-events-none fixed inset-x-0 bottom-4 z-50 flex justify-center px-4"
    >
      {shown && (
        <p
          className="pointer-events-auto flex items-center gap-3 rounded-lg border border-emerald-300 bg-emerald-50 px-4 py-2 text-sm text-emerald-900 shadow-lg dark:border-emerald-800 dark:bg-emerald-950 dark:text-emerald-100"
          data-testid="announcement"
        >
          <span>{shown.text}</span>
          <button
            type="button"
            onClick={() => setDismissed(shown.id)}
            className="rounded px-1 hover:bg-emerald-100 dark:hover:bg-emerald-900"
            aria-label="Dismiss message"
          >
            ×
          </button>
        </p>
      )}
    </div>
  );
}
