import { events, type BrokerEvent } from '@/lib/broker/events';
import { endWithSession } from '@/lib/http/live-sessions';
import { route } from '@/lib/http/route';

/**
 * Server-sent events for the live consume view, filterable by `queue` and `group`. With auth on
 * the stream ends when its token expires or its session signs out, with a last `session-ended`
 * event (a reconnect without a valid token is then a 401, which stops the browser's EventSource).
 */
export const GET = route(async (request) => {
  const search = new URL(request.url).searchParams;
  const filter = { queue: search.get('queue') || undefined, group: search.get('group') || undefined };
  // The page's counts start here: the browser sees the stream open as soon as this handler
  // returns, before the subscription below is in place, and may act on it at once.
  const openedAt = new Date().toISOString();
  const encoder = new TextEncoder();
  let close = () => {};
  const stream = new ReadableStream<Uint8Array>({
    async start(controller) {
      const write = (text: string) => {
        try {
          controller.enqueue(encoder.encode(text));
        } catch {
          close();
        }
      };
      const send = (e: BrokerEvent) => write(`data: ${JSON.stringify(e)}\n\n`);
      const unsubscribe = await events.subscribe(filter, send);
      if (request.signal.aborted) return unsubscribe();
      const heartbeat = setInterval(() => write(': keep-alive\n\n'), 15_000);
      const unwatch = endWithSession(request, (reason) => {
        send({ type: 'session-ended', at: new Date().toISOString(), reason });
        close();
      });
      close = () => {
        unsubscribe();
        unwatch();
        clearInterval(heartbeat);
        try {
          controller.close();
        } catch {
          // already closed
        }
      };
      request.signal.addEventListener('abort', () => close(), { once: true });
      write('retry: 2000\n\n');
      send({ type: 'hello', at: openedAt, ...filter });
    },
    cancel() {
      close();
    },
  });
  return new Response(stream, {
    headers: {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache, no-transform',
      'x-accel-buffering': 'no',
    },
  });
});
