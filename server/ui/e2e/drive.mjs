// Drives forge serve's console in headless Chromium for e2e_test.go, which starts the servers
// and passes what to expect in the environment. It talks to the test over its standard streams:
// a line "CHANGE <what>" asks the test to make a change from another forge (the test answers
// "OK" on stdin once it is made), "RESULT <json>" reports the figures, and any failure exits
// non-zero with the reason on stderr.
import { chromium } from 'playwright-core';
import { createInterface } from 'node:readline';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const env = (k) => { const v = process.env[k]; if (!v) throw new Error('missing $' + k); return v; };
const url = env('FORGE_UI_URL'), bulkURL = env('FORGE_UI_BULK_URL'), tokenOK = env('FORGE_UI_TOKEN');
const shots = env('FORGE_UI_SHOTS'), expect = JSON.parse(env('FORGE_UI_EXPECT'));
const bulkCount = Number(env('FORGE_UI_BULK_COUNT'));
const timeout = 15000;

const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();
async function ask(what) {
  process.stdout.write('CHANGE ' + what + '\n');
  const { value } = await lines.next();
  if (value !== 'OK') throw new Error('the test did not make the change: ' + value);
}
const step = (s) => process.stdout.write('STEP ' + s + '\n');
function must(cond, msg) { if (!cond) throw new Error(msg); }

// lowContrast lists the page's texts whose colour on their background is under 4.5:1 (WCAG AA);
// disabled controls are exempt, as WCAG has them.
async function lowContrast(page) {
  return page.evaluate(() => {
    const rgb = (c) => { const m = c.match(/[\d.]+/g).map(Number); return { r: m[0], g: m[1], b: m[2], a: m.length > 3 ? m[3] : 1 }; };
    const lum = ({ r, g, b }) => [r, g, b].map((v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; })
      .reduce((acc, v, i) => acc + v * [0.2126, 0.7152, 0.0722][i], 0);
    const bgOf = (e) => { for (; e; e = e.parentElement) { const c = rgb(getComputedStyle(e).backgroundColor); if (c.a > 0.5) return c; } return { r: 255, g: 255, b: 255 }; };
    const bad = [];
    for (const e of document.querySelectorAll('body *')) {
      if (e.closest('button:disabled, dialog:not([open]), svg') || e.checkVisibility && !e.checkVisibility()) continue;
      if (![...e.childNodes].some((n) => n.nodeType === 3 && n.textContent.trim())) continue;
      const fg = lum(rgb(getComputedStyle(e).color)), bg = lum(bgOf(e));
      const ratio = (Math.max(fg, bg) + 0.05) / (Math.min(fg, bg) + 0.05);
      if (ratio < 4.5) bad.push(e.tagName + '.' + e.className + ' "' + e.textContent.trim().slice(0, 30) + '" ' + ratio.toFixed(2));
    }
    return bad;
  });
}

