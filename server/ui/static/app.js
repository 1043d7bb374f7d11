// forge console: reads and acts through forge serve's public HTTP API only. Every stored text
// (code, contracts, reasons, names) reaches the page through textContent, never as HTML.
'use strict';

const TOKEN_KEY = 'forge-admin-token';
const PAGE = 100;
const state = { sort: 'name', desc: false, q: '', lifecycle: '', offset: 0, view: null };

// ---- small DOM helpers ----------------------------------------------------------------------
function el(tag, attrs, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'class') e.className = v;
    else if (k === 'text') e.textContent = v;
    else if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v === true ? '' : v);
  }
  for (const k of kids.flat()) {
    if (k === null || k === undefined || k === false) continue;
    e.append(k instanceof Node ? k : document.createTextNode(String(k)));
  }
  return e;
}
const $ = (sel) => document.querySelector(sel);
// add appends kids to parent as el does: an absent kid (null, false) is skipped, not "null".
function add(parent, ...kids) { parent.append(...kids.flat().filter((k) => k !== null && k !== undefined && k !== false)); return parent; }
function svg(tag, attrs) {
  const e = document.createElementNS('http://www.w3.org/2000/svg', tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  return e;
}
const pct = (x) => (x * 100).toFixed(x > 0 && x < 0.01 ? 2 : 1) + '%';
const num = (n) => (n || 0).toLocaleString('en-US');
function ago(t) {
  if (!t) return 'never';
  const s = (Date.now() - new Date(t).getTime()) / 1000;
  if (s < 60) return Math.max(0, Math.round(s)) + ' s ago';
  if (s < 3600) return Math.round(s / 60) + ' min ago';
  if (s < 86400) return Math.round(s / 3600) + ' h ago';
  return Math.round(s / 86400) + ' d ago';
}
const esc = encodeURIComponent;
function lcBadge(lc) { return el('span', { class: 'lc lc-' + (lc || 'unreadable'), text: lc || 'unreadable' }); }
function message(kind, text) { return el('div', { class: 'msg ' + kind, role: kind === 'error' ? 'alert' : 'status', text }); }

// ---- the API --------------------------------------------------------------------------------
function token() { return sessionStorage.getItem(TOKEN_KEY) || ''; }
function headers(extra) {
  const h = Object.assign({}, extra);
  if (token()) h.Authorization = 'Bearer ' + token();
  return h;
}
async function api(path, opts) {
  opts = opts || {};
  const init = { method: opts.method || 'GET', headers: headers(opts.body !== undefined ? { 'Content-Type': 'application/json' } : {}) };
  if (opts.body !== undefined) init.body = opts.body;
  const r = await fetch(path, init);
  let body = null;
  try { body = await r.json(); } catch (_) { /* not JSON */ }
  if (!r.ok) {
    const m = body && body.error ? body.error.message : r.status + ' ' + r.statusText;
    const err = new Error(m || ('HTTP ' + r.status));
    err.status = r.status;
    throw err;
  }
  return body;
}

// ---- the admin token ------------------------------------------------------------------------
function showMode() {
  const m = $('#mode');
  if (token()) { m.textContent = 'operator'; m.className = 'mode admin'; }
  else { m.textContent = 'read-only'; m.className = 'mode'; }
  document.querySelectorAll('button[data-verb]').forEach((b) => { b.disabled = !token(); b.title = token() ? '' : 'read-only: enter the admin token to act'; });
}
function setupToken() {
  $('#tokenform').addEventListener('submit', (ev) => {
    ev.preventDefault();
    const v = $('#token').value.trim();
    if (v) sessionStorage.setItem(TOKEN_KEY, v); else sessionStorage.removeItem(TOKEN_KEY);
    $('#token').value = '';
    showMode();
    restartStream();
  });
  $('#tokenclear').addEventListener('click', () => { sessionStorage.removeItem(TOKEN_KEY); showMode(); restartStream(); });
  showMode();
}

// ---- operator actions -----------------------------------------------------------------------
// What each verb changes, said in the confirmation before it is sent.
const VERBS = {
  bless: (a) => `${a.name} (${a.gen}, ${a.lc}) becomes blessed: pinned by an operator, always executed and never replaced automatically, until it is quarantined or rolled back.`,
  quarantine: (a) => `${a.name} (${a.gen}, ${a.lc}) becomes quarantined: every call to it is refused until an operator lifts the quarantine, rolls it back or regenerates it.`,
  lift: (a) => `The quarantine of ${a.name} is lifted if the gate passes ${a.gen} again: it then becomes a candidate and is called again.`,
  rollback: (a) => `${a.name} goes back to ${a.target || 'the generation before ' + a.gen}: that code becomes current again as a new generation; ${a.gen} stays in the lineage.`,
  regen: (a) => `A model writes new code for ${a.name} from its contract now (this costs model calls). It replaces ${a.gen} only if it passes the gate and answers the sample of real calls as ${a.gen} did.`,
  restore: (a) => `The damaged file ${a.name} is put back in the store (or its hand edit is taken over), and the quarantine entry is resolved.`,
  dismiss: (a) => `The quarantine entry ${a.name} is resolved and the store stays as it is: the set-aside file is not put back.`,
};
function confirmAction(verb, what) {
  return new Promise((resolve) => {
    const d = $('#confirm');
    $('#confirm-title').textContent = verb.charAt(0).toUpperCase() + verb.slice(1) + ' ' + what.name + '?';
    $('#confirm-what').textContent = VERBS[verb](what);
    $('#confirm-ok').textContent = verb.charAt(0).toUpperCase() + verb.slice(1);
    const done = (v) => { d.close(); cleanup(); resolve(v); };
    const ok = () => done(true), cancel = () => done(false), esc = (e) => { e.preventDefault(); done(false); };
    function cleanup() { $('#confirm-ok').removeEventListener('click', ok); $('#confirm-cancel').removeEventListener('click', cancel); d.removeEventListener('cancel', esc); }
    $('#confirm-ok').addEventListener('click', ok);
    $('#confirm-cancel').addEventListener('click', cancel);
    d.addEventListener('cancel', esc);
    d.showModal();
    $('#confirm-cancel').focus();
  });
}
// act sends a verb after its confirmation and shows the result in out. A verb that was done
// re-renders the page (after): its message stays shown on the new page for a while.
let lastResult = null;
async function act(verb, path, what, out, after) {
  if (!(await confirmAction(verb, what))) return;
  out.replaceChildren(message('', verb + ': sending…'));
  try {
    const r = await api(path, { method: 'POST', body: '' });
    let text = verb + ' done';
    if (r && r.artifact) text += ': ' + r.artifact.lifecycle + ', gen-' + r.artifact.generation;
    else if (r && r.ok === false && r.error) throw new Error(r.error.message);
    lastResult = { kind: 'ok', text, until: Date.now() + 15000 };
    out.replaceChildren(message('ok', text));
    if (after) after();
  } catch (e) {
    const hint = e.status === 401 || e.status === 403 ? ' (the server refused the admin token: check it)' : '';
    out.replaceChildren(message('error', verb + ' refused: ' + e.message + hint));
  }
}
// resultBox is the element a page shows its operator action's result in.
function resultBox() {
  const out = el('div', { id: 'actionresult', 'aria-live': 'polite' });
  if (lastResult && lastResult.until > Date.now()) out.append(message(lastResult.kind, lastResult.text));
  return out;
}
function verbButton(verb, label, onclick) {
  const b = el('button', { type: 'button', 'data-verb': verb, onclick }, label);
  b.disabled = !token();
  if (!token()) b.title = 'read-only: enter the admin token to act';
  if (verb === 'quarantine' || verb === 'dismiss') b.classList.add('danger');
  return b;
}

// ---- reuse economics ------------------------------------------------------------------------
let econTimer = 0, econLast = 0;
function refreshEconomics(soon) {
  const wait = soon ? Math.max(0, 5000 - (Date.now() - econLast)) : 0;
  if (econTimer) return;
  econTimer = setTimeout(async () => {
    econTimer = 0; econLast = Date.now();
    try {
      const st = await api('/v1/stats');
      const o = st.overall || {};
      const fig = (v, label) => el('div', { class: 'figure' }, el('b', { text: v }), el('span', { text: label }));
      $('#economics').replaceChildren(
        fig(num(o.calls), 'calls'),
        fig(pct(o.reuse_hit_rate || 0), 'served by stored code'),
        fig((o.model_calls_per_1000 || 0).toFixed(1), 'model calls per 1,000 calls'),
        fig(o.repairs_attempted ? pct(o.repair_success_rate) + ' of ' + num(o.repairs_attempted) : '—', 'repair success'),
        fig(num(o.tokens_saved_estimate), 'tokens saved (est.)'),
        fig(num(o.provider_calls), 'model calls'),
        fig(num(o.operator_actions), 'operator actions'));
    } catch (e) {
      $('#economics').replaceChildren(message('error', 'stats: ' + e.message));
    }
  }, wait);
}

// ---- live events (Server-Sent Events read with fetch, so that the token can be sent) ---------
// sse reads the Server-Sent Events of path until its controller is aborted, reconnecting with a
// backoff: each event goes to onEvent, the connection's state ('on', 'off', an error) to onState.
function sse(path, onEvent, onState) {
  const ctl = new AbortController();
  (async () => {
    let backoff = 500;
    while (!ctl.signal.aborted) {
      try {
        const r = await fetch(path, { headers: headers({ Accept: 'text/event-stream' }), signal: ctl.signal });
        if (!r.ok) {
          let m = r.status + ' ' + r.statusText;
          try { m = (await r.json()).error.message; } catch (_) { /* not JSON */ }
          throw new Error(m);
        }
        onState('on');
        backoff = 500;
        const reader = r.body.getReader();
        const dec = new TextDecoder();
        let buf = '';
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          buf += dec.decode(value, { stream: true });
          let i;
          while ((i = buf.indexOf('\n\n')) >= 0) {
            const chunk = buf.slice(0, i); buf = buf.slice(i + 2);
            let data = '';
            for (const line of chunk.split('\n')) if (line.startsWith('data: ')) data += line.slice(6);
            if (!data) continue;
            let ev; try { ev = JSON.parse(data); } catch (_) { continue; }
            onEvent(ev);
          }
        }
        onState('off');
      } catch (e) {
        if (ctl.signal.aborted) return;
        onState(e.message);
      }
      await new Promise((res) => setTimeout(res, backoff));
      backoff = Math.min(backoff * 2, 10000);
    }
  })();
  return ctl;
}

