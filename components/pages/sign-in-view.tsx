'use client';
import { useState } from 'react';
import { signIn } from '../client/session';

/** Takes a JWT; the server checks it and keeps it in an HttpOnly cookie (JavaScript never sees it again). */
export function SignInView({ next, authOff }: { next: string; authOff: boolean }) {
  const [token, setToken] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  return (
    <main className="mx-auto mt-16 max-w-lg space-y-4 px-4">
      <h1 className="text-2xl font-semibold">Sign in to Queen</h1>
      {authOff && (
        <p
          role="status"
          className="rounded border border-amber-300 bg-amber-50 px-3 py-2 text-sm text-amber-900 dark:border-amber-800 dark:bg-amber-950 dark:text-amber-200"
          data-testid="auth-off"
        >
          Authentication is off on this broker (<code>JWT_ENABLED</code> is not <code>true</code>): there is nothing to
          sign in to, and every visitor has the admin role.{' '}
          <a href={next} className="underline">
            Go to the dashboard
          </a>
          .
        </p>
      )}
      <p className="text-sm text-muted">
        Paste a JWT signed for this broker. Its <code>role</code> decides what you can do: <strong>read-only</strong>{' '}
        sees everything, <strong>read-write</strong> can also pop and ack, <strong>admin</strong> can release, pause,
        seek and delete.
      </p>
      <form
        className="space-y-3"
        onSubmit={async (e) => {
          e.preventDefault();
          setBusy(true);
          setError(null);
          try {
            const refused = await signIn(token);
            if (refused !== null) {
              setError(refused);
              return;
            }
            window.location.assign(next);
          } finally {
            setBusy(false);
          }
        }}
      >
        <label className="block text-sm">
          <span className="text-muted">Token</span>
          <textarea
            value={token}
            onChange={(e) => setToken(e.target.value)}
            rows={6}
            required
            aria-label="Token"
            className="mt-1 block w-full rounded border border-zinc-300 bg-white p-2 font-mono text-xs dark:border-zinc-700 dark:bg-zinc-900"
          />
        </label>
        {error && (
          <p role="alert" className="text-sm text-red-600">
            {error}
          </p>
        )}
        <button
          type="submit"
          disabled={busy}
          className="rounded bg-zinc-900 px-3 py-1.5 text-sm font-medium text-white disabled:opacity-50 dark:bg-zinc-100 dark:text-zinc-900"
        >
          Sign in
        </button>
      </form>
    </main>
  );
}
