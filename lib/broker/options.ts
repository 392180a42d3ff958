import { z } from 'zod';
import { CONFIGURED_QUEUE_DEFAULTS as D } from './option-defaults';

const int32 = z.number().int().min(-2147483648).max(2147483647);
const nonNegative = int32.min(0);

/**
 * Every queue option the Queen MQ clients send, with its default for /api/v1/configure (a full
 * set: an omitted option goes back to its value in option-defaults.ts, the one place defaults are
 * written). Names the broker does not know are ignored.
 */
export const queueOptions = z.object({
  leaseTime: int32.min(1).default(D.leaseTime),
  retryLimit: nonNegative.default(D.retryLimit),
  retryDelay: nonNegative.default(D.retryDelay),
  delayedProcessing: nonNegative.default(D.delayedProcessing),
  windowBuffer: nonNegative.default(D.windowBuffer),
  minPopWaitTime: nonNegative.default(D.minPopWaitTime).transform((ms) => Math.min(ms, 60000)),
  maxSize: nonNegative.default(D.maxSize),
  ttl: nonNegative.default(D.ttl),
  priority: int32.default(D.priority),
  deadLetterQueue: z.boolean().default(D.deadLetterQueue),
  dlqAfterMaxRetries: z.boolean().default(D.dlqAfterMaxRetries),
  retentionEnabled: z.boolean().default(D.retentionEnabled),
  retentionSeconds: nonNegative.default(D.retentionSeconds),
  completedRetentionSeconds: nonNegative.default(D.completedRetentionSeconds),
  encryptionEnabled: z.boolean().default(D.encryptionEnabled),
  maxWaitTimeSeconds: nonNegative.default(D.maxWaitTimeSeconds),
  /**
   * Dead-letter a message at the next claim after its lease expired this many times (this
   * project's own option; 0, the default, never: pop-routes.md says a lease expiry never uses
   * retry budget, so a consumer that crashes on a message gets it again and again until an
   * operator sets it aside).
   */
  deadLetterAfterExpiries: nonNegative.default(D.deadLetterAfterExpiries),
});

export type QueueOptions = z.output<typeof queueOptions>;