// The page's own stream: every event, to the listeners of the page shown.
let stream = null;
const listeners = new Set();
function restartStream() {
  if (stream) stream.abort();
  stream = sse('/v1/events', (ev) => { for (const fn of listeners) fn(ev); }, (st) => {
    document.body.dataset.live = st === 'on' ? 'on' : 'off';
    $('#live').textContent = st === 'on' ? 'live: connected' : 'live: reconnecting (' + st + ')';
  });
}
// pageStreams are streams a page opened for itself; leaving the page ends them.
const pageStreams = new Set();
function eventName(ev) {
  if (ev.call) return ev.call.role + '.' + ev.call.method;
  if (ev.artifact) return ev.artifact.role + '.' + ev.artifact.method;
  if (ev.generation) return ev.generation.role + '.' + ev.generation.method;
  return ev.role || '';
}
function describeEvent(ev) {
  if (ev.artifact) {
    const a = ev.artifact;
    if (a.removed) return 'removed';
    let s = (a.previous_lifecycle && a.previous_lifecycle !== a.lifecycle ? a.previous_lifecycle + ' → ' : '') + (a.lifecycle || '');
    if (a.previous_generation && a.previous_generation !== a.generation) s += ', gen-' + a.previous_generation + ' → gen-' + a.generation;
    else if (a.generation) s += ', gen-' + a.generation;
    return s + (a.error ? ' (' + a.error + ')' : '');
  }
  if (ev.call) {
    const c = ev.call;
    if (c.reason === 'operator') return 'operator ' + c.action + (c.who ? ' by ' + c.who : '') + (c.detail ? ': ' + c.detail : '');
    const n = c.kind === 'aggregate' ? c.count + ' calls ' : '';
    return n + (c.ok ? 'ok' : 'failed ' + c.failure_class + '/' + c.failure_rule) + (c.program_source ? ' (' + c.program_source + ')' : '');
  }
  if (ev.generation) return 'generation: ' + (ev.generation.step || ev.generation.stage || '');
  return ev.kind;
}

