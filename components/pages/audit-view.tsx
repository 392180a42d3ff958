'use client';
import Link from 'next/link';
import { utc } from '@/lib/dashboard/format';
import { useLiveQuery } from '../providers';
import { withSearch } from '@/lib/dashboard/search';
import { UrlTextFilter, useUrlState } from '../url-state';

export interface AuditEntry {
  id: string;
  at: string;
  actor: string;
  action: string;
  targetType: string;
  target: string;
  reason: string | null;
  result: string;
  details: Record<string, unknown>;
}

/** Where an audited object lives in the dashboard. */
function targetLink(e: AuditEntry): string | null {
  if (e.targetType === 'lease') return `/leases`;
  if (e.targetType === 'system') return '/';
  if (e.targetType === 'consumer_group' && e.target.includes('@')) {
    const [group, queue] = e.target.split('@');
    return `/queues/${encodeURIComponent(queue)}?group=${encodeURIComponent(group)}`;
  }
  if (e.targetType === 'subscription') {
    const [queue, group] = e.target.split('/');
    return `/queues/${encodeURIComponent(queue)}?group=${encodeURIComponent(group)}`;
  }
  return null;
}

export function AuditView({ initial, filters }: { initial: { entries: AuditEntry[] }; filters: { target?: string; action?: string } }) {
  const { set } = useUrlState();
  const { data = initial } = useLiveQuery<{ entries: AuditEntry[]; now?: string }>(['audit', filters], withSearch('/api/v1/audit', filters), initial);
  return (
    <div className="space-y-4">
      <div>
        <h1 className="text-2xl font-semibold">Audit log</h1>
        <p className="text-sm text-muted">Every operator action: who, what, on which object, why, and what came of it. Newest first.</p>
      </div>
      <div className="flex flex-wrap items-end gap-3 text-sm">
        <UrlTextFilter name="target" label="Target" match="contains" value={filters.target} className="w-80" />
        <label className="flex flex-col">
          <span className="text-xs text-muted">Action</span>
          <select value={filters.action ?? ''} onChange={(e) => set({ action: e.target.value })} aria-label="Action"
            className="rounded border border-zinc-300 bg-white px-1 py-1 dark:border-zinc-700 dark:bg-zinc-900">
            <option value="">every action</option>
            {['lease.release', 'cursor.pause', 'cursor.resume', 'cursor.seek', 'maintenance.on', 'maintenance.off', 'subscription.set', 'subscription.move', 'consumer_group.delete'].map((a) => <option key={a}>{a}</option>)}
          </select>
        </label>
      </div>
      <table className="w-full text-left text-sm">
        <thead className="border-b border-zinc-200 text-xs uppercase tracking-wide text-muted dark:border-zinc-800">
          <tr><th className="py-2 pr-3">When</th><th className="pr-3">Who</th><th className="pr-3">What</th><th className="pr-3">Target</th><th className="pr-3">Reason</th><th className="cell-optional pr-3">Result</th></tr>
        </thead>
        <tbody>
          {data.entries.map((e) => {
            const href = targetLink(e);
            return (
              <tr key={e.id} className="border-b border-zinc-100 align-top dark:border-zinc-900" data-testid="audit-entry">
                <td className="py-2 pr-3 tabular-nums md:whitespace-nowrap">{utc(e.at)}</td>
                <td className="pr-3">{e.actor}</td>
                <td className="pr-3 font-mono break-all">{e.action}</td>
                <td className="pr-3 font-mono text-xs break-all">{href ? <Link href={href} className="text-sky-700 hover:underline dark:text-sky-400">{e.target}</Link> : e.target}</td>
                <td className="pr-3">{e.reason ?? <span className="text-muted">—</span>}</td>
                <td className="cell-optional pr-3">{e.result}</td>
              </tr>
            );
          })}
        </tbody>
      </table>
      {data.entries.length === 0 && <p className="py-6 text-center text-sm text-muted">Nothing recorded.</p>}
    </div>
  );
}
