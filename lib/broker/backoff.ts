export interface BackoffSettings {
  waitInitialIntervalMs: number;
  waitBackoffThreshold: number;
  waitBackoffMultiplier: number;
  waitMaxIntervalMs: number;
}

/**
 * The re-check interval of a parked pop (pop-routes.md, Long polling): it starts at the initial
 * interval, grows by the multiplier after `threshold` consecutive empty waits, is capped, and a
 * wake resets it.
 */
export class WaitBackoff {
  private emptyWaits = 0;
  interval: number;

  constructor(private readonly s: BackoffSettings) {
    this.interval = s.waitInitialIntervalMs;
  }

  /** Records how the last wait ended. */
  after(woken: boolean): void {
    if (woken) {
      this.interval = this.s.waitInitialIntervalMs;
      this.emptyWaits = 0;
    } else if (++this.emptyWaits >= this.s.waitBackoffThreshold) {
      this.interval = Math.min(this.interval * this.s.waitBackoffMultiplier, this.s.waitMaxIntervalMs);
    }
  }
}
