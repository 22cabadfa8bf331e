import type { Route } from '../router.ts';
import { json } from '../responses.ts';
import { bookWire, marketWire, tickerWire } from '../wire.ts';

const BOOK_MAX_LIMIT = 100;

/** Public GET endpoints (docs/exchange-api.md §4). No authentication; refusals use the flat 422 shape. */
export const publicRoutes: readonly Route[] = [
  {
    method: 'GET',
    path: '/api/v4/public/ping',
    private: false,
    scope: 'public',
    refusals: 'trade',
    handle: () => json(200, ['pong']),
  },
  {
    method: 'GET',
    path: '/api/v4/public/time',
    private: false,
    scope: 'public',
    refusals: 'trade',
    handle: ({ exchange }) => json(200, { time: Math.floor(exchange.nowMs() / 1000) }),
  },
  {
    method: 'GET',
    path: '/api/v4/public/markets',
    private: false,
    scope: 'public',
    refusals: 'trade',
    handle: ({ exchange }) => json(200, exchange.markets().map(marketWire)),
  },
  {
    method: 'GET',
    path: '/api/v4/public/ticker',
    private: false,
    scope: 'public',
    refusals: 'trade',
    handle: ({ exchange }) => {
      const out: Record<string, unknown> = {};
      for (const market of exchange.markets()) {
        const price = exchange.price(market.name);
        if (price !== null) out[market.name] = tickerWire(market, price);
      }
      return json(200, out);
    },
  },
  {
    method: 'GET',
    path: /^\/api\/v4\/public\/orderbook\/([^/]+)$/,
    private: false,
    scope: 'order-book',
    refusals: 'trade',
    handle: ({ exchange, query, pathParams }) => {
      const market = pathParams[0] ?? '';
      const limitText = query.get('limit');
      const limit = limitText === null || limitText === '' || limitText === '0' ? BOOK_MAX_LIMIT : Number(limitText);
      if (!/^\d*$/.test(limitText ?? '') || !Number.isInteger(limit) || limit > BOOK_MAX_LIMIT) {
        return json(422, { limit: [`The limit may not be greater than ${BOOK_MAX_LIMIT}.`] });
      }
      const book = exchange.orderBook(market, limit);
      if (book === null) return json(422, { market: ['Market is not available.'] });
      return json(200, {
        ticker_id: market,
        timestamp: Math.floor(exchange.nowMs() / 1000),
        asks: bookWire(book.asks),
        bids: bookWire(book.bids),
      });
    },
  },
];
