/** Where time is read: the system clock live, a virtual one in backtests, a fake one in tests. */
export interface Clock {
  nowMs(): number;
}
