// Preloaded (NODE_OPTIONS=--require) into an app server whose clock must run ahead or behind the
// database's by TEST_CLOCK_SKEW_MS: Date.now() and `new Date()` see the skew, timers do not.
const skew = Number(process.env.TEST_CLOCK_SKEW_MS || 0);
const RealDate = Date;
class SkewedDate extends RealDate {
  constructor(...args) {
    super(...(args.length ? args : [RealDate.now() + skew]));
  }
  static now() {
    return RealDate.now() + skew;
  }
}
globalThis.Date = SkewedDate;
