/** The ranges a chart or trend offers, in minutes: 15 min to 24 h. */
export const TREND_RANGES = [15, 60, 360, 1440] as const;
