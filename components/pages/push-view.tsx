'use client';
import Link from 'next/link';
import { useEffect, useState } from 'react';
import { curlCommand } from '@/lib/dashboard/curl';
import { messageHref } from '@/lib/dashboard/links';
import { parseExact, stringifyExact } from '@/lib/exact-json';
import { PUSH_PATH, pushText } from '../client/queues';
import { CurlBlock } from '../curl-block';
import { useDenied } from '../session';

interface Message {
  payload: string;
  transactionId: string;
}

interface PushReply {
  status: number;
  text: string;
  body: any;
}

/**
 * The body of POST /api/v1/push for these messages, as JSON text, or why it cannot be built. Each
 * payload is the operator's JSON text, parsed by lib/exact-json so that a number JavaScript cannot
 * hold (12345678901234567891, 1.0) is sent as it was typed; an empty payload is left out (stored as {}).
 */
export function pushBody(queue: string, partition: string, messages: Message[]): { text: string } | { error: string } {
  const items = [];
  for (const [i, m] of messages.entries()) {
    const item: Record<string, unknown> = { queue };
    if (partition !== '') item.partition = partition;
    if (m.payload.trim() !== '') {
      try {
        JSON.parse(m.payload);
      } catch (err) {
        return { error: `message ${i + 1}: the payload is not JSON (${(err as Error).message})` };
      }
      item.payload = parseExact(m.payload.trim());
    }
    if (m.transactionId !== '') item.transactionId = m.transactionId;
    items.push(item);
  }
  return { text: stringifyExact({ items }) };
}

const EMPTY: Message = { payload: '{}', transactionId: '' };

