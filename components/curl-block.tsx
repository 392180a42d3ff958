'use client';
import { useState } from 'react';

/** A curl command line, shown whole and copied with one click. */
export function CurlBlock({ command, testId, label }: { command: string; testId: string; label: string }) {
  const [copied, setCopied] = useState(false);
  return (
    <div className="flex items-start gap-2">
      <pre
        className="min-w-0 flex-1 overflow-x-auto rounded bg-zinc-100 p-2 text-xs whitespace-pre-wrap wrap-anywhere dark:bg-zinc-900"
        data-testid={testId}
      >
        {command}
      </pre>
      <button
        type="button"
        aria-label={`Copy ${label}`}
        onClick={async () => {
          await navigator.clipboard.writeText(command);
          setCopied(true);
          setTimeout(() => setCopied(false), 2000);
        }}
        className="shrink-0 rounded border border-zinc-300 px-2 py-1 text-xs dark:border-zinc-700"
      >
        {copied ? 'Copied' : 'Copy'}
      </button>
    </div>
  );
}
