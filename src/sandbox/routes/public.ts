import { KLINE_LIMIT } from '../../domain/candle.ts';
import { formatDecimal } from '../../domain/money.ts';
import type { Route } from '../router.ts';
import { json } from '../responses.ts';
import { bookWire, marketWire, tickerWire } from '../wire.ts';

const BOOK_MAX_LIMIT = 100;
const HOUR_SEC = 3600;

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
        const price = exchange.lastPrice(market.name);
        if (price !== null) out[market.name] = tickerWire(market, price, exchange.volume24h(market.name), exchange.priceDayBefore(market.name));
      }
      return json(200, out);
    },
  },
  {
    // docs/exchange-api.md §4: rows [time, open, close, high, low, volume, volume_quote]; errors
    // come back as HTTP 200 with success false. A replay (--prices) serves each hour the file's
    // candles of its replayed span joined (with --speed 60 an hour replays 60), up to now; fixed
    // prices, which never trade, a candle flat at the price of its open, volumes zero.
    method: 'GET',
    path: '/api/v1/public/kline',
    private: false,
    scope: 'kline',
    refusals: 'trade',
    handle: ({ exchange, query }) => {
      const refuse = (field: string, message: string) => json(200, { success: false, message: { [field]: [message] }, result: null });
      const market = query.get('market') ?? '';
      if (market === '') return refuse('market', 'The market field is required.');
      if (!exchange.markets().some((m) => m.name === market)) return refuse('market', 'Market is not available.');
      if ((query.get('interval') ?? '1h') !== '1h') return refuse('interval', 'The sandbox serves 1h candles only.');
      const nowSec = Math.floor(exchange.nowMs() / 1000);
      const limit = Number(query.get('limit') ?? KLINE_LIMIT);
      if (!Number.isInteger(limit) || limit < 1 || limit > KLINE_LIMIT) return refuse('limit', `The limit must be between 1 and ${KLINE_LIMIT}.`);
      const end = Number(query.get('end') ?? nowSec);
      const start = Number(query.get('start') ?? end - limit * HOUR_SEC);
      if (!Number.isInteger(start) || !Number.isInteger(end)) return refuse('start', 'The start and end fields must be integers.');
      if (end <= start) return refuse('end', 'End field must be greater then start.');
      const rows: unknown[] = [];
      for (let t = Math.ceil(start / HOUR_SEC) * HOUR_SEC; t <= Math.min(end, nowSec) && rows.length < limit; t += HOUR_SEC) {
        const candle = exchange.candleAt(market, t * 1000, (t + HOUR_SEC) * 1000);
        if (candle !== null) {
          rows.push([t, formatDecimal(candle.open), formatDecimal(candle.close), formatDecimal(candle.high), formatDecimal(candle.low), formatDecimal(candle.volume), formatDecimal(candle.quoteVolume)]);
          continue;
        }
        const price = exchange.priceAt(market, t * 1000);
        if (price === null) continue;
        const text = formatDecimal(price);
        rows.push([t, text, text, text, text, '0', '0']);
      }
      return json(200, { success: true, message: null, result: rows });
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