// ---- router ---------------------------------------------------------------------------------
function route() {
  listeners.clear();
  for (const c of pageStreams) c.abort();
  pageStreams.clear();
  listeners.add(onAnyEvent);
  const h = location.hash.replace(/^#/, '') || '/';
  const parts = h.split('/').filter(Boolean).map(decodeURIComponent);
  let nav = 'artifacts';
  if (parts[0] === 'a' && parts.length >= 3) { nav = ''; viewArtifact(parts[1], parts[2]); }
  else if (parts[0] === 'events') { nav = 'events'; viewEvents(); }
  else if (parts[0] === 'quarantine') { nav = 'quarantine'; viewQuarantine(); }
  else viewTable();
  document.querySelectorAll('[data-nav]').forEach((a) => { if (a.dataset.nav === nav) a.setAttribute('aria-current', 'page'); else a.removeAttribute('aria-current'); });
}
function onAnyEvent(ev) {
  $('#live').textContent = 'live: ' + eventName(ev) + ' ' + describeEvent(ev) + ' (' + new Date(ev.time || Date.now()).toLocaleTimeString() + ')';
  if (ev.call || ev.artifact) refreshEconomics(true);
  if (ev.artifact) refreshQueueCount();
}
async function refreshQueueCount() {
  try {
    const p = await api('/v1/artifact-table?limit=1&lifecycle=quarantined');
    let n = p.total;
    try { n += (await api('/v1/quarantine')).length; } catch (_) { /* a backend without it */ }
    $('#qcount').textContent = n ? '(' + n + ')' : '';
  } catch (_) { /* shown elsewhere */ }
}

// ---- the artifact table ---------------------------------------------------------------------
const COLUMNS = [
  ['name', 'Artifact'], ['lifecycle', 'Lifecycle'], ['generation', 'Gen', 'num'], ['calls', 'Calls', 'num'],
  ['failure_rate', 'Failure rate', 'num'], ['last_failure_class', 'Last failure'], ['last_used', 'Last used'],
];
function tableQuery() {
  const p = new URLSearchParams({ sort: state.sort, offset: state.offset, limit: PAGE });
  if (state.desc) p.set('desc', '1');
  if (state.q) p.set('q', state.q);
  if (state.lifecycle) p.set('lifecycle', state.lifecycle);
  return '/v1/artifact-table?' + p;
}
function viewTable() {
  const main = $('#main');
  const search = el('input', { type: 'search', id: 'search', placeholder: 'role.method', 'aria-label': 'Filter by role.method', value: state.q });
  const lcSel = el('select', { id: 'lcfilter', 'aria-label': 'Filter by lifecycle' },
    ['', 'candidate', 'durable', 'blessed', 'degraded', 'quarantined', 'archived', 'unreadable'].map((v) => el('option', { value: v, selected: v === state.lifecycle }, v || 'any lifecycle')));
  const summary = el('span', { id: 'tablesummary', class: 'muted', role: 'status' });
  const body = el('tbody', { id: 'rows' });
  const head = el('tr', {}, COLUMNS.map(([key, label, cls]) => {
    const sorted = state.sort === key;
    return el('th', { class: cls, scope: 'col', 'aria-sort': sorted ? (state.desc ? 'descending' : 'ascending') : 'none' },
      el('button', { type: 'button', 'data-sort': key, onclick: () => {
        if (state.sort === key) state.desc = !state.desc; else { state.sort = key; state.desc = key !== 'name' && key !== 'lifecycle'; }
        state.offset = 0; viewTable();
      } }, label + (sorted ? (state.desc ? ' ▼' : ' ▲') : '')));
  }));
  const prev = el('button', { type: 'button', id: 'prev', onclick: () => { state.offset = Math.max(0, state.offset - PAGE); load(); } }, '← Previous');
  const next = el('button', { type: 'button', id: 'next', onclick: () => { state.offset += PAGE; load(); } }, 'Next →');
  const pageInfo = el('span', { id: 'pageinfo', class: 'muted' });
  main.replaceChildren(el('h2', { text: 'Artifacts' }),
    el('div', { class: 'toolbar' }, search, lcSel, summary),
    el('table', { id: 'artifacts' }, el('thead', {}, head), body),
    el('div', { class: 'pager' }, prev, pageInfo, next));
  let t = 0;
  search.addEventListener('input', () => { clearTimeout(t); t = setTimeout(() => { state.q = search.value.trim(); state.offset = 0; load(); }, 200); });
  lcSel.addEventListener('change', () => { state.lifecycle = lcSel.value; state.offset = 0; load(); });
  body.addEventListener('keydown', (e) => { // arrow keys move between rows' links
    if (e.key !== 'ArrowDown' && e.key !== 'ArrowUp') return;
    const links = [...body.querySelectorAll('a')];
    const i = links.indexOf(document.activeElement);
    if (i < 0) return;
    e.preventDefault();
    const n = links[i + (e.key === 'ArrowDown' ? 1 : -1)];
    if (n) n.focus();
  });
  let seq = 0;
  async function load(flash) {
    const my = ++seq;
    try {
      const p = await api(tableQuery());
      if (my !== seq) return;
      renderRows(body, p.rows, flash);
      const lcs = Object.entries(p.lifecycles || {}).sort().map(([k, v]) => k + ' ' + num(v)).join(' · ');
      summary.textContent = num(p.total) + ' of ' + num(p.all) + ' artifacts' + (lcs ? ' — ' + lcs : '');
      pageInfo.textContent = p.total ? (p.offset + 1) + '–' + (p.offset + p.rows.length) + ' of ' + num(p.total) : 'no artifacts';
      prev.disabled = p.offset === 0;
      next.disabled = p.offset + p.rows.length >= p.total;
      if (!window.__forgeTableReady) window.__forgeTableReady = performance.now();
      document.body.dataset.tableLoaded = String(Date.now());
    } catch (e) {
      body.replaceChildren(el('tr', {}, el('td', { colspan: COLUMNS.length }, message('error', 'the artifact table: ' + e.message))));
    }
  }
  // Live: a change to an artifact reloads the page of the table at once; calls, whose counters
  // reach the store's files at the recorder's interval anyway, at most every 5 s.
  let pending = null, pendingFast = false, changed = new Set();
  listeners.add((ev) => {
    if (!ev.artifact && !(ev.call && ev.call.reason !== 'operator')) return;
    changed.add(eventName(ev));
    const fast = !!ev.artifact;
    if (pending && (pendingFast || !fast)) return;
    clearTimeout(pending);
    pendingFast = fast;
    pending = setTimeout(() => { pending = null; const c = changed; changed = new Set(); load(c); }, fast ? 50 : 5000);
  });
  load();
}
function renderRows(body, rows, flash) {
  body.replaceChildren(...rows.map((r) => {
    const name = r.role + '.' + r.method;
    const fail = r.last_failure_class ? el('span', { class: 'bad' }, r.last_failure_class, r.last_failure_reason ? ': ' + r.last_failure_reason.slice(0, 120) : '') : el('span', { class: 'muted', text: '—' });
    const tr = el('tr', { 'data-artifact': name, 'data-lifecycle': r.error ? 'unreadable' : r.lifecycle },
      el('td', {}, el('a', { href: '#/a/' + esc(r.role) + '/' + esc(r.method) }, name), r.contract_current || r.error ? null : el('span', { class: 'muted', title: 'verified against an older contract: its next call repairs it' }, ' (stale)')),
      el('td', {}, lcBadge(r.error ? '' : r.lifecycle), r.error ? el('span', { class: 'bad' }, ' ' + r.error) : null),
      el('td', { class: 'num', text: r.generation ? 'gen-' + r.generation : '' }),
      el('td', { class: 'num', text: num(r.calls) }),
      el('td', { class: 'num' + (r.failure_rate > 0 ? ' bad' : ''), text: r.calls ? pct(r.failure_rate) : '—' }),
      el('td', {}, fail),
      el('td', { title: r.last_used || '' , text: ago(r.last_used) }));
    if (flash && flash.has(name)) tr.classList.add('flash');
    return tr;
  }));
}

// ---- Go highlighting on text: tokens become spans whose textContent is the token ------------
const GO_KW = new Set('break case chan const continue default defer else fallthrough for func go goto if import interface map package range return select struct switch type var'.split(' '));
const GO_TYPES = new Set('bool byte error float32 float64 int int8 int16 int32 int64 rune string uint uint8 uint16 uint32 uint64 uintptr any nil true false iota'.split(' '));
const GO_TOKEN = /(\/\/[^\n]*|\/\*[\s\S]*?\*\/)|("(?:[^"\\\n]|\\.)*"|`[^`]*`|'(?:[^'\\\n]|\\.)*')|(\b\d[\d_]*(?:\.\d+)?(?:[eE][+-]?\d+)?\b|\b0[xX][\da-fA-F_]+\b)|([A-Za-z_]\w*)/g;
function highlight(code) {
  const out = [];
  let last = 0, m;
  GO_TOKEN.lastIndex = 0;
  while ((m = GO_TOKEN.exec(code))) {
    if (m.index > last) out.push(document.createTextNode(code.slice(last, m.index)));
    let cls = null;
    if (m[1]) cls = 'com'; else if (m[2]) cls = 'str'; else if (m[3]) cls = 'num';
    else if (GO_KW.has(m[4])) cls = 'kw'; else if (GO_TYPES.has(m[4])) cls = 'num';
    out.push(cls ? el('span', { class: cls, text: m[0] }) : document.createTextNode(m[0]));
    last = m.index + m[0].length;
  }
  if (last < code.length) out.push(document.createTextNode(code.slice(last)));
  return out;
}

