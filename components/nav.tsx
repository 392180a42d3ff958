'use client';
import Link from 'next/link';
import { usePathname } from 'next/navigation';
import { useEffect, useState } from 'react';
import { operatorName, setOperatorName } from './api';
import { RefreshPicker } from './refresh-picker';
import { SearchBox } from './search-box';
import { useSession } from './session';
import { signOut } from './client/session';

const LINKS = [
  ['/', 'Overview'],
  ['/leases', 'Leases'],
  ['/messages', 'Messages'],
  ['/dead-letters', 'Dead letters'],
  ['/groups', 'Groups'],
  ['/consumers', 'Consumers'],
  ['/streams', 'Streams'],
  ['/live', 'Live'],
  ['/console', 'Try pop'],
  ['/console/push', 'Try push'],
  ['/audit', 'Audit'],
  ['/system', 'System'],
] as const;

export function Nav() {
  const path = usePathname();
  return (
    <header className="border-b border-zinc-200 bg-zinc-50 dark:border-zinc-800 dark:bg-zinc-900">
      <nav className="mx-auto flex max-w-7xl flex-wrap items-center gap-x-5 gap-y-2 px-4 py-2" aria-label="Main">
        <Link href="/" className="font-semibold tracking-tight">
          Queen
        </Link>
        <ul className="flex flex-wrap gap-1 text-sm">
          {LINKS.map(([href, label]) => {
            // the longest link the path starts with: /console/push is Try push, not Try pop
            const active =
              href === '/'
                ? path === '/'
                : path.startsWith(href) && !LINKS.some(([h]) => h.length > href.length && path.startsWith(h));
            return (
              <li key={href}>
                <Link
                  href={href}
                  aria-current={active ? 'page' : undefined}
                  className={`rounded px-2 py-1 ${active ? 'bg-zinc-200 font-medium dark:bg-zinc-800' : 'hover:bg-zinc-100 dark:hover:bg-zinc-800'}`}
                >
                  {label}
                </Link>
              </li>
            );
          })}
        </ul>
        <SearchBox />
        <div className="ml-auto flex flex-wrap items-center gap-x-4 gap-y-2">
          <Identity />
          <RefreshPicker />
        </div>
      </nav>
    </header>
  );
}

/** With auth on, who is signed in and a sign-out; with it off, the name the audit log records. */
function Identity() {
  const { data: session } = useSession();
  const [operator, setOperator] = useState('dashboard');
  useEffect(() => setOperator(operatorName()), []);
  if (session?.authEnabled) {
    return (
      <span className="flex items-center gap-2 text-sm" data-testid="identity">
        <span className="font-mono">{session.subject ?? 'signed out'}</span>
        {session.role && <span className="rounded bg-zinc-200 px-1.5 text-xs dark:bg-zinc-800">{session.role}</span>}
        <button
          type="button"
          onClick={async () => {
            await signOut();
            window.location.assign('/sign-in');
          }}
          className="rounded border border-zinc-300 px-2 py-0.5 text-xs dark:border-zinc-700"
        >
          Sign out
        </button>
      </span>
    );
  }
  return (
    <label className="flex items-center gap-1 text-sm">
      <span className="text-muted">Operator</span>
      <input
        value={operator}
        onChange={(e) => {
          setOperator(e.target.value);
          setOperatorName(e.target.value);
        }}
        className="w-32 rounded border border-zinc-300 bg-white px-1 py-0.5 dark:border-zinc-700 dark:bg-zinc-950"
        aria-label="Operator name, recorded in the audit log"
      />
    </label>
  );
}
