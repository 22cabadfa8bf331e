/**
 * Every path this client calls, and the rate-limit scope each belongs to. Only `src/api/` knows
 * these strings (docs/design.md, Conventions).
 */
export const PATHS = {
  ping: '/api/v4/public/ping',
  time: '/api/v4/public/time',
  markets: '/api/v4/public/markets',
  ticker: '/api/v4/public/ticker',
  orderBook: '/api/v4/public/orderbook', // + `/{market}`
  kline: '/api/v1/public/kline',
  mainBalance: '/api/v4/main-account/balance',
  transfer: '/api/v4/main-account/transfer',
  codes: '/api/v4/main-account/codes/my',
  flexPlans: '/api/v4/main-account/smart-flex/plans',
  flexInvestments: '/api/v4/main-account/smart-flex/investments',
  flexWithdraw: '/api/v4/main-account/smart-flex/investments/withdraw',
  tradeBalance: '/api/v4/trade-account/balance',
  orderHistory: '/api/v4/trade-account/order/history',
  orderDeals: '/api/v4/trade-account/order',
  activeOrders: '/api/v4/orders',
  stockMarket: '/api/v4/order/stock_market',
  market: '/api/v4/order/market',
} as const;

/**
 * The exchange limits requests per endpoint (per IP, in a 10 s window) and rejects rather than
 * queues; repeated 429s may get the key or IP restricted. Endpoints with a stricter limit than
 * their family have a scope of their own: the order book (600 / 10 s) and the active orders
 * (1000 / 10 s in the older docs and clients, 12000 in the newer: the stricter one is kept).
 */
export type RateScope = 'public' | 'order-book' | 'kline' | 'main-account' | 'trade' | 'trade-query' | 'active-orders';

export interface RateLimit {
  readonly limit: number;
  readonly windowMs: number;
}

/**
 * Requests per scope and window: the strictest value documented for each (docs/exchange-api.md,
 * "Rate limits"). The client keeps under them; the sandbox enforces the same table.
 */
export const RATE_LIMITS: Readonly<Record<RateScope, RateLimit>> = {
  public: { limit: 2000, windowMs: 10_000 },
  'order-book': { limit: 600, windowMs: 10_000 },
  kline: { limit: 1000, windowMs: 10_000 },
  'main-account': { limit: 1000, windowMs: 10_000 },
  trade: { limit: 10_000, windowMs: 10_000 },
  'trade-query': { limit: 12_000, windowMs: 10_000 },
  'active-orders': { limit: 1000, windowMs: 10_000 },
};

/** Which limiter a path counts against. */
export function scopeOf(path: string): RateScope {
  if (path.startsWith('/api/v4/public/orderbook/') && !path.startsWith('/api/v4/public/orderbook/depth/')) return 'order-book';
  if (path.startsWith('/api/v4/public/')) return 'public';
  if (path === '/api/v1/public/kline') return 'kline';
  if (path.startsWith('/api/v4/main-account/')) return 'main-account';
  if (path.startsWith('/api/v4/order/')) return 'trade';
  if (path === '/api/v4/orders') return 'active-orders';
  if (path.startsWith('/api/v4/trade-account/')) return 'trade-query';
  // Anything else is a private trading-family path; the tightest private scope would be wrong too,
  // so count it with the order endpoints (the exchange's default scope is 10000/10 s).
  return 'trade';
}
