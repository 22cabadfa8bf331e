/**
 * Wire types, named by role, each above a trimmed sample of the real payload (docs/exchange-api.md,
 * docs/exchange-api.md). They document the wire and name the keys the parsers read; they are not trusted:
 * every answer goes through `parse*.ts`, which checks what it reads.
 */

// ---- public ---------------------------------------------------------------------------------

/** GET /api/v4/public/ping → ["pong"] */
export type PingResultWire = readonly string[];

/** GET /api/v4/public/time → {"time":1760001234}   (seconds per the docs; ccxt saw ms: {"time":1635467280514}) */
export interface TimeResultWire {
  readonly time: number;
}

/**
 * GET /api/v4/public/markets → array of
 * {"name":"ETH_USDT","stock":"ETH","money":"USDT","stockPrec":"4","moneyPrec":"2","feePrec":"6",
 *  "makerFee":"0.1","takerFee":"0.1","minAmount":"0.001","minTotal":"5","maxTotal":"0",
 *  "tradesEnabled":true,"isCollateral":true,"type":"spot","isTradFiFutures":false,"delistedAt":null}
 * Fees are percent strings; maxTotal "0" (or missing on older rows) means no limit.
 */
export interface MarketWire {
  readonly name: string;
  readonly stock: string;
  readonly money: string;
  readonly stockPrec: string;
  readonly moneyPrec: string;
  readonly feePrec: string;
  readonly makerFee: string;
  readonly takerFee: string;
  readonly minAmount: string;
  readonly minTotal: string;
  readonly maxTotal?: string;
  readonly tradesEnabled?: boolean;
  readonly isCollateral?: boolean;
  readonly type?: string;
  readonly isTradFiFutures?: boolean;
  readonly delistedAt?: number | null;
}

/**
 * GET /api/v4/public/ticker → keyed by market:
 * {"ETH_USDT":{"base_id":1027,"quote_id":825,"last_price":"3150.42","quote_volume":"81234567.1",
 *  "base_volume":"25811.3","isFrozen":false,"change":"-1.25"}}
 */
export interface TickerWire {
  readonly base_id?: number;
  readonly quote_id?: number;
  readonly last_price: string;
  readonly quote_volume: string;
  readonly base_volume: string;
  readonly isFrozen?: boolean;
  readonly change: string;
}

/**
 * GET /api/v4/public/orderbook/ETH_USDT?limit=2 →
 * {"ticker_id":"ETH_USDT","timestamp":1760001234,"asks":[["3150.5","1.2"],["3151","0.4"]],"bids":[["3150.1","0.9"]]}
 */
export interface OrderBookWire {
  readonly ticker_id?: string;
  readonly timestamp: number;
  readonly asks: ReadonlyArray<readonly [string, string]>;
  readonly bids: ReadonlyArray<readonly [string, string]>;
}

// ---- main account ---------------------------------------------------------------------------

/** POST /api/v4/main-account/balance {} → {"BTC":{"main_balance":"0.0105"},"USDT":{"main_balance":"36.48"}}   (omitted = zero; `[]` when empty) */
export interface MainBalanceWire {
  readonly main_balance: string;
}
/** POST /api/v4/main-account/balance {"ticker":"USDT"} → {"main_balance":"36.48"}   (unwrapped; keyed answers also accepted) */
export type MainBalancesWire = Readonly<Record<string, MainBalanceWire>> | readonly [];

/** POST /api/v4/main-account/transfer {"ticker":"USDT","amount":"25","from":"main","to":"spot"} → HTTP 201 []   (G/J fixtures: {}) */
export interface TransferParamsWire {
  readonly ticker: string;
  readonly amount: string;
  readonly from: 'main';
  readonly to: 'spot';
}

/**
 * POST /api/v4/main-account/codes/my {"limit":30,"offset":0} → HTTP 201
 * {"total":2,"data":[{"amount":"25","code":"WBxxxxxxxx-....USDT","date":1760000000,"status":"Activated",
 *  "ticker":"USDT","external_id":"my-ext-1"}],"limit":30,"offset":0}
 */
export interface CodeWire {
  readonly amount: string;
  readonly code: string;
  readonly date: number;
  readonly status: string;
  readonly ticker: string;
  readonly external_id: string;
}
export interface CodePageWire {
  readonly total: number;
  readonly data: readonly CodeWire[];
  readonly limit: number;
  readonly offset: number;
}

/**
 * POST /api/v4/main-account/smart-flex/plans {"ticker":"USDT"} →
 * [{"id":"8c1a6e0e-3d1a-4b59-9d7c-0b2b3f1e9a11","ticker":"USDT","minInvestment":"10","maxInvestment":"100000","maxRate":"5.5"}]
 */
export interface FlexPlanWire {
  readonly id: string;
  readonly ticker: string;
  readonly minInvestment: string;
  readonly maxInvestment: string;
  readonly maxRate: string;
}

/**
 * POST /api/v4/main-account/smart-flex/investments {"plan":"8c1a…","investmentStatus":1} →
 * {"data":[{"id":"5f0c…","planId":"8c1a…","currency":"USDT","invested":"150","withAutoReinvest":false,
 *  "status":1,"createdAt":1760000000,"updatedAt":1760003600}],"limit":100,"offset":0}
 */
