import type { SimCore } from '../sim/core.ts';
import type { Body } from './params.ts';
import type { SandboxRateScope } from './rate-limit.ts';
import type { Answer, RefusalStyle } from './responses.ts';

export interface RouteContext {
  readonly exchange: SimCore;
  /** Parsed JSON body of a private request; empty for public ones. */
  readonly body: Body;
  readonly query: URLSearchParams;
  /** Captures of a pattern route (e.g. the market of the order book path). */
  readonly pathParams: readonly string[];
  /** Order lookups show only orders created up to this time (Unix seconds): the history lag fault. */
  readonly visibleUntilSec: number;
  /** The most orders an order history page holds whatever its limit (the history-page fault); null: as asked. */
  readonly historyPageCap?: number | null;
}

export interface Route {
  readonly method: 'GET' | 'POST';
  readonly path: string | RegExp;
  readonly private: boolean;
  readonly scope: SandboxRateScope;
  /** How SimRejections thrown by `handle` become statuses. */
  readonly refusals: RefusalStyle;
  handle(context: RouteContext): Answer;
}

export interface RouteMatch {
  readonly route: Route;
  readonly pathParams: readonly string[];
}

/** The route for exactly this method and path; anything else is "unknown route" (404, empty body). */
export function findRoute(routes: readonly Route[], method: string, path: string): RouteMatch | null {
  for (const route of routes) {
    if (route.method !== method) continue;
    if (typeof route.path === 'string') {
      if (route.path === path) return { route, pathParams: [] };
      continue;
    }
    const match = route.path.exec(path);
    if (match) return { route, pathParams: match.slice(1).map((p) => decodeURIComponent(p)) };
  }
  return null;
}
