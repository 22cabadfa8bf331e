/**
 * `stacker sandbox --help`, the faults part. Kept apart from the parser (src/sandbox/fault-spec.ts)
 * so that building the command line loads no sandbox code: the daemon never does.
 */
export const FAULT_HELP = `Faults (--fault, repeatable), to rehearse what a real exchange does on a bad day:
  accept-then-5xx[=STATUS]   perform the request, then answer STATUS (default 502)
  5xx[=STATUS]               answer STATUS (default 503) without performing it
  drop-answer                perform the request, then cut the connection unanswered
  reset                      cut the connection before performing anything
  slow=DURATION              perform the request DURATION late, then answer
  commit-late=DURATION       answer 504 at once (status=NNN to change), perform DURATION later
  answer-late=DURATION       perform the request at once, answer it DURATION later
  history-lag=DURATION       orders appear in the order history and active orders DURATION late
  unknown-status[=WORD]      perform the request, answer its orders with status WORD (default
                             ACCEPTED), a status stacker does not know; path= an order endpoint,
                             /api/v4/orders or the order history
  upper-ids                  perform the request, answer its orders with their clientOrderId in
                             capitals (an exchange keeping ids in another case); paths as above
  unfilled-answer            perform the request, answer its orders without a status and with
                             nothing filled (an older exchange answering before the match; the
                             order history shows the fill); paths as above
  history-page=N             the order history answers at most N orders a page, whatever limit
                             is asked, and does not say so (an exchange capping its pages)
Options after a comma: path=/api/v4/... (default /api/v4/order/stock_market), every=N (every
N-th request), times=N (firings; default unlimited), status=NNN. DURATION: 8, 1.5s or 500ms.
A request meets one fault of its path (besides slow=), the first given that fires on it: a fault
after one that fires on every request for ever would never fire, and is refused.
Example: --fault accept-then-5xx,every=3 --fault history-lag=8s`;