export interface FlexInvestmentWire {
  readonly id: string;
  readonly planId: string;
  readonly currency: string;
  readonly invested: string;
  readonly withAutoReinvest: boolean;
  readonly status: number;
  readonly createdAt: number;
  readonly updatedAt: number;
}
export interface FlexInvestmentsWire {
  readonly data: readonly FlexInvestmentWire[];
  readonly limit?: number;
  readonly offset?: number;
}

/** POST …/smart-flex/investments/withdraw {"plan":"8c1a…","amount":"10"} → HTTP 201 {"data":{"transaction_id":"c0ffee-…"}}   (older docs: transactionId) */
export interface FlexWithdrawParamsWire {
  readonly plan: string;
  readonly amount: string;
}
export interface FlexWithdrawResultWire {
  readonly data?: { readonly transaction_id?: string; readonly transactionId?: string };
  readonly transaction_id?: string;
  readonly transactionId?: string;
}

// ---- trade account --------------------------------------------------------------------------

/** POST /api/v4/trade-account/balance {} → {"USDT":{"available":"120.5","freeze":"0"}}   ({"ticker":"USDT"} → unwrapped {"available":"128999.065109","freeze":"0"}) */
export interface TradeBalanceWire {
  readonly available: string;
  readonly freeze: string;
}

/** POST /api/v4/order/stock_market — amount in BASE; POST /api/v4/order/market — buy amount in QUOTE. */
export interface MarketOrderParamsWire {
  readonly market: string;
  readonly side: 'buy' | 'sell';
  readonly amount: string;
  readonly clientOrderId?: string;
  readonly stp?: string;
}

/**
 * Order record (create, cancel, /api/v4/orders):
 * {"orderId":5123456789,"clientOrderId":"bot-eth-0001","market":"ETH_USDT","side":"buy","type":"stock market",
 *  "timestamp":1760001234.123456,"dealMoney":"6.30084","dealStock":"0.002","amount":"0.002","left":"0",
 *  "dealFee":"0.00630084","feeAsset":"USDT","ioc":false,"status":"FILLED","stp":"no","rpi":false}
 * Older captures (G fixture, 2022) have no status/stp and carry takerFee/makerFee:
 * {"orderId":3310696165,"clientOrderId":"61","market":"BTC_USDT","side":"buy","type":"stock market",
 *  "timestamp":1669333716.366427,"dealMoney":"16.58143","dealStock":"0.001","amount":"0.001",
 *  "takerFee":"0.001","makerFee":"0","left":"0","dealFee":"0.01658143"}
 */
export interface OrderWire {
  readonly orderId: number;
  readonly clientOrderId?: string;
  readonly market: string;
  readonly side: string;
  readonly type: string;
  readonly timestamp: number;
  readonly dealMoney: string;
  readonly dealStock: string;
  readonly amount: string;
  readonly left?: string;
  readonly dealFee: string;
  readonly feeAsset?: string;
  readonly price?: string;
  readonly status?: string;
  readonly stp?: string;
  readonly activated?: number;
  readonly activation_price?: string;
}

/**
 * POST /api/v4/trade-account/order/history {"clientOrderId":"bot-eth-0001"} → keyed by market (`[]` when empty):
 * {"ETH_USDT":[{"id":5123456789,"clientOrderId":"bot-eth-0001","side":"buy","type":"stock market","amount":"0.002",
 *  "price":"0","ctime":1760001234.12,"ftime":1760001234.13,"dealStock":"0.002","dealMoney":"6.30084",
 *  "dealFee":"0.00630084","feeAsset":"USDT","postOnly":false,"ioc":false,"status":"FILLED"}]}
 * Rows use `id` and `ctime`, carry no `market` (it is the key) and no `left`.
 */
export interface OrderHistoryRowWire {
  readonly id: number;
  readonly clientOrderId?: string;
  readonly market?: string;
  readonly side: string;
  readonly type: string;
  readonly amount: string;
  readonly price?: string;
  readonly ctime: number;
  readonly ftime?: number;
  readonly dealStock: string;
  readonly dealMoney: string;
  readonly dealFee: string;
  readonly feeAsset?: string;
  readonly status?: string;
  readonly activated?: number;
}

/**
 * POST /api/v4/trade-account/order {"orderId":5123456789,"limit":50,"offset":0} →
 * {"records":[{"time":1760001234.13,"fee":"0.00630084","price":"3150.42","amount":"0.002","id":149156519,
 *  "dealOrderId":5123456780,"clientOrderId":"bot-eth-0001","role":2,"deal":"6.30084","feeAsset":"USDT"}],"offset":0,"limit":50}
 */
export interface DealWire {
  readonly time: number;
  readonly fee: string;
  readonly price: string;
  readonly amount: string;
  readonly id: number;
  readonly dealOrderId?: number;
  readonly clientOrderId?: string;
  readonly role: number;
  readonly deal: string;
  readonly feeAsset?: string;
}
export interface OrderDealsWire {
  readonly records: readonly DealWire[];
  readonly offset?: number;
  readonly limit?: number;
}