export function PushView({ initial }: { initial: { queue?: string; partition?: string } }) {
  const [queue, setQueue] = useState(initial.queue ?? '');
  const [partition, setPartition] = useState(initial.partition ?? '');
  const [messages, setMessages] = useState<Message[]>([EMPTY]);
  const [reply, setReply] = useState<PushReply | null>(null);
  const [busy, setBusy] = useState(false);
  const denied = useDenied('read-write');
  // Known only in the browser; the server's render and the first client render leave it empty.
  const [origin, setOrigin] = useState('');
  useEffect(() => setOrigin(window.location.origin), []);
  const body = pushBody(queue, partition, messages);
  const edit = (i: number, change: Partial<Message>) =>
    setMessages(messages.map((m, j) => (j === i ? { ...m, ...change } : m)));

  async function send() {
    if (!('text' in body)) return;
    setBusy(true);
    try {
      const { status, text } = await pushText(body.text);
      let parsed: unknown = null;
      try {
        parsed = text ? JSON.parse(text) : null;
      } catch {
        parsed = null;
      }
      setReply({ status, text, body: parsed });
    } finally {
      setBusy(false);
    }
  }

  const input = 'rounded border border-zinc-300 bg-white px-1 py-1 dark:border-zinc-700 dark:bg-zinc-900';
  return (
    <div className="space-y-4">
      <div>
        <h1 className="text-2xl font-semibold">Try push</h1>
        <p className="text-sm text-muted">
          Pushes real messages with <code>POST /api/v1/push</code>: every group reading the partition receives them. A
          queue or partition that does not exist is created. Pops:{' '}
          <Link href="/console" className="text-sky-700 hover:underline dark:text-sky-400">
            Try pop
          </Link>
          .
        </p>
      </div>
      <form
        className="space-y-3 text-sm"
        onSubmit={(e) => {
          e.preventDefault();
          void send();
        }}
      >
        <div className="grid grid-cols-2 gap-3 md:grid-cols-4">
          <label className="flex flex-col">
            <span className="text-xs text-muted">Queue</span>
            <input
              value={queue}
              onChange={(e) => setQueue(e.target.value)}
              className={input}
              required
              autoComplete="off"
            />
          </label>
          <label className="flex flex-col">
            <span className="text-xs text-muted">Partition (empty: Default)</span>
            <input value={partition} onChange={(e) => setPartition(e.target.value)} className={input} />
          </label>
        </div>
        <ol className="space-y-2">
          {messages.map((m, i) => (
            // biome-ignore lint/suspicious/noArrayIndexKey: the rows are positions, edited in place
            <li
              key={i}
              className="grid gap-2 rounded border border-zinc-200 p-2 md:grid-cols-[1fr_16rem_auto] dark:border-zinc-800"
            >
              <label className="flex flex-col">
                <span className="text-xs text-muted">
                  Payload of message {i + 1} (JSON; empty: none, stored as {'{}'})
                </span>
                <textarea
                  value={m.payload}
                  onChange={(e) => edit(i, { payload: e.target.value })}
                  rows={3}
                  spellCheck={false}
                  className={`${input} font-mono text-xs`}
                />
              </label>
              <label className="flex flex-col">
                <span className="text-xs text-muted">transactionId of message {i + 1} (empty: a fresh UUID)</span>
                <input
                  value={m.transactionId}
                  onChange={(e) => edit(i, { transactionId: e.target.value })}
                  className={`${input} font-mono`}
                  autoComplete="off"
                />
              </label>
              {messages.length > 1 && (
                <button
                  type="button"
                  onClick={() => setMessages(messages.filter((_, j) => j !== i))}
                  className="self-end rounded border border-zinc-300 px-2 py-1 text-xs dark:border-zinc-700"
                >
                  Remove message {i + 1}
                </button>
              )}
            </li>
          ))}
        </ol>
        <div className="flex flex-wrap items-center gap-2">
          <button
            type="button"
            onClick={() => setMessages([...messages, EMPTY])}
            className="rounded border border-zinc-300 px-3 py-1.5 dark:border-zinc-700"
          >
            Add a message
          </button>
          <button
            type="submit"
            disabled={busy || Boolean(denied) || !('text' in body)}
            title={denied}
            className="rounded bg-red-600 px-3 py-1.5 font-medium text-white disabled:opacity-50"
          >
            Push {messages.length === 1 ? '1 message' : `${messages.length} messages`}
          </button>
          {busy && <span className="text-muted">sending…</span>}
        </div>
        {'error' in body && (
          <p role="alert" className="text-red-700 dark:text-red-400">
            {body.error}
          </p>
        )}
      </form>
      <section>
        <h2 className="text-sm font-semibold">Equivalent curl</h2>
        {'text' in body ? (
          <CurlBlock
            command={curlCommand(origin + PUSH_PATH, { body: body.text })}
            testId="push-curl"
            label="the push curl"
          />
        ) : (
          <p className="text-xs text-muted">(fix the payload first)</p>
        )}
      </section>
      {reply && <PushAnswer reply={reply} />}
    </div>
  );
}

/** The status and body as the broker answered, and each pushed message linked to its page. */
function PushAnswer({ reply }: { reply: PushReply }) {
  const results: any[] = reply.status === 201 && Array.isArray(reply.body) ? reply.body : [];
  return (
    <section className="space-y-2" aria-label="Reply">
      <h2 className="text-sm font-semibold">
        Reply:{' '}
        <span
          data-testid="push-status"
          className={reply.status === 201 ? 'text-emerald-700 dark:text-emerald-400' : 'text-red-600'}
        >
          HTTP {reply.status}
        </span>
      </h2>
      {results.length > 0 && (
        <ul className="space-y-0.5 text-sm" data-testid="push-results">
          {results.map((r) => (
            <li key={r.index}>
              {r.status}:{' '}
              <Link
                href={messageHref(r.partition_id, r.transaction_id)}
                className="font-mono text-sky-700 hover:underline dark:text-sky-400"
              >
                {r.transaction_id}
              </Link>
            </li>
          ))}
        </ul>
      )}
      <pre className="max-h-96 overflow-auto rounded bg-zinc-100 p-2 text-xs dark:bg-zinc-900" data-testid="push-body">
        {reply.body === null ? reply.text : JSON.stringify(reply.body, null, 2)}
      </pre>
    </section>
  );
}
