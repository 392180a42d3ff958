/**
 * The one place each queue option's default is written (issue 31). Everything else that states one
 * reads these, or is checked against them (tests/option-defaults.test.ts): the column defaults of
 * queen.queues (sql/001 and any later `alter ... set default`), the Drizzle schema, the pop
 * contract's text, the console, docs/api.md.
 *
 * Two sets, because pop-routes.md gives two leases: a queue created or updated through
 * /api/v1/configure takes CONFIGURED (an omitted option goes back to its value), a queue created
 * implicitly (by a push or a pop) takes IMPLICIT, PostgreSQL's column defaults. They differ only in
 * leaseTime: "60 seconds for a queue created implicitly by a push, 300 seconds for one created or
 * updated through /api/v1/configure".
 *
 * Plain values, no imports: the client bundle (the console) reads them too.
 */
export const CONFIGURED_QUEUE_DEFAULTS = {
  leaseTime: 300,
  retryLimit: 3,
  retryDelay: 1000,
  delayedProcessing: 0,
  windowBuffer: 0,
  minPopWaitTime: 0,
  maxSize: 0,
  ttl: 3600,
  priority: 0,
  deadLetterQueue: false,
  dlqAfterMaxRetries: false,
  retentionEnabled: false,
  retentionSeconds: 0,
  completedRetentionSeconds: 0,
  encryptionEnabled: false,
  maxWaitTimeSeconds: 0,
  deadLetterAfterExpiries: 0,
} as const;

export const IMPLICIT_QUEUE_DEFAULTS = { ...CONFIGURED_QUEUE_DEFAULTS, leaseTime: 60 } as const;

/** Each option's column of queen.queues (queen.queue_options() answers them under these names). */
export const OPTION_COLUMNS: Record<keyof typeof CONFIGURED_QUEUE_DEFAULTS, string> = {
  leaseTime: 'lease_time',
  retryLimit: 'retry_limit',
  retryDelay: 'retry_delay',
  delayedProcessing: 'delayed_processing',
  windowBuffer: 'window_buffer',
  minPopWaitTime: 'min_pop_wait_time',
  maxSize: 'max_size',
  ttl: 'ttl',
  priority: 'priority',
  deadLetterQueue: 'dead_letter_queue',
  dlqAfterMaxRetries: 'dlq_after_max_retries',
  retentionEnabled: 'retention_enabled',
  retentionSeconds: 'retention_seconds',
  completedRetentionSeconds: 'completed_retention_seconds',
  encryptionEnabled: 'encryption_enabled',
  maxWaitTimeSeconds: 'max_wait_time_seconds',
  deadLetterAfterExpiries: 'dead_letter_after_expiries',
};
