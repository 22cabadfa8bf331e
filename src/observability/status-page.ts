import { createHash } from 'node:crypto';

/**
 * The status page served at `GET /`: one self-contained HTML file (no CDN, no external font,
 * no image), readable on a phone. It holds no data: its script reads `/api/status` at once and
 * every few seconds and builds the page with DOM text nodes only, so nothing the journal or a
 * strategy wrote can become markup (no innerHTML anywhere).
 *
 * The controls appear once a control token is typed in. The token is kept in sessionStorage
 * (this tab only, gone when it closes; never a cookie) and sent as `Authorization: Bearer` by
 * the script; a token the daemon refuses (401) is forgotten and asked for again. The Content-Security-Policy allows this one inline script by its hash, requests
 * to this origin only, and no framing.
 */

/** How often the page reads /api/status again. */
export const STATUS_REFRESH_MS = 5000;

const STYLE = `
:root { color-scheme: light dark; --ok: #1a7f37; --bad: #cf222e; --warn: #9a6700; --line: #8884; }
* { box-sizing: border-box; }
body { font: 15px/1.4 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; margin: 0; padding: 12px; max-width: 1100px; margin-inline: auto; }
h1 { font-size: 1.3em; margin: 0 0 4px; }
h2 { font-size: 1.1em; margin: 0 0 6px; }
h3 { font-size: 1em; margin: 10px 0 4px; }
section, article { border: 1px solid var(--line); border-radius: 8px; padding: 10px 12px; margin: 10px 0; }
.badge { display: inline-block; padding: 1px 8px; border-radius: 10px; font-size: .85em; font-weight: 600; border: 1px solid currentColor; margin-right: 4px; }
.ok { color: var(--ok); } .bad { color: var(--bad); } .warn { color: var(--warn); }
.muted { opacity: .7; font-size: .9em; }
.scroll { overflow-x: auto; }
table { border-collapse: collapse; font-size: .9em; width: 100%; }
th, td { text-align: left; padding: 3px 8px 3px 0; border-bottom: 1px solid var(--line); vertical-align: top; white-space: nowrap; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
td.wrap { white-space: normal; min-width: 16em; }
/* An order's transitions under it, set in: not rows of orders of their own. */
tr.transition td { opacity: .75; font-size: .92em; }
tr.transition td:first-child { padding-left: 1.5em; }
/* Dark backgrounds need lighter tones to stay readable (4.5:1 and more on #121212). */
@media (prefers-color-scheme: dark) { :root { --ok: #3fb950; --bad: #ff7b72; --warn: #e3b341; } }
button { font: inherit; padding: 6px 12px; margin: 4px 6px 0 0; border-radius: 6px; border: 1px solid var(--line); cursor: pointer; }
button.danger { color: var(--bad); border-color: var(--bad); }
input { font: inherit; padding: 6px; width: min(100%, 340px); }
ul { margin: 4px 0; padding-left: 20px; }
#message:empty { display: none; }
/* An answer to a control shows where the reader is, not at the top of a long page. */
#message { position: fixed; bottom: 12px; left: 12px; right: 12px; max-width: 1076px; margin: 0 auto; z-index: 10; padding: 8px 12px; border: 1px solid currentColor; border-radius: 6px; background: Canvas; }
`;