// ---- line diff (longest common subsequence) -------------------------------------------------
function lineDiff(a, b) {
  const x = a.split('\n'), y = b.split('\n');
  const n = x.length, m = y.length;
  if (n * m > 4e6) return [['del', a], ['add', b]]; // too large to align: the whole of each
  const L = Array.from({ length: n + 1 }, () => new Uint32Array(m + 1));
  for (let i = n - 1; i >= 0; i--) for (let j = m - 1; j >= 0; j--) L[i][j] = x[i] === y[j] ? L[i + 1][j + 1] + 1 : Math.max(L[i + 1][j], L[i][j + 1]);
  const out = [];
  let i = 0, j = 0;
  while (i < n && j < m) {
    if (x[i] === y[j]) { out.push(['same', x[i]]); i++; j++; }
    else if (L[i + 1][j] >= L[i][j + 1]) out.push(['del', x[i++]]);
    else out.push(['add', y[j++]]);
  }
  while (i < n) out.push(['del', x[i++]]);
  while (j < m) out.push(['add', y[j++]]);
  return out;
}
function renderDiff(from, to) {
  const lines = lineDiff(from.code || '', to.code || '');
  const adds = lines.filter((l) => l[0] === 'add').length, dels = lines.filter((l) => l[0] === 'del').length;
  return [
    el('p', { class: 'muted', id: 'diffsummary', text: from.id + ' → ' + to.id + ': +' + adds + ' −' + dels + ' lines' }),
    el('pre', { class: 'code diff', id: 'diff', 'aria-label': 'Code diff from ' + from.id + ' to ' + to.id },
      lines.map(([k, t]) => el('span', { class: k }, (k === 'add' ? '+ ' : k === 'del' ? '- ' : '  ') + t))),
  ];
}

