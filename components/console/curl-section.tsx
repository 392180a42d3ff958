'use client';
import type { TryPop } from './use-try-pop';

/** The pop and its dry run as curl commands. */
export function CurlSection({ t }: { t: TryPop }) {
  return (
    <section>
      <h2 className="text-sm font-semibold">Equivalent curl</h2>
      <pre className="overflow-x-auto rounded bg-zinc-100 p-2 text-xs dark:bg-zinc-900" data-testid="curl">
        curl -sS -i &apos;{t.origin}
        {t.url}&apos;
      </pre>
      <p className="mt-1 text-xs text-muted">The dry run (claims nothing; answers {'{status, empty, body, why}'}):</p>
      <pre className="overflow-x-auto rounded bg-zinc-100 p-2 text-xs dark:bg-zinc-900" data-testid="curl-dry-run">
        curl -sS &apos;{t.origin}
        {t.previewUrl}&apos;
      </pre>
    </section>
  );
}
