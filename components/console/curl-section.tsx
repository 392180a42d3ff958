'use client';
import { curlCommand } from '@/lib/dashboard/curl';
import { CurlBlock } from '../curl-block';
import type { TryPop } from './use-try-pop';

/** The pop and its dry run as curl commands. */
export function CurlSection({ t }: { t: TryPop }) {
  return (
    <section>
      <h2 className="text-sm font-semibold">Equivalent curl</h2>
      <CurlBlock command={curlCommand(t.origin + t.url, { include: true })} testId="curl" label="the pop curl" />
      <p className="mt-1 text-xs text-muted">The dry run (claims nothing; answers {'{status, empty, body, why}'}):</p>
      <CurlBlock command={curlCommand(t.origin + t.previewUrl)} testId="curl-dry-run" label="the preview curl" />
    </section>
  );
}
