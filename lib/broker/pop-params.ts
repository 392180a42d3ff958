import { z } from 'zod';
import { config } from '@/lib/config.mjs';
import { HttpError } from './errors';
import { ISO_WITH_ZONE, name, parseWith, queryInteger } from './validate';

const QUEUE_MODE = '__QUEUE_MODE__';
const INT32_MAX = 2147483647;

const integer = queryInteger(-INT32_MAX, INT32_MAX);

const flag = z.enum(['true', 'false', '1', '0']).transform((v) => v === 'true' || v === '1');

export const popQuery = z.object({
  batch: integer.pipe(z.number().min(1, 'must be at least 1')).optional(),
  partitions: integer.optional(),
  autoAck: flag.optional(),
  wait: flag.optional(),
  timeout: integer.pipe(z.number().min(0, 'must not be negative')).optional(),
  leaseSeconds: integer.optional(),
  consumerGroup: name.optional(),
  subscriptionMode: z.string().optional(),
  subscriptionFrom: z.string().optional(),
  namespace: name.optional(),
  task: name.optional(),
});

export interface PopParams {
  batch: number;
  /** <= 0: no cap */
  partitions: number;
  autoAck: boolean;
  wait: boolean;
  timeoutMs: number;
  /** 0: the queue's leaseTime */
  leaseSeconds: number;
  consumerGroup: string;
  /** 'new' skips the backlog of a new cursor; 'all' starts at the oldest message */
  subscriptionMode: 'new' | 'all';
  /** ISO timestamp, or 'now', which PostgreSQL resolves (its clock, not this server's); undefined when absent or unparseable */
  subscriptionFrom?: string;
  namespace: string;
  task: string;
}

function subscriptionFrom(value: string | undefined): string | undefined {
  if (!value) return undefined;
  if (value.toLowerCase() === 'now') return 'now';
  // A time without a zone would be read in some server's zone: unparseable, so ignored (the spec).
  if (!ISO_WITH_ZONE.test(value) || Number.isNaN(Date.parse(value))) return undefined;
  return new Date(value).toISOString();
}

/** The query string of a pop route, with the spec's defaults; a value that fails to parse is a 400. */
export function parsePopQuery(search: URLSearchParams): PopParams {
  const raw: Record<string, string> = {};
  for (const key of Object.keys(popQuery.shape)) {
    const v = search.get(key);
    if (v !== null) raw[key] = v;
  }
  const q = parseWith(popQuery, raw, 'query');
  const mode = q.subscriptionMode?.toLowerCase();
  return {
    batch: q.batch ?? 200,
    partitions: q.partitions ?? 1,
    autoAck: q.autoAck ?? false,
    wait: q.wait ?? false,
    timeoutMs: q.timeout ?? config().pop.defaultTimeoutMs,
    leaseSeconds: Math.max(0, q.leaseSeconds ?? 0),
    consumerGroup: q.consumerGroup || QUEUE_MODE,
    subscriptionMode: mode === 'new' || mode === 'new-only' ? 'new' : 'all',
    subscriptionFrom: subscriptionFrom(q.subscriptionFrom),
    namespace: q.namespace ?? '',
    task: q.task ?? '',
  };
}

/** The discovery route refuses to scan every queue; the spec fixes this exact body. */
export function requireDiscoveryScope(p: PopParams): void {
  if (!p.namespace && !p.task) {
    throw new HttpError(400, 'namespace or task is required', {
      success: false,
      error: 'namespace or task is required',
      messages: [],
    });
  }
}