// ---- the SVG chart of counters over time ----------------------------------------------------
function chart(act) {
  const W = 640, H = 140, P = 24;
  const tl = act.timeline || [];
  const max = Math.max(1, ...tl.map((p) => p.calls));
  const x = (i) => P + (tl.length <= 1 ? 0 : (i * (W - 2 * P)) / (tl.length - 1));
  const y = (v) => H - P - (v * (H - 2 * P)) / max;
  const line = (key, cls) => svg('polyline', { class: cls, points: tl.map((p, i) => x(i).toFixed(1) + ',' + y(p[key]).toFixed(1)).join(' ') });
  const s = svg('svg', { class: 'chart', viewBox: `0 0 ${W} ${H}`, role: 'img', 'aria-label': 'calls, failures and model calls over time' });
  const label = (t, xx, yy, anchor) => { const e = svg('text', { x: xx, y: yy, 'text-anchor': anchor || 'start' }); e.textContent = t; return e; };
  s.append(line('calls', 'calls'), line('failures', 'fails'), line('provider_calls', 'model'),
    label(num(max) + ' calls', 4, 12), label(new Date(act.from).toLocaleString(), P, H - 6), label('now', W - P, H - 6, 'end'));
  const total = (k) => tl.reduce((a, p) => a + p[k], 0);
  return [s, el('div', { class: 'legend' },
    el('span', { class: 'calls', text: '— calls ' + num(total('calls')) }),
    el('span', { class: 'fails', text: '— failures ' + num(total('failures')) }),
    el('span', { class: 'model', text: '- - model calls ' + num(total('provider_calls')) }),
    el('span', { class: 'muted', text: 'per ' + Math.round(act.step_ns / 6e10) + ' min' }))];
}

// ---- the artifact page ----------------------------------------------------------------------
// behaviour replays the artifact's sample of real calls on two generations (POST .../diff, the
// admin token: it runs code) and shows, as text, every input whose answer differs.
async function behaviour(base, from, to, box) {
  const gen = (id) => parseInt(String(id).replace(/^gen-/, ''), 10);
  box.replaceChildren(message('', 'replaying the sample on ' + from + ' and ' + to + '…'));
  try {
    const r = await api(base + '/diff', { method: 'POST', body: JSON.stringify({ from: gen(from), to: gen(to) }) });
    const b = r.behaviour || r;
    if (b.no_sample) { box.replaceChildren(message('', 'no behaviour diff: ' + b.no_sample)); return; }
    const head = 'behaviour ' + from + ' → ' + to + ': ' + b.sampled + ' sampled, ' + b.same + ' same, ' + b.changed + ' changed, ' +
      b.now_succeeds + ' now succeed, ' + b.now_fails + ' now fail';
    const ans = (v, e) => e ? 'error: ' + e : JSON.stringify(v);
    box.replaceChildren(message(b.changed || b.now_fails ? 'error' : 'ok', head),
      (b.diffs || []).length ? el('table', { id: 'behaviour' }, el('thead', {}, el('tr', {}, ['Kind', 'Input', from, to].map((h) => el('th', { scope: 'col', text: h })))),
        el('tbody', {}, b.diffs.map((d) => el('tr', {}, el('td', { text: d.kind }), el('td', {}, el('code', { text: JSON.stringify(d.args) })),
          el('td', {}, el('code', { text: ans(d.was, d.was_error) })), el('td', {}, el('code', { text: ans(d.now, d.now_error) })))))) : null);
  } catch (e) {
    const hint = e.status === 401 || e.status === 403 ? ' (the diff runs code: it needs the admin token)' : '';
    box.replaceChildren(message('error', 'behaviour diff refused: ' + e.message + hint));
  }
}

