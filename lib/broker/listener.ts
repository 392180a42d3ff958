import pg from 'pg';
import { databaseUrl } from '@/db/pool';
import { log } from '@/lib/log.mjs';
import { encryptionFlags } from './encryption-flags';
import { events, type BrokerEvent } from './events';
import { forgetScopes, waiters, type PushScope } from './waiters';

/**
 * One dedicated connection per instance LISTENs for pushes committed anywhere (any instance, a
 * transaction, a released lease) and wakes the parked pops of their scope, for queue
 * configuration changes, and for the events of the live view. It reconnects by itself and then
 * re-checks every scope of parked pops and drops cached flags, since notifications sent while it
 * was away are lost.
 */
class PushListener {
  private client?: pg.Client;
  private stopped = false;
  private retryMs = 100;
  private abandoned = new WeakSet<pg.Client>();

  /** Whether the LISTEN connection is up now. */
  get connected(): boolean {
    return this.client !== undefined;
  }

  async start(): Promise<void> {
    this.stopped = false;
    await this.connect();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    const client = this.client;
    this.client = undefined;
    if (client) {
      this.abandoned.add(client);
      await client.end().catch(() => {});
    }
  }

  private async connect(): Promise<void> {
    const client = new pg.Client({ connectionString: databaseUrl(), application_name: 'queen-listener' });
    client.on('notification', (msg) => this.dispatch(msg.channel, msg.payload));
    client.on('error', () => this.reconnect(client));
    client.on('end', () => this.reconnect(client));
    try {
      await client.connect();
      await client.query('listen queen_push; listen queen_config; listen queen_events');
      this.client = client;
      this.retryMs = 100;
      encryptionFlags.invalidate();
      waiters.recheckAll();
    } catch (err) {
      log('listener').warn({ err: (err as Error).message, retryMs: this.retryMs }, 'cannot listen; trying again');
      this.reconnect(client);
    }
  }

  private dispatch(channel: string, payload = ''): void {
    if (channel === 'queen_config') {
      encryptionFlags.invalidate();
      forgetScopes();
      return;
    }
    let message: (Omit<PushScope, 'pushed'> & BrokerEvent & { pushed?: Record<string, number> }) | undefined;
    try {
      message = JSON.parse(payload);
    } catch {
      // not ours
    }
    if (channel === 'queen_events' && message) events.publish(message);
    if (channel !== 'queen_push') return;
    if (!message) return waiters.wakeAll();
    // a push says how many messages each partition received: the hint of how many waiters it feeds
    const pushed = message.pushed ? Object.values(message.pushed).reduce((a, b) => a + (Number(b) || 0), 0) : 0;
    waiters.wake({ queue: message.queue, namespace: message.namespace, task: message.task, pushed });
    if (message.pushed) events.publish({ ...message, type: 'push' });
  }

  private reconnect(client: pg.Client): void {
    if (this.stopped || this.abandoned.has(client)) return;
    this.abandoned.add(client);
    if (this.client === client) {
      this.client = undefined;
      log('listener').warn('LISTEN connection lost; reconnecting (every parked pop is woken once it is back)');
    }
    client.removeAllListeners();
    client.on('error', () => {});
    client.end().catch(() => {});
    const delay = this.retryMs;
    this.retryMs = Math.min(this.retryMs * 2, 5000);
    setTimeout(() => {
      if (!this.stopped) void this.connect();
    }, delay);
  }
}

const slot = globalThis as unknown as { __queenListener?: PushListener };

export async function startPushListener(): Promise<void> {
  if (slot.__queenListener) return;
  slot.__queenListener = new PushListener();
  await slot.__queenListener.start();
}

export const listenerConnected = (): boolean => slot.__queenListener?.connected ?? false;

export async function stopPushListener(): Promise<void> {
  await slot.__queenListener?.stop();
}
