import { describe, expect, it } from 'vitest';
import { WaitBackoff } from '@/lib/broker/backoff';

const spec = { waitInitialIntervalMs: 100, waitBackoffThreshold: 3, waitBackoffMultiplier: 2, waitMaxIntervalMs: 1000 };

describe('the long-poll re-check interval', () => {
  it('starts at 100 ms, grows by 2.0 after 3 consecutive empty waits, capped at 1000 ms', () => {
    const b = new WaitBackoff(spec);
    const seen = [b.interval];
    for (let i = 0; i < 8; i++) {
      b.after(false);
      seen.push(b.interval);
    }
    expect(seen).toEqual([100, 100, 100, 200, 400, 800, 1000, 1000, 1000]);
  });

  it('a wake resets the backoff', () => {
    const b = new WaitBackoff(spec);
    for (let i = 0; i < 5; i++) b.after(false);
    expect(b.interval).toBe(800);
    b.after(true);
    expect(b.interval).toBe(100);
    b.after(false);
    b.after(false);
    expect(b.interval).toBe(100); // the count of empty waits was reset too
  });

  it('follows other settings', () => {
    const b = new WaitBackoff({
      waitInitialIntervalMs: 50,
      waitBackoffThreshold: 1,
      waitBackoffMultiplier: 3,
      waitMaxIntervalMs: 500,
    });
    b.after(false);
    b.after(false);
    b.after(false);
    expect(b.interval).toBe(500);
  });
});