async function viewArtifact(role, method) {
  const main = $('#main');
  const name = role + '.' + method;
  main.replaceChildren(el('p', { class: 'muted', text: 'loading ' + name + '…' }));
  const base = '/v1/artifacts/' + esc(role) + '/' + esc(method);
  let a, rec, actv;
  try {
    [a, rec, actv] = await Promise.all([
      api(base),
      api('/v1/roles/' + esc(role)).catch(() => null),
      api(base + '/activity?since=24h&buckets=48&failures=20').catch(() => null),
    ]);
  } catch (e) {
    main.replaceChildren(el('p', {}, el('a', { href: '#/' }, '← Artifacts')), message('error', name + ': ' + e.message));
    return;
  }
  const gen = 'gen-' + a.generation;
  const out = resultBox();
  const what = { name, gen, lc: a.lifecycle };
  const reload = () => viewArtifact(role, method);
  const verb = (v, label, extra) => verbButton(v, label, () => act(v, '/v1/admin/' + v + '/' + esc(role) + '/' + esc(method) + (extra ? '?' + extra : ''), what, out, reload));
  const history = a.history || [];
  const hdr = el('div', {},
    el('p', {}, el('a', { href: '#/' }, '← Artifacts')),
    el('h2', { id: 'artifact-title' }, name + ' ', lcBadge(a.lifecycle), ' ', el('span', { class: 'muted', text: gen })),
    el('dl', { class: 'kv' },
      el('dt', { text: 'calls' }), el('dd', { text: num(a.success_count + a.failure_count) + ' (' + num(a.failure_count) + ' failed, recent failure rate ' + pct(a.recent_failure_rate || 0) + ')' }),
      el('dt', { text: 'last failure' }), el('dd', { class: a.last_failure_class ? 'bad' : 'muted', text: a.last_failure_class ? a.last_failure_class + ': ' + (a.last_failure_reason || '') : '—' }),
      el('dt', { text: 'last used' }), el('dd', { text: ago(a.last_used_at) }),
      el('dt', { text: 'model' }), el('dd', { text: a.model || '—' }),
      el('dt', { text: 'signature' }), el('dd', {}, el('code', { text: (a.signature && a.signature.decl) || '' }))),
    el('div', { class: 'actions', role: 'group', 'aria-label': 'Operator actions' },
      verb('bless', 'Bless'), verb('quarantine', 'Quarantine'), a.lifecycle === 'quarantined' ? verb('lift', 'Lift quarantine') : null,
      history.length > 1 ? verb('rollback', 'Roll back') : null, verb('regen', 'Regenerate')),
    out);

  // Contract: the role's purpose, this method's declaration and examples, as text.
  const contract = el('section', { 'aria-labelledby': 'h-contract' }, el('h3', { id: 'h-contract', text: 'Contract' }));
  if (rec) {
    const ex = ((rec.acceptance && rec.acceptance.examples) || []).filter((e) => e.method === method);
    add(contract, el('p', { text: rec.purpose || '' }),
      el('pre', { class: 'code', id: 'contract' }, highlight((rec.methods && rec.methods[method]) || '')),
      (rec.docs && rec.docs[method] && rec.docs[method].description) ? el('p', { text: rec.docs[method].description }) : null,
      ex.length ? el('ul', {}, ex.map((e) => el('li', {}, el('code', { text: JSON.stringify(e.args) + ' → ' + (e.expect !== undefined ? JSON.stringify(e.expect) : e.expect_error ? 'error' : '?') })))) : null,
      a.contract_fingerprint !== rec.contract_fingerprint ? message('error', 'this code was verified against an older contract: its next call repairs it') : null);
  } else contract.append(message('error', 'the role ' + role + ' is not in the store'));

  const code = el('section', { 'aria-labelledby': 'h-code' }, el('h3', { id: 'h-code', text: 'Current code (' + gen + ')' }),
    el('pre', { class: 'code', id: 'code', tabindex: '0' }, highlight(a.code || '')));

  // Lineage: every kept generation; the diff between any two (default: the previous → the current).
  const diffBox = el('div', { id: 'diffbox' });
  const behaviourBox = el('div', { id: 'behaviourbox', 'aria-live': 'polite' });
  const selFrom = el('select', { id: 'difffrom', 'aria-label': 'Diff from generation' }, history.map((g) => el('option', { value: g.id }, g.id)));
  const selTo = el('select', { id: 'diffto', 'aria-label': 'Diff to generation' }, history.map((g) => el('option', { value: g.id }, g.id)));
  const byId = Object.fromEntries(history.map((g) => [g.id, g]));
  function showDiff() { diffBox.replaceChildren(...renderDiff(byId[selFrom.value] || { id: '(none)', code: '' }, byId[selTo.value] || { id: '(none)', code: '' })); }
  if (history.length) { selTo.value = history[0].id; selFrom.value = (history[1] || history[0]).id; }
  selFrom.addEventListener('change', showDiff); selTo.addEventListener('change', showDiff);
  const lineage = el('section', { 'aria-labelledby': 'h-lineage' }, el('h3', { id: 'h-lineage', text: 'Lineage' }),
    el('ol', { class: 'lineage', id: 'lineage' }, history.map((g) => el('li', { class: g.id === gen ? 'current' : '' },
      g.id + ' — ' + g.trigger + ' — ' + new Date(g.created_at).toLocaleString() + (g.model ? ' — ' + g.model : ''),
      g.replay ? el('span', { class: 'muted' }, ' — replay: ' + g.replay.replayed + ' replayed, ' + g.replay.same + ' same' + (g.replay.changed ? ', ' + g.replay.changed + ' changed' + (g.replay.accepted ? ' (accepted)' : '') : '') + (g.replay.fixed ? ', ' + g.replay.fixed + ' fixed' : '')) : null,
      g.id !== gen ? [' ', verbButton('rollback', 'Roll back to ' + g.id, () => act('rollback', '/v1/admin/rollback/' + esc(role) + '/' + esc(method) + '?gen=' + esc(g.id), Object.assign({}, what, { target: g.id }), out, reload))] : null))),
    history.length > 1 ? el('div', { class: 'toolbar' }, el('label', {}, 'Diff ', selFrom), el('label', {}, ' → ', selTo), ' ',
      verbButton('diff', 'Behaviour diff (replay the sample)', () => behaviour(base, selFrom.value, selTo.value, behaviourBox))) : el('p', { class: 'muted', text: 'one generation: nothing to diff yet' }),
    behaviourBox, diffBox);
  if (history.length > 1) showDiff();

  // Activity: the chart and the recent failures.
  const activity = el('section', { 'aria-labelledby': 'h-activity' }, el('h3', { id: 'h-activity', text: 'Last 24 hours' }));
  if (actv) {
    activity.append(...chart(actv));
    activity.append(el('h3', { text: 'Recent failures' }), actv.failures.length
      ? el('table', { id: 'failures' }, el('thead', {}, el('tr', {}, ['When', 'Class', 'Rule', 'Type', 'Gen', 'Repaired'].map((h) => el('th', { scope: 'col', text: h })))),
        el('tbody', {}, actv.failures.map((f) => el('tr', {}, el('td', { text: new Date(f.time).toLocaleString() }), el('td', { class: 'bad', text: f.class }),
          el('td', { text: f.rule || '' }), el('td', { text: f.type || '' }), el('td', { text: f.generation ? 'gen-' + f.generation : '' }), el('td', { text: f.repaired ? 'yes' : '' })))))
      : el('p', { class: 'muted', text: 'no failed call in the event log' }));
  }
  const sample = (a.sample || []).length ? el('p', { class: 'muted', text: 'sample of real calls kept for safe regeneration: ' + a.sample.length + ' calls' }) : null;
  main.replaceChildren(hdr, el('div', { class: 'grid' }, el('div', {}, contract, code), el('div', {}, activity, sample)), lineage); // el skips an absent sample
  listeners.add((ev) => { if (ev.artifact && ev.artifact.role === role && ev.artifact.method === method) reload(); });
}

