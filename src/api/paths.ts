/**
 * Every path this client calls, and the rate-limit scope each belongs to. Only `src/api/` knows
 * these strings (STYLE.md rule 3).
 */
export const PATHS = {
  ping: '/api/v4/public/ping',
  time: '/api/v4/public/time',
  markets: '/api/v4/public/markets',
  ticker: '/api/v4/public/ticker',
  orderBook: '/api/v4/public/orderbook', // + `/{market}`
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

export type RateScope = 'public' | 'main-account' | 'trade' | 'trade-query';

/**
 * Which limiter a path counts against. The exchange limits per endpoint family (WHITEBIT.md §8);
 * the official CLI groups them the same four ways.
 */
export function scopeOf(path: string): RateScope {
  if (path.startsWith('/api/v4/public/')) return 'public';
  if (path.startsWith('/api/v4/main-account/')) return 'main-account';
  if (path.startsWith('/api/v4/order/')) return 'trade';
  if (path.startsWith('/api/v4/trade-account/') || path === '/api/v4/orders') return 'trade-query';
  // Anything else is a private trading-family path; the tightest private scope would be wrong too,
  // so count it with the order endpoints (the exchange's default scope is 10000/10 s).
  return 'trade';
}
