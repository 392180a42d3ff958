import { z } from 'zod';

const int32 = z.number().int().min(-2147483648).max(2147483647);
const nonNegative = int32.min(0);

/**
 * Every queue option the Queen MQ clients send, with its default for /api/v1/configure (a full
 * set: an omitted option goes back to this value). Names the broker does not know are ignored.
 */
export const queueOptions = z.object({
  leaseTime: int32.min(1).default(300),
  retryLimit: nonNegative.default(3),
  retryDelay: nonNegative.default(1000),
  delayedProcessing: nonNegative.default(0),
  windowBuffer: nonNegative.default(0),
  minPopWaitTime: nonNegative.default(0).transform((ms) => Math.min(ms, 60000)),
  maxSize: nonNegative.default(0),
  ttl: nonNegative.default(3600),
  priority: int32.default(0),
  deadLetterQueue: z.boolean().default(false),
  dlqAfterMaxRetries: z.boolean().default(false),
  retentionEnabled: z.boolean().default(false),
  retentionSeconds: nonNegative.default(0),
  completedRetentionSeconds: nonNegative.default(0),
  encryptionEnabled: z.boolean().default(false),
  maxWaitTimeSeconds: nonNegative.default(0),
  /**
   * Dead-letter a message at the next claim after its lease expired this many times (this
   * project's own option; 0, the default, never: pop-routes.md says a lease expiry never uses
   * retry budget, so a consumer that crashes on a message gets it again and again until an
   * operator sets it aside).
   */
  deadLetterAfterExpiries: nonNegative.default(0),
});

export type QueueOptions = z.output<typeof queueOptions>;