// ---- the event stream -----------------------------------------------------------------------
function viewEvents() {
  const main = $('#main');
  const f = { role: el('input', { id: 'ev-role', 'aria-label': 'Role', placeholder: 'role' }),
    cls: el('select', { id: 'ev-class', 'aria-label': 'Failure class' }, ['', 'intrinsic', 'adaptive', 'extrinsic', 'caller'].map((v) => el('option', { value: v }, v || 'any class'))),
    src: el('select', { id: 'ev-source', 'aria-label': 'Program source' }, ['', 'persisted', 'generated', 'repaired', 'regenerated'].map((v) => el('option', { value: v }, v || 'any source'))),
    changes: el('input', { type: 'checkbox', id: 'ev-changes' }) };
  const pause = el('button', { type: 'button', id: 'ev-pause', 'aria-pressed': 'false' }, 'Pause');
  const list = el('ul', { class: 'events', id: 'events', 'aria-live': 'off' });
  let paused = false;
  pause.addEventListener('click', () => { paused = !paused; pause.textContent = paused ? 'Resume' : 'Pause'; pause.setAttribute('aria-pressed', String(paused)); });
  main.replaceChildren(el('h2', { text: 'Events' }),
    el('div', { class: 'toolbar' }, f.role, f.cls, f.src, el('label', {}, f.changes, ' changes only'), pause),
    el('p', { class: 'muted', text: 'Calls of this server and changes of artifacts made by any process, newest first (the last 500).' }),
    list);
  // Role, class and source are the stream's own filters (GET /v1/events?role=&class=&source=):
  // changing one opens a new stream. "Changes only" hides the calls.
  let ctl = null, t = 0;
  function reopen() {
    if (ctl) { ctl.abort(); pageStreams.delete(ctl); }
    const q = new URLSearchParams();
    if (f.role.value.trim()) q.set('role', f.role.value.trim());
    if (f.cls.value) q.set('class', f.cls.value);
    if (f.src.value) q.set('source', f.src.value);
    const query = q.toString();
    list.dataset.stream = '';
    ctl = sse('/v1/events' + (query ? '?' + query : ''), show, (st) => {
      list.dataset.stream = st === 'on' ? query || 'all' : '';
      if (st !== 'on' && st !== 'off') state.textContent = 'the stream: ' + st;
      else state.textContent = '';
    });
    pageStreams.add(ctl);
  }
  const state = el('span', { class: 'bad', role: 'status' });
  list.before(state);
  function show(ev) {
    const c = ev.call;
    if (paused || (f.changes.checked && c)) return;
    const kind = ev.artifact ? 'change' : c && c.reason === 'operator' ? 'operator' : ev.kind;
    list.prepend(el('li', { 'data-kind': kind, class: c && !c.ok && c.reason !== 'operator' ? 'bad' : '' },
      new Date(ev.time || Date.now()).toLocaleTimeString() + '  ' + kind.padEnd(9) + ' ' + eventName(ev) + '  ' + describeEvent(ev)));
    while (list.childElementCount > 500) list.lastElementChild.remove();
  }
  f.role.addEventListener('input', () => { clearTimeout(t); t = setTimeout(reopen, 300); });
  for (const x of [f.cls, f.src]) x.addEventListener('change', reopen);
  reopen();
}