const SCRIPT = `
'use strict';
// Behind a reverse proxy the page may live under a sub-path (/stacker/): its API is asked for
// relative to the page, never at the site's root, where another application (or another stacker)
// would answer and take the controls. Opened without its closing slash (/stacker), the page's
// folder would be the root: it moves to the slash first.
var moving = !/\\/$/.test(location.pathname);
if (moving) location.replace(location.pathname + '/' + location.search + location.hash);
function api(path) { return path.slice(1); }
var TOKEN_KEY = 'stacker-control-token';
var state = { doc: null, token: sessionStorage.getItem(TOKEN_KEY) || '' };

function el(tag, attrs, children) {
  var node = document.createElement(tag);
  if (attrs) for (var name in attrs) {
    if (attrs[name] === null || attrs[name] === undefined) continue;
    if (name === 'text') node.textContent = String(attrs[name]);
    else if (name === 'onclick') node.addEventListener('click', attrs[name]);
    else node.setAttribute(name, String(attrs[name]));
  }
  (children || []).forEach(function (child) {
    if (child === null || child === undefined) return;
    node.appendChild(typeof child === 'string' ? document.createTextNode(child) : child);
  });
  return node;
}
function text(value) { return value === null || value === undefined || value === '' ? '-' : String(value); }
// A failed slot whose lost answer was found later: what became of it.
function settledText(slot) { return slot.settled ? '; since settled: ' + slot.settled + ' (its order was found after the answer was lost)' : ''; }
// The browser's own time, with its zone named: schedules and the journal read in UTC beside it.
function when(iso) { return iso ? new Date(iso).toLocaleString(undefined, { year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit', timeZoneName: 'short' }) : '-'; }
// A row is its cells, or { cells, class }; a cell is a value, a node, or { text, class } (a reason that wraps).
function table(headers, rows, numeric) {
  var head = el('tr', null, headers.map(function (h, i) { return el('th', { text: h, class: numeric && numeric[i] ? 'num' : null }); }));
  var body = rows.map(function (row) {
    var cells = Array.isArray(row) ? row : row.cells;
    return el('tr', Array.isArray(row) ? null : { class: row.class }, cells.map(function (cell, i) {
      var kind = numeric && numeric[i] ? 'num' : null;
      if (cell && cell.nodeType) return el('td', { class: kind }, [cell]);
      if (cell && typeof cell === 'object') return el('td', { text: text(cell.text), class: [kind, cell.class].filter(Boolean).join(' ') || null });
      return el('td', { text: text(cell), class: kind });
    }));
  });
  return el('div', { class: 'scroll' }, [el('table', null, [el('thead', null, [head]), el('tbody', null, body)])]);
}
// How a slot ended, as a badge: a failure red, a skip or a refusal (a "done" slot whose buy was refused) amber.
function slotBadge(slot) {
  var tone = slot.settled === 'done' || (slot.status === 'done' && !/refused/.test(slot.reason || '')) ? 'ok' : slot.status === 'failed' ? 'bad' : 'warn';
  return el('span', { class: 'badge ' + tone, 'data-tone': tone, text: slot.status + (slot.settled ? ', settled: ' + slot.settled : '') });
}
function say(message, bad) {
  var box = document.getElementById('message');
  box.textContent = message;
  box.className = bad ? 'bad' : 'ok';
}

function control(path, body) {
  return fetch(api(path), {
    method: 'POST',
    headers: { 'Authorization': 'Bearer ' + state.token, 'Content-Type': 'application/json' },
    body: body === undefined ? '{}' : JSON.stringify(body),
    cache: 'no-store',
  }).then(function (response) {
    return response.json().catch(function () { return {}; }).then(function (answer) {
      var notDone = Array.isArray(answer.notDone) ? answer.notDone : [];
      if (response.ok && notDone.length > 0) {
        // The slot ran, but a buy was refused or the strategy declined: not a plain "done".
        say(path + ': ' + (answer.outcome || 'done') + ', but ' + notDone.map(function (item) {
          return item.kind + ' ' + item.status + (item.code ? ' (' + item.code + (item.message ? ': ' + item.message : '') + ')' : '');
        }).join('; '), true);
      }
      else if (response.ok && answer.reason) say(path + ': ' + (answer.outcome || 'done') + ': ' + answer.reason, answer.outcome !== 'already');
      else if (response.ok) say(path + ': done' + (answer.outcome ? ' (' + answer.outcome + ')' : ''), false);
      else if (response.status === 401) {
        // Kept, a refused token would fail every later control until a reload: forget it and ask again.
        forgetToken();
        say(path + ': 401 ' + (answer.error || response.statusText) + ': the token was forgotten; type it again', true);
        document.getElementById('token').focus();
      }
      else say(path + ': ' + response.status + ' ' + (answer.error || response.statusText), true);
      return refresh();
    });
  }).catch(function (error) { say(path + ': ' + error.message, true); });
}

function forgetToken() {
  state.token = '';
  sessionStorage.removeItem(TOKEN_KEY);
  render();
}

function instancePath(name, action) { return '/api/instances/' + encodeURIComponent(name) + '/' + action; }

function renderInstance(instance, canControl) {
  var badges = [];
  if (!instance.enabled) badges.push(el('span', { class: 'badge warn', text: 'disabled' }));
  else if (instance.paused) badges.push(el('span', { class: 'badge warn', text: 'paused' }));
  else badges.push(el('span', { class: 'badge ok', text: 'active' }));
  if (instance.retrying) badges.push(el('span', { class: 'badge warn', text: 'slot retrying' }));
  else if (instance.running) badges.push(el('span', { class: 'badge', text: 'slot running' }));
  var last = instance.lastSlot;
  var parts = [
    el('h2', null, [instance.name + ' ', el('span', { class: 'muted', text: instance.strategy })]),
    el('div', { 'data-field': 'account' }, ['account ', el('code', { text: instance.account })]),
    el('div', null, badges),
    el('div', null, ['schedule ', el('code', { text: instance.schedule }), ' (' + instance.timezone + ')']),
    el('div', { 'data-field': 'next-slot' }, ['next slot: ' + when(instance.nextSlot) + (instance.paused && instance.nextSlot ? ' (skipped while paused)' : '')]),
    el('div', { 'data-field': 'last-slot' }, last ? ['last slot: ' + when(last.slotTime) + ' ', slotBadge(last), (last.reason ? ' (' + last.reason + ')' : '') + settledText(last)] : ['last slot: none yet']),
  ];
  var retry = instance.retrying;
  if (retry) {
    parts.push(el('div', { 'data-field': 'retrying' }, [
      'slot ' + when(retry.slotTime) + ': nothing sent yet; ' + retry.attempts + ' attempt' + (retry.attempts === 1 ? '' : 's') + ' failed (' + retry.code + ': ' + retry.error + '); next try ' + when(retry.nextTry),
    ]));
  }
  if (instance.paused) parts.push(el('div', { class: 'muted', text: 'paused since ' + when(instance.paused.since) }));
  if (canControl) {
    var buttons = [];
    if (instance.paused) buttons.push(el('button', { 'data-action': 'resume', text: 'Resume', onclick: function () { control(instancePath(instance.name, 'resume')); } }));
    else buttons.push(el('button', { 'data-action': 'pause', text: 'Pause', onclick: function () { control(instancePath(instance.name, 'pause')); } }));
    if (instance.enabled && !instance.paused) buttons.push(el('button', { 'data-action': 'run', text: 'Run a slot now', onclick: function () {
      if (confirm('Run a slot of ' + instance.name + ' now? It may place an order.')) control(instancePath(instance.name, 'run'));
    } }));
    parts.push(el('div', null, buttons));
  }
  if (instance.budget) {
    parts.push(el('h3', { text: 'Budget (' + instance.budget.asset + ')' }));
    parts.push(table(['period', 'since', 'limit', 'used', 'left'], instance.budget.periods.map(function (p) { return [p.period, when(p.periodStart), p.limit, usedText(p), leftText(p)]; }), [false, false, true, true, true]));
  }
  if (instance.recentSlots.length > 0) {
    parts.push(el('h3', { text: 'Recent slots' }));
    parts.push(table(['slot', 'status', 'reason'], instance.recentSlots.map(function (s) { return [when(s.slotTime), slotBadge(s), { text: s.reason, class: 'wrap' }]; })));
  }
  if (instance.recentOrders.length > 0) {
    parts.push(el('h3', { text: 'Recent orders' }));
    var rows = [];
    // Newest first by when each was placed (an order found late is not the newest).
    instance.recentOrders.slice().sort(function (a, b) { return a.createdAt < b.createdAt ? 1 : a.createdAt > b.createdAt ? -1 : 0; }).forEach(function (o) {
      rows.push([when(o.createdAt), o.market, o.side, o.status, o.amount, o.filledBase, o.filledQuote, o.fee + (o.feeAsset ? ' ' + o.feeAsset : ''), o.orderId]);
      o.transitions.forEach(function (t) {
        rows.push({ class: 'transition', cells: [when(t.at), '', '', (t.from || 'new') + ' \\u2192 ' + t.to, '', t.filledBase, t.filledQuote, t.fee, ''] });
      });
    });
    parts.push(table(['time', 'market', 'side', 'status', 'amount', 'filled base', 'filled quote', 'fee', 'order'], rows, [false, false, false, false, true, true, true, true, false]));
  }
  return el('article', { 'data-instance': instance.name }, parts);
}

function render() {
  var doc = state.doc;
  var root = document.getElementById('status');
  if (!doc) return;
  var canControl = doc.controls.enabled && state.token !== '';
  var health = doc.health;
  var healthClass = health.status === 'ok' ? 'ok' : 'bad';
  var sections = [];
  sections.push(el('section', { id: 'health' }, [
    el('h2', null, ['Health ', el('span', { class: 'badge ' + healthClass, text: health.status })]),
    health.problems.length === 0 ? el('div', { class: 'muted', text: 'no problems' }) : el('ul', null, health.problems.map(function (p) { return el('li', { class: 'bad', text: p }); })),
  ]));
  var kill = doc.killSwitch;
  var killParts = [el('h2', null, ['Kill switch ', el('span', { class: 'badge ' + (kill.on ? 'bad' : 'ok'), text: kill.on ? 'on' : 'off' })])];
  if (kill.on) killParts.push(el('ul', null, kill.reasons.map(function (r) { return el('li', { text: r }); })));
  else killParts.push(el('div', { class: 'muted', text: 'orders, transfers and withdrawals are sent' }));
  if (canControl) {
    if (kill.operatorSince) killParts.push(el('button', { 'data-action': 'kill-switch-off', text: 'Turn the kill switch off', onclick: function () { control('/api/kill-switch', { on: false }); } }));
    else killParts.push(el('button', { class: 'danger', 'data-action': 'kill-switch-on', text: 'Stop trading (kill switch on)', onclick: function () {
      if (confirm('Turn the kill switch on? Nothing that moves money is sent until it is turned off.')) control('/api/kill-switch', { on: true });
    } }));
  }
  sections.push(el('section', { id: 'kill-switch' }, killParts));
  // Absent while the journal could not be read since the page opened: only what the daemon knows without it is shown.
  if (doc.instances) sections.push(el('div', { id: 'instances' }, doc.instances.map(function (i) { return renderInstance(i, canControl); })));
  if (doc.notRunning && doc.notRunning.length > 0) {
    sections.push(el('section', { id: 'not-running' }, [
      el('h2', { text: 'Not running, with spending or open intents (as at start)' }),
      table(['instance', 'why', 'file', 'spent this period', 'unresolved'], doc.notRunning.map(function (n) {
        return [n.name, n.state === 'disabled' ? 'ENABLED=false' : 'no file', n.file, n.spent.map(function (p) { return p.period + ' from ' + p.from + ': ' + p.amount + ' ' + p.asset; }).join('; ') || '-', n.unresolved];
      }), [false, false, false, false, true]),
      el('div', { class: 'muted' }, doc.notRunning.map(function (n) { return el('p', { text: n.message }); })),
    ]));
  }
  if (doc.accounts && (doc.accounts.length > 1 || doc.accounts.some(function (a) { return a.cap || a.killSwitch.on || a.exchangeDown; }))) {
    var accountParts = [el('h2', { text: 'Accounts' }), table(['account', 'instances', 'kill switch', 'cap: spent / limit, left', 'exchange'], doc.accounts.map(function (a) {
      var cap = a.cap ? a.cap.periods.map(function (p) { return p.period + ': ' + p.spent + ' / ' + p.limit + ' ' + a.cap.asset + ', ' + leftText(p) + ' left'; }).join('; ') + ' (' + a.capTimeZone + ')' : 'none';
      var exchange = a.exchangeDown ? 'no usable answer since ' + when(a.exchangeDown.since) + ' (' + a.exchangeDown.lastError + ')' : 'answers';
      return [a.name, a.instances.join(', '), a.killSwitch.on ? 'on since ' + when(a.killSwitch.since) : 'off', cap, exchange];
    }), [false, false, false, false, false])];
    if (canControl) {
      accountParts.push(el('div', null, doc.accounts.map(function (a) {
        var path = '/api/accounts/' + encodeURIComponent(a.name) + '/kill-switch';
        if (a.killSwitch.on) return el('button', { 'data-action': 'account-kill-switch-off', 'data-account': a.name, text: 'Let ' + a.name + ' trade again', onclick: function () { control(path, { on: false }); } });
        return el('button', { class: 'danger', 'data-action': 'account-kill-switch-on', 'data-account': a.name, text: 'Stop trading on ' + a.name, onclick: function () {
          if (confirm('Stop trading on account ' + a.name + '? Nothing of its instances that moves money is sent until it is turned off; the other accounts trade on.')) control(path, { on: true });
        } });
      })));
    }
    sections.push(el('section', { id: 'accounts' }, accountParts));
  }
  if (doc.markets) {
    var marketParts = [el('h2', { text: 'Cost basis and P&L' })];
    if (doc.markets.length === 0) marketParts.push(el('div', { class: 'muted', text: 'nothing bought yet' }));
    else marketParts.push(table(['market', 'orders', 'bought', 'spent (fees out)', 'avg cost (fees in)', 'price', 'value', 'P&L', 'P&L %'], doc.markets.map(function (m) {
      return [m.market, m.orders, m.baseBought, m.quoteSpent, m.averageCost, m.price, m.value, m.pnl, m.pnlPct];
    }), [false, true, true, true, true, true, true, true, true]));
    if (doc.pricesNote) marketParts.push(el('div', { class: 'muted', text: doc.pricesNote }));
    sections.push(el('section', { id: 'markets' }, marketParts));
  }
  // Rebuilt every few seconds: keep where the reader was (the button focused, each table scrolled sideways).
  var focused = document.activeElement;
  var focusKey = focused && focused.closest && focused.closest('[data-instance], section[id]') && focused.getAttribute('data-action')
    ? [focused.closest('[data-instance], section[id]').getAttribute('data-instance') || focused.closest('section[id]').id, focused.getAttribute('data-action'), focused.getAttribute('data-account') || ''] : null;
  var scrolled = Array.prototype.map.call(root.querySelectorAll('.scroll'), function (box) { return box.scrollLeft; });
  root.replaceChildren.apply(root, sections);
  Array.prototype.forEach.call(root.querySelectorAll('.scroll'), function (box, i) { if (scrolled[i]) box.scrollLeft = scrolled[i]; });
  if (focusKey) {
    var again = Array.prototype.find.call(root.querySelectorAll('[data-action]'), function (b) {
      var holder = b.closest('[data-instance], section[id]');
      return holder && (holder.getAttribute('data-instance') || holder.id) === focusKey[0] && b.getAttribute('data-action') === focusKey[1] && (b.getAttribute('data-account') || '') === focusKey[2];
    });
    if (again) again.focus();
  }
  document.getElementById('summary').textContent = doc.mode + ' \\u00b7 stacker ' + doc.version + ' \\u00b7 started ' + when(doc.startedAt) + ' \\u00b7 updated ' + when(doc.generatedAt);
  document.getElementById('controls-off').hidden = doc.controls.enabled;
  document.getElementById('token-form').hidden = !doc.controls.enabled;
}

// What a period used, and how much of it is held for buys not confirmed yet (their orders and the used figure then differ).
function usedText(p) {
  return p.held && p.held !== '0' ? p.spent + ' (' + p.held + ' held for buys not confirmed yet)' : p.spent;
}
// A period a fill took past its limit (reserved at the estimate, counted at the fill) says by how much.
function leftText(p) {
  return p.over && p.over !== '0' ? p.left + ' (' + p.over + ' over)' : p.left;
}

function refresh() {
  return fetch(api('/api/status'), { cache: 'no-store' }).then(function (response) {
    return response.json().catch(function () { return null; }).then(function (body) {
      if (response.ok && body) return { doc: body, note: null };
      // stacker answers, but its journal cannot be read: health and the kill switch are current, the rest is what was last read.
      if (body && body.error === 'journal-unreadable') return { doc: Object.assign({}, state.doc || {}, body), note: body.message + (state.doc ? '; the rest of the page is the last state read' : '') };
      // Not found: the page's own folder has no API, so what serves the page is not stacker's status server as it is (a proxy rewriting paths?).
      if (response.status === 404) {
        var asked = document.createElement('a');
        asked.href = api('/api/status');
        throw new Error(asked.pathname + ' was not found (404): does the proxy in front pass the folder of this page to the root of stacker?');
      }
      throw new Error('status ' + response.status);
    });
  }).then(function (got) {
    state.doc = got.doc;
    var offline = document.getElementById('offline');
    offline.textContent = got.note || '';
    offline.hidden = !got.note;
    render();
  }).catch(function (error) {
    var offline = document.getElementById('offline');
    offline.textContent = 'no status from stacker (' + error.message + '); showing the last state read';
    offline.hidden = false;
  });
}

document.getElementById('token-form').addEventListener('submit', function (event) {
  event.preventDefault();
  var input = document.getElementById('token');
  state.token = input.value.trim();
  input.value = '';
  if (state.token === '') sessionStorage.removeItem(TOKEN_KEY);
  else sessionStorage.setItem(TOKEN_KEY, state.token);
  say(state.token === '' ? 'token forgotten' : 'token kept for this tab', false);
  render();
});
document.getElementById('forget').addEventListener('click', function () {
  forgetToken();
  say('token forgotten', false);
});
if (!moving) {
  refresh();
  setInterval(refresh, ${STATUS_REFRESH_MS});
}
`;

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>stacker status</title>
<style>${STYLE}</style>
</head>
<body>
<h1>stacker</h1>
<div id="summary" class="muted">loading…</div>
<noscript><p>This page needs JavaScript; the same state is at <a href="api/status">api/status</a>.</p></noscript>
<p id="offline" class="bad" hidden></p>
<p id="message" role="status"></p>
<p id="controls-off" class="muted" hidden>Controls are off: set STACKER_CONTROL_TOKEN and restart stacker to pause, resume or run instances from here.</p>
<form id="token-form" hidden autocomplete="off">
<label for="token">Control token</label><br>
<input id="token" type="password" autocomplete="off" spellcheck="false" placeholder="STACKER_CONTROL_TOKEN">
<button type="submit">Use token</button><button type="button" id="forget">Forget</button>
<div class="muted">Kept in this tab only (sessionStorage), sent as an Authorization header; never a cookie.</div>
</form>
<div id="status"></div>
<script>${SCRIPT}</script>
</body>
</html>
`;

const SCRIPT_HASH = createHash('sha256').update(SCRIPT, 'utf8').digest('base64');

/** Headers of the page: its one inline script by hash, same-origin requests only, no framing, no referrer. */
export const STATUS_PAGE_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy': `default-src 'none'; script-src 'sha256-${SCRIPT_HASH}'; style-src 'unsafe-inline'; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`,
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
};

export function statusPage(): string {
  return PAGE;
}
