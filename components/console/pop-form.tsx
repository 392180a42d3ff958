'use client';
import type { ReactNode } from 'react';
import type { ConsoleField, PopParamName } from '@/lib/broker/pop-params';
import { routeReads, type TryPop } from './use-try-pop';

/** A field of the console's forms. */
export const INPUT = 'rounded border border-zinc-300 bg-white px-1 py-1 dark:border-zinc-700 dark:bg-zinc-900';

/**
 * The pop's parameters, route by route: what is popped (the route, its queue and partition or its
 * namespace and task, the group), then the options lib/broker/pop-params.ts offers; and its two
 * buttons: pop (leases real messages) and dry run.
 */
export function PopForm({ t }: { t: TryPop }) {
  const input = INPUT;
  return (
    <form
      className="grid grid-cols-2 gap-3 text-sm md:grid-cols-4"
      onSubmit={(e) => {
        e.preventDefault();
        void t.attempt('pop');
      }}
    >
      <label className="flex flex-col">
        <span className="text-xs text-muted">Route</span>
        <select {...t.field('route')} className={input} aria-label="Route">
          <option value="queue">/pop/queue/:queue</option>
          <option value="partition">/pop/queue/:queue/partition/:partition</option>
          <option value="discovery">/pop (namespace / task)</option>
        </select>
      </label>
      {t.form.route !== 'discovery' && (
        <label className="flex flex-col">
          <span className="text-xs text-muted">Queue</span>
          <input
            {...t.field('queue')}
            className={input}
            aria-label="Queue"
            required
            list="queue-suggestions"
            autoComplete="off"
          />
          <datalist id="queue-suggestions">
            {t.suggestions.map((m) => (
              <option key={m.href} value={m.label.replace(/^queue /, '')} />
            ))}
          </datalist>
        </label>
      )}
      {t.form.route === 'partition' && (
        <label className="flex flex-col">
          <span className="text-xs text-muted">Partition</span>
          <input {...t.field('partition')} className={input} aria-label="Partition" required />
        </label>
      )}
      {t.form.route === 'discovery' && (
        <>
          <label className="flex flex-col">
            <span className="text-xs text-muted">Namespace</span>
            <input {...t.field('namespace')} className={input} aria-label="Namespace" />
          </label>
          <label className="flex flex-col">
            <span className="text-xs text-muted">Task</span>
            <input {...t.field('task')} className={input} aria-label="Task" />
          </label>
        </>
      )}
      <label className="flex flex-col">
        <span className="text-xs text-muted">consumerGroup (empty: queue mode)</span>
        <input {...t.field('consumerGroup')} className={input} aria-label="consumerGroup" />
      </label>
      {t.params.map(
        (p) => p.field && routeReads(p, t.form) && <OptionField key={p.name} t={t} name={p.name} field={p.field} />,
      )}
      <div className="col-span-2 flex items-end gap-2 md:col-span-4">
        <PopButton t={t} type="submit" title={t.writeDenied} className="py-1.5">
          Pop (leases real messages)
        </PopButton>
        <button
          type="button"
          disabled={t.busy}
          onClick={() => void t.attempt('dry run')}
          className="rounded border border-zinc-300 px-3 py-1.5 dark:border-zinc-700"
        >
          Dry run
        </button>
        {t.busy && <span className="text-muted">waiting for the broker…</span>}
      </div>
    </form>
  );
}

/** One of the pop's options, as lib/broker/pop-params.ts describes its field: a number, text, or a choice. */
function OptionField({ t, name, field: { label, input } }: { t: TryPop; name: PopParamName; field: ConsoleField }) {
  const caption = <span className="text-xs text-muted">{label}</span>;
  if (typeof input === 'string')
    return (
      <label className="flex flex-col">
        {caption}
        <input
          {...t.field(name)}
          type={input === 'number' ? 'number' : undefined}
          className={INPUT}
          aria-label={name}
        />
      </label>
    );
  return (
    <label className="flex flex-col">
      {caption}
      <select {...t.field(name)} className={INPUT} aria-label={name}>
        {input.map(([value, text]) => (
          <option key={value} value={value}>
            {text}
          </option>
        ))}
      </select>
    </label>
  );
}

/** A button that pops for real: off while a call runs or without the read-write role. */
export function PopButton({
  t,
  type = 'button',
  title,
  className,
  onClick,
  children,
}: {
  t: TryPop;
  type?: 'button' | 'submit';
  title?: string;
  /** its vertical padding */
  className: string;
  onClick?: () => void;
  children: ReactNode;
}) {
  return (
    <button
      type={type}
      disabled={t.busy || Boolean(t.writeDenied)}
      title={title}
      onClick={onClick}
      className={`rounded bg-red-600 px-3 ${className} font-medium text-white disabled:opacity-50`}
    >
      {children}
    </button>
  );
}