// ---- the quarantine queue -------------------------------------------------------------------
async function viewQuarantine() {
  const main = $('#main');
  const out = resultBox();
  const arts = el('tbody', { id: 'qrows' }), files = el('tbody', { id: 'qfiles' });
  main.replaceChildren(el('h2', { text: 'Quarantine queue' }), out,
    el('h3', { text: 'Quarantined artifacts (refused until an operator acts)' }),
    el('table', {}, el('thead', {}, el('tr', {}, ['Artifact', 'Gen', 'Last failure', 'Actions'].map((h) => el('th', { scope: 'col', text: h })))), arts),
    el('h3', { text: 'Damaged files the store set aside' }),
    el('table', {}, el('thead', {}, el('tr', {}, ['Entry', 'Kind', 'Reason', 'When', 'Actions'].map((h) => el('th', { scope: 'col', text: h })))), files));
  const reload = () => viewQuarantine();
  try {
    const p = await api('/v1/artifact-table?lifecycle=quarantined&limit=1000');
    arts.replaceChildren(...(p.rows.length ? p.rows.map((r) => {
      const name = r.role + '.' + r.method, base = esc(r.role) + '/' + esc(r.method);
      const what = { name, gen: 'gen-' + r.generation, lc: r.lifecycle };
      return el('tr', { 'data-artifact': name }, el('td', {}, el('a', { href: '#/a/' + base }, name)), el('td', { text: 'gen-' + r.generation }),
        el('td', { class: 'bad', text: r.last_failure_class ? r.last_failure_class + (r.last_failure_reason ? ': ' + r.last_failure_reason : '') : '—' }),
        el('td', {}, el('div', { class: 'actions' },
          verbButton('lift', 'Lift', () => act('lift', '/v1/admin/lift/' + base, what, out, reload)),
          r.generation > 1 ? verbButton('rollback', 'Roll back', () => act('rollback', '/v1/admin/rollback/' + base, what, out, reload)) : null,
          verbButton('regen', 'Regenerate', () => act('regen', '/v1/admin/regen/' + base, what, out, reload)))));
    }) : [el('tr', {}, el('td', { colspan: 4, class: 'muted', text: 'none' }))]));
  } catch (e) { arts.replaceChildren(el('tr', {}, el('td', { colspan: 4 }, message('error', e.message)))); }
  try {
    const q = await api('/v1/quarantine');
    files.replaceChildren(...(q.length ? q.map((ent) => {
      const what = { name: ent.id, gen: '', lc: '' };
      return el('tr', {}, el('td', {}, el('code', { text: ent.id }), el('div', { class: 'muted', text: ent.path })), el('td', { text: ent.kind + (ent.role ? ' ' + ent.role + (ent.method ? '.' + ent.method : '') : '') }),
        el('td', { text: ent.reason }), el('td', { text: ent.at ? new Date(ent.at).toLocaleString() : '' }),
        el('td', {}, el('div', { class: 'actions' },
          verbButton('restore', 'Restore', () => act('restore', '/v1/admin/restore/' + esc(ent.id), what, out, reload)),
          verbButton('dismiss', 'Dismiss', () => act('dismiss', '/v1/admin/dismiss/' + esc(ent.id), what, out, reload)))));
    }) : [el('tr', {}, el('td', { colspan: 5, class: 'muted', text: 'none' }))]));
  } catch (e) { files.replaceChildren(el('tr', {}, el('td', { colspan: 5 }, message('error', e.message)))); }
  listeners.add((ev) => { if (ev.artifact) reload(); });
}

// ---- start ----------------------------------------------------------------------------------
window.addEventListener('hashchange', () => { lastResult = null; route(); $('#main').focus({ preventScroll: true }); });
document.addEventListener('DOMContentLoaded', () => {
  setupToken();
  refreshEconomics(false);
  refreshQueueCount();
  restartStream();
  route();
});