// A fresh profile (playwright passes it as --user-data-dir).
const ctx = await chromium.launchPersistentContext(mkdtempSync(join(tmpdir(), 'forge-ui-')), {
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  headless: true,
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
    '--disable-component-update', '--disable-sync'],
  viewport: { width: 1280, height: 860 }, colorScheme: 'light',
});
const result = {};
try {
  const page = await ctx.newPage();
  page.setDefaultTimeout(timeout);
  const consoleErrors = [];
  // Errors, but the refusal of the wrong token's bless, which the test asks for.
  page.on('console', (m) => { if (m.type() === 'error' && !(m.location().url || '').includes('/v1/admin/')) consoleErrors.push(m.text() + ' ' + (m.location().url || '')); });
  page.on('pageerror', (e) => consoleErrors.push(String(e)));

  // 1. The table: every artifact with its lifecycle.
  step('table');
  await page.goto(url + '/ui/');
  await page.waitForSelector('#rows tr[data-artifact]');
  await page.waitForFunction((n) => document.querySelectorAll('#rows tr[data-artifact]').length === n, Object.keys(expect).length);
  const rows = await page.$$eval('#rows tr[data-artifact]', (trs) => Object.fromEntries(trs.map((tr) => [tr.dataset.artifact, tr.dataset.lifecycle])));
  must(JSON.stringify(rows) === JSON.stringify(expect), 'the table shows ' + JSON.stringify(rows) + ', want ' + JSON.stringify(expect));
  for (const [name, lc] of Object.entries(expect)) {
    const text = await page.textContent(`#rows tr[data-artifact="${name}"] .lc`);
    must(text === lc, `${name}: the lifecycle badge says ${text}, want ${lc}`);
  }
  await page.waitForFunction(() => document.querySelector('#economics .figure'));
  const econ = await page.textContent('#economics');
  must(econ.includes('model calls per 1,000 calls') && econ.includes('tokens saved'), 'the reuse economics are missing: ' + econ);
  await page.screenshot({ path: join(shots, 'table.png'), fullPage: true });
  const lowLight = await lowContrast(page);
  must(lowLight.length === 0, 'text under 4.5:1 in the light theme: ' + lowLight.join('; '));

  // Keyboard: the skip link comes first, the sort buttons and the rows' links are reachable.
  await page.keyboard.press('Tab');
  must(await page.evaluate(() => document.activeElement.classList.contains('skip')), 'the first Tab does not reach the skip link');
  await page.focus('#rows a');
  await page.keyboard.press('ArrowDown');
  must(await page.evaluate(() => document.activeElement.closest('tr').previousElementSibling !== null), 'ArrowDown does not move to the next row');

  // 2. An artifact: contract, code as text, lineage and its diff, chart, failures.
  step('artifact');
  await page.click('#rows a[href="#/a/text/upper"]');
  await page.waitForSelector('#lineage li');
  const diff = await page.innerText('#diff');
  must(/^\+ .*strings\.Clone/m.test(diff) && /^- .*return strings\.ToUpper\(s\)/m.test(diff), 'the lineage diff does not show the regeneration: ' + diff);
  must((await page.textContent('#diffsummary')).startsWith('gen-1 → gen-2'), 'the diff is not gen-1 → gen-2');
  must((await page.$$('#lineage li')).length === 2, 'the lineage does not list both generations');
  must((await page.textContent('#code')).includes('func Upper('), 'the current code is not shown');
  must(await page.$('#code .kw') !== null, 'the code is not highlighted');
  // Stored text that looks like HTML stays text: no element made of it, no script run.
  must((await page.textContent('#code')).includes('<img src=x onerror="window.__xss=1">'), 'the code comment is not shown as text');
  must((await page.textContent('#h-contract + p')).includes('<script>'), 'the purpose is not shown as text');
  must(await page.evaluate(() => window.__xss === undefined && !document.querySelector('main img, main script')), 'stored text became HTML');
  must(await page.$('svg.chart polyline.calls') !== null, 'no chart');
  must((await page.textContent('#contract')).includes('func Upper(s string) string'), 'the contract is not shown');
  must((await page.$$('#failures tbody tr')).length >= 1, 'the recent failures are not listed');
  await page.screenshot({ path: join(shots, 'artifact.png'), fullPage: true });
  const lowArtifact = await lowContrast(page);
  must(lowArtifact.length === 0, 'text under 4.5:1 on the artifact page: ' + lowArtifact.join('; '));

  // 3. Bless: read-only without a token; refused with a wrong one; done with the right one.
  step('bless');
  const bless = page.locator('button[data-verb="bless"]').first();
  must(await bless.isDisabled(), 'bless is enabled without a token');
  await page.fill('#token', 'not-the-token');
  await page.click('#tokensave');
  await bless.click();
  must((await page.textContent('#confirm-what')).includes('becomes blessed'), 'the confirmation does not say what changes');
  await page.click('#confirm-ok');
  await page.waitForSelector('#actionresult .msg.error');
  const refused = await page.textContent('#actionresult');
  must(/refused/.test(refused), 'a wrong token was not refused: ' + refused);
  result.refused = refused;
  await page.fill('#token', tokenOK);
  await page.click('#tokensave');
  await bless.click();
  await page.click('#confirm-ok');
  await page.waitForFunction(() => /blessed/.test(document.querySelector('#artifact-title')?.textContent || ''));
  await page.screenshot({ path: join(shots, 'artifact-blessed.png'), fullPage: true });
  await page.screenshot({ path: join(shots, 'console.png') }); // the viewport: README's docs/console.png
  // The behaviour diff replays the sample on both generations (the admin token: it runs code).
  await page.click('button[data-verb="diff"]');
  await page.waitForFunction(() => /^(behaviour gen-1 → gen-2|no behaviour diff|behaviour diff refused)/.test(document.querySelector('#behaviourbox .msg')?.textContent || ''));
  const behaviour = await page.textContent('#behaviourbox .msg');
  // The calls the page's server served count at once (not only after the sample's next flush).
  must(/^behaviour gen-1 → gen-2: [1-9]/.test(behaviour), 'the behaviour diff replayed nothing: ' + behaviour);
  result.behaviour = behaviour;

  // 4. A change made by another forge on the same store arrives live in the table.
  step('live');
  await page.click('a[data-nav="artifacts"]');
  await page.waitForSelector('#rows tr[data-artifact="text.upper"][data-lifecycle="blessed"]');
  await page.waitForFunction(() => document.body.dataset.live === 'on');
  const before = await page.evaluate(() => document.body.dataset.tableLoaded);
  await ask('quarantine text.lower');
  await page.waitForSelector('#rows tr[data-artifact="text.lower"][data-lifecycle="quarantined"]');
  must(await page.evaluate((b) => document.body.dataset.tableLoaded !== b, before), 'the table was not refreshed by the live stream');
  await page.screenshot({ path: join(shots, 'table-live.png'), fullPage: true });

  // 5. The event stream, filtered by role.
  step('events');
  await page.click('a[data-nav="events"]');
  await page.fill('#ev-role', 'text');
  await page.waitForSelector('#events[data-stream="role=text"]', { state: 'attached' }); // the stream with the server's filter
  await page.evaluate(() => fetch('/v1/call/text/upper', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{"s":"live"}' }));
  await ask('lift text.lower');
  await page.waitForSelector('#events li[data-kind="change"]');
  await page.waitForSelector('#events li[data-kind="call"]');
  await page.screenshot({ path: join(shots, 'events.png'), fullPage: true });

  // 6. The quarantine queue (text.title), in the dark theme.
  step('quarantine');
  await page.emulateMedia({ colorScheme: 'dark' });
  await page.click('a[data-nav="quarantine"]');
  await page.waitForSelector('#qrows tr[data-artifact="text.title"]');
  must(await page.evaluate(() => getComputedStyle(document.body).backgroundColor) !== 'rgb(255, 255, 255)', 'no dark theme');
  await page.screenshot({ path: join(shots, 'quarantine-dark.png'), fullPage: true });
  const lowDark = await lowContrast(page);
  must(lowDark.length === 0, 'text under 4.5:1 in the dark theme: ' + lowDark.join('; '));
  await page.emulateMedia({ colorScheme: 'light' });

  must(consoleErrors.length === 0, 'the page logged errors: ' + consoleErrors.join('; '));

  // 7. bulkCount artifacts: the first page's load time in the browser, and a sort.
  step('bulk');
  const big = await ctx.newPage();
  big.setDefaultTimeout(60000);
  await big.goto(bulkURL + '/ui/');
  await big.waitForFunction(() => window.__forgeTableReady);
  const cold = await big.evaluate(() => window.__forgeTableReady); // the store's index built on this first listing
  await big.reload();
  await big.waitForFunction(() => window.__forgeTableReady);
  const t = await big.evaluate(() => ({ ready: window.__forgeTableReady, dcl: performance.getEntriesByType('navigation')[0].domContentLoadedEventEnd }));
  const summary = await big.textContent('#tablesummary');
  must(summary.includes(bulkCount.toLocaleString('en-US') + ' artifacts'), 'the table does not count ' + bulkCount + ' artifacts: ' + summary);
  must((await big.$$('#rows tr')).length === 100, 'a page is not 100 rows');
  const loaded = await big.evaluate(() => document.body.dataset.tableLoaded);
  const sortStart = await big.evaluate(() => performance.now());
  await big.click('button[data-sort="calls"]');
  await big.waitForFunction((l) => document.body.dataset.tableLoaded !== l && document.querySelector('th[aria-sort="descending"]'), loaded);
  const sortMs = (await big.evaluate(() => performance.now())) - sortStart;
  await big.click('#next');
  await big.waitForFunction(() => document.querySelector('#pageinfo').textContent.startsWith('101–200'));
  await big.screenshot({ path: join(shots, 'table-10000.png') });
  Object.assign(result, { bulk_first_page_cold_index_ms: Math.round(cold), bulk_first_page_ms: Math.round(t.ready), bulk_dom_content_loaded_ms: Math.round(t.dcl), bulk_sort_ms: Math.round(sortMs) });
  process.stdout.write('RESULT ' + JSON.stringify(result) + '\n');
} finally {
  await ctx.close();
}
process.exit(0);
