'use client';
import type { MaintenanceState } from '@/lib/dashboard/overview';
import { utc } from '@/lib/dashboard/format';
import { MAINTENANCE_PATH, setPopMaintenance } from './client/system';
import { useLiveQuery } from './providers';
import { ReasonAction } from './reason-action';

/** Loud while pops are off: every consumer is getting 204s and cannot tell why. */
export function MaintenanceBanner() {
  const { data } = useLiveQuery<MaintenanceState>(['maintenance'], MAINTENANCE_PATH);
  const m = data?.maintenance;
  if (!m?.enabled) return null;
  return (
    <div role="alert" data-testid="maintenance-banner" className="bg-red-600 px-4 py-2 text-sm font-medium text-white">
      Pop maintenance is ON: every pop answers 204 and consumers receive nothing.
      {m.reason && <> Reason: “{m.reason}”.</>} {m.by && <>Turned on by {m.by}</>} {m.at && <>at {utc(m.at)}.</>}
    </div>
  );
}

export function MaintenanceToggle({ enabled }: { enabled: boolean }) {
  return enabled ? (
    <ReasonAction
      label="Turn pop maintenance off"
      title="Turn pop maintenance off?"
      description="Pops on every instance deliver messages again within a second."
      confirmLabel="Turn off"
      success="Pop maintenance is off: pops deliver again"
      run={(reason) => setPopMaintenance(false, reason)}
      className="rounded bg-white px-3 py-1 text-sm font-medium text-red-700 ring-1 ring-red-300 hover:bg-red-50 dark:bg-zinc-900 dark:text-red-300 dark:ring-red-800"
    />
  ) : (
    <ReasonAction
      label="Turn pop maintenance on"
      title="Stop every pop?"
      description={
        <>
          Every pop on every instance will answer a bare <code>204</code>: consumers receive nothing and cannot tell a
          paused broker from an idle queue. Pushes and acks keep working.
        </>
      }
      confirmLabel="Stop pops"
      success="Pop maintenance is on: every pop answers 204"
      run={(reason) => setPopMaintenance(true, reason)}
    />
  );
}
