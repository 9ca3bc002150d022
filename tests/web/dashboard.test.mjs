// SPDX-License-Identifier: MIT
// The dashboard in Chromium against a live mrc-controller on the lab fabric (started by
// tests/web/run.sh lab, which passes MRCFAB_BASE, MRCFAB_TOKENS, MRCFAB_SCREENSHOTS and
// MRCFAB_CHROMIUM). The agents' reports seeded here make exactly one T0-T1 link bad:
// p0-t0-2~p0-t1-1 toward the T1, row 2 and column 1 of plane 0's matrix; the matrix must draw
// it there, and every other direction as the API's matrix has it. dashboard_full.test.mjs
// checks the same views at the full fabric's scale.
//
// Every view must load without a console error or an uncaught exception; the few requests a
// step makes fail on purpose (a refused token, a refused entry) are allowed by that step only.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import {
    BASE, tokens, call, apiMatrix, launch, close, newPage, noErrors, signIn, view, shot, geometry, assertDir, accessible,
    landingCounts, assertCounts,
} from './lib.mjs';

// the seeded fault: the up direction of this link (row 2, column 1 of plane 0's matrix)
const BAD = { link: 'p0-t0-2~p0-t1-1', row: 2, col: 1 };

// Every host reports every EV on both planes to every other host; the paths of plane 0 over T1
// 1 from h4 and h5 (on T0 2) to hosts on other T0s lose 5 %: the link from p0-t0-2 up to
// p0-t1-1 is the one that explains them all.
async function seed() {
    for (let h = 0; h < 8; h++) {
        const tok = tokens[`h${h}`];
        let r = await call('POST', '/api/v1/agents', tok, { host: `h${h}`, version: '0.1.0', mode: 'srv6', ports: [{ port: 0, up: true }, { port: 1, up: true }] });
        assert.equal(r.status, 200, `h${h} registers`);
        const evs = [];
        for (let q = 0; q < 8; q++) {
            if (q === h) continue;
            for (const plane of [0, 1]) {
                for (const t1 of [0, 1]) {
                    const local = Math.floor(q / 2) === Math.floor(h / 2);
                    if (local && t1 === 1) continue; // one path between hosts of one T0
                    const lossy = plane === 0 && t1 === 1 && Math.floor(h / 2) === 2 && !local;
                    evs.push({ peer: `h${q}`, ev: (plane << 29) | (t1 << 18), sent: 10000, lost: lossy ? 500 : 0, state: 'good' });
                }
            }
        }
        r = await call('POST', '/api/v1/reports', tok, { host: `h${h}`, evs });
        assert.equal(r.status, 202, `h${h} reports`);
    }
    const r = await call('POST', '/api/v1/probes', tokens.localizer, { results: [{ element: 'p1-t0-0~p1-t1-0', scope: 'up', sent: 1000, lost: 0 }] });
    assert.equal(r.status, 202, 'the prober reports');
    // the health snapshot is refreshed in slices: wait for the verdict
    for (let i = 0; i < 100; i++) {
        const l = await call('GET', '/api/v1/health/links?state=bad', tokens.admin);
        if (l.body.items.length) {
            assert.deepEqual(l.body.items.map((x) => x.link), [BAD.link], 'the seeded link, and only it, is bad');
            return;
        }
        await new Promise((res) => setTimeout(res, 100));
    }
    assert.fail('the seeded link never turned bad');
}

// Every cell of the page's matrix, each direction, drawn as the API's matrix says.
async function assertMatrix(page, plane, what) {
    const m = await apiMatrix(plane);
    const g = await geometry(page);
    assert.deepEqual([g.rows, g.cols], [m.t0, m.t1], `${what}: the page's matrix is the plane's shape`);
    for (let r = 0; r < m.t0; r++) {
        for (let c = 0; c < m.t1; c++) {
            for (const dir of ['up', 'down']) await assertDir(page, r, c, dir, m.nib(r, c, dir), `${what}: cell (T0 ${r}, T1 ${c})`);
        }
    }
    return m;
}

before(async () => {
    await seed();
    await launch();
});

after(close);

test("the controllers' panel: a controller alone says so and offers no other", async () => {
    const c = await call('GET', '/api/v1/cluster', tokens.reader);
    assert.equal(c.status, 200, 'GET /cluster');
    assert.equal(c.body.self.role, 'alone', 'the API: alone without etcd');
    const page = await newPage();
    await signIn(page, tokens.reader);
    await view(page, '#/overview', '#planes-table');
    await page.locator('#cluster-summary').waitFor();
    assert.match(await page.locator('#cluster-summary').textContent(), /● alone · no other controller/, 'the badge says alone, in a word');
    assert.equal(await page.locator('#cluster .cluster-body').isVisible(), false, 'closed until asked');
    await page.locator('#cluster-summary').click();
    assert.match(await page.locator('#cluster .cluster-body').textContent(), /runs alone.*no other controller/);
    assert.equal(await page.locator('#cluster a, #cluster-table').count(), 0, 'no controllers to link to');
    assert.equal(await page.locator('#cluster-down').isVisible(), false, 'no banner while it answers');
    await shot(page, 'cluster-alone');
    noErrors(page, 'cluster alone');
});

test('without a token the token form shows; a wrong token returns to it with a message', async () => {
    const page = await newPage();
    page.allowed.push(/status of 401/);
    await page.goto(`${BASE}/`);
    await page.locator('#login').waitFor({ state: 'visible' });
    assert.equal(await page.locator('#app').isVisible(), false, 'nothing but the form before a token');
    await shot(page, 'token-form');
    await page.locator('#token').fill('tok-not-a-token-000000');
    await page.locator('#login-form button[type=submit]').click();
    await page.waitForFunction(() => /401/.test(document.getElementById('login-msg').textContent));
    assert.equal(await page.evaluate(() => sessionStorage.length), 0, 'the refused token is not kept');
    noErrors(page, 'token form');
});

test('an admin: every view loads without console errors; each is screenshot at 1366x768', async () => {
    const page = await newPage();
    await signIn(page, tokens.admin);
    assert.match(await page.locator('#who').textContent(), /root \(admin\)/);
    await view(page, '#/overview', '#planes-table');
    await page.locator('#problems-table').waitFor();
    await shot(page, 'overview');
    await view(page, '#/overview/0', 'canvas#matrix[data-loaded=true]');
    await page.locator('#not-ok-table').waitFor();
    await shot(page, 'overview-plane');
    await view(page, '#/overview/1', 'canvas#matrix[data-loaded=true]');
    await view(page, `#/element/${BAD.link}`, '#evidence table');
    await page.locator('#element-state .st-bad').waitFor();
    await shot(page, 'element-link');
    await view(page, '#/element/p0-t1-1', '#evidence table');
    await view(page, '#/element/h4:0', '#evidence table');
    await view(page, '#/denylist', '#deny-form');
    await shot(page, 'denylist');
    await view(page, '#/paths?from=h4:0&to=h0:0', '#path-summary');
    assert.match(await page.locator('#path-summary').textContent(), /2 EVs between h4 and h0 on plane 0: 1 ok, 1 bad/);
    await shot(page, 'paths');
    // a malformed end is refused, and the last query's refreshes do not hide that
    await page.locator('#path-to').fill('h0:x');
    await page.locator('#path-form button[type=submit]').click();
    await page.locator('#path-result .error').waitFor();
    await page.waitForTimeout(1500);
    assert.match(await page.locator('#path-result').textContent(), /Give each end as HOST:PORT/);
    await view(page, '#/agents', '#agents-table');
    assert.equal(await page.locator('#agents-table tbody tr').count(), 8, 'eight agents');
    assert.match(await page.locator('#agents').textContent(), /8 registered: 8 fresh, 0 stale/);
    // the prober has posted once (the seed): its last-seen time, not "never"
    await page.locator('#probers-table').waitFor();
    assert.match(await page.locator('#probers-table tbody').textContent(), /prober1\s*\d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ \(\d+ s ago\)\s*1$/);
    await shot(page, 'agents');
    noErrors(page, 'every view');
});

test("the landing view: each plane's counts in its table and tabs, and what is wrong now", async () => {
    const page = await newPage();
    await signIn(page, tokens.reader);
    await view(page, '#/overview', '#problems-table');
    const summary = (await call('GET', '/api/v1/health/summary', tokens.admin)).body;
    assert.deepEqual(summary.planes.map((p) => [p.bad, p.degraded, p.denied]), [[1, 0, 0], [0, 0, 0]],
        'the API: plane 0 has the seeded link bad and nothing else wrong');
    assertCounts(await landingCounts(page), summary, 'lab');
    const problems = (await call('GET', '/api/v1/health/problems', tokens.admin)).body;
    const rows = await page.locator('#problems-table tbody tr').evaluateAll((trs) => trs.map((tr) => [tr.dataset.element, tr.dataset.state]));
    assert.deepEqual(rows, problems.items.map((x) => [x.element, x.state]), 'the problem list is /health/problems');
    assert.ok(rows.some(([e]) => e === BAD.link), 'the seeded link is listed');
    assert.equal(await page.locator('#problems-range').textContent(), `1–${problems.total} of ${problems.total}`);
    assert.equal(await page.locator('#problems-next').isDisabled(), true, 'one page: no next');
    // each row opens its element
    await page.locator(`#problems-table a[href="#/element/${encodeURIComponent(BAD.link)}"]`).click();
    await page.waitForFunction((l) => location.hash === `#/element/${encodeURIComponent(l)}`, BAD.link);
    await page.locator('#evidence table').waitFor();
    noErrors(page, 'landing');
});

test('the link matrix: both directions of every link as the API has them, the bad one named', async () => {
    const page = await newPage();
    await signIn(page, tokens.admin);
    await view(page, '#/overview/0', 'canvas#matrix[data-loaded=true]');
    // the text version: one row, for the seeded link, at its row and column
    const rows = await page.locator('#not-ok-table tbody tr').evaluateAll((trs) => trs.map((tr) => ({
        link: tr.dataset.link, row: Number(tr.dataset.row), col: Number(tr.dataset.col), state: tr.dataset.state, text: tr.textContent,
    })));
    assert.equal(rows.length, 1, 'one link is not ok');
    assert.deepEqual({ link: rows[0].link, row: rows[0].row, col: rows[0].col, state: rows[0].state }, { ...BAD, state: 'bad' });
    assert.match(rows[0].text, /✕ bad.*✓ ok.*5\.00 %/, 'up bad, down ok, in words and symbols, with its loss');
    // the picture: every direction of every cell as the API's matrix has it
    const m = await assertMatrix(page, 0, 'plane 0');
    assert.deepEqual(m.nib(BAD.row, BAD.col, 'up'), { state: 'bad', denied: false, named: false }, 'the API: the seeded direction bad');
    const g = await geometry(page);
    assert.deepEqual([g.rows, g.cols], [4, 2], 'plane 0 of the lab: 4 T0s by 2 T1s');
    // the mouse over that cell names it; a click opens it
    const box = await page.locator('#matrix').boundingBox();
    await page.mouse.move(box.x + BAD.col * g.cw + g.dw / 2, box.y + BAD.row * g.ch + g.ch / 2);
    assert.match(await page.locator('#matrix-desc').textContent(), /p0-t0-2~p0-t1-1 \(row T0 2, column T1 1\): up ✕ bad; down ✓ ok; loss 5\.00 %/);
    // the keyboard: focus, two down and one right, Enter opens the link's page
    await page.mouse.move(0, 0);
    await page.locator('#matrix').focus();
    for (const k of ['ArrowDown', 'ArrowDown', 'ArrowRight']) await page.keyboard.press(k);
    assert.match(await page.locator('#matrix-desc').textContent(), /^p0-t0-2~p0-t1-1 .*up ✕ bad/);
    await page.keyboard.press('Enter');
    await page.waitForFunction(() => location.hash === '#/element/p0-t0-2~p0-t1-1');
    await page.locator('#evidence table').waitFor();
    const ev = await page.locator('#evidence tbody tr[data-dir=up]').textContent();
    assert.match(ev, /✕ bad.*5\.000 %/, "the evidence: 5 % lost toward the T1 in the agents' reports");
    assert.match(ev, /not probed/, 'and none of the prober');
    await page.locator('#history-chart').waitFor();

    // live: a link a prober finds lossy shows on its plane's matrix without a reload
    await view(page, '#/overview/1', 'canvas#matrix[data-loaded=true]');
    // (its loss counts with the agents' clean evidence on it: 5 % of all it carried)
    const r = await call('POST', '/api/v1/probes', tokens.localizer, { results: [{ element: 'p1-t0-3~p1-t1-0', scope: 'down', sent: 5000, lost: 5000 }] });
    assert.equal(r.status, 202);
    let t0 = 0;
    for (let i = 0; i < 50 && !t0; i++) {
        const l = await apiMatrix(1);
        if (l.nib(3, 0, 'down').state === 'bad') t0 = Date.now();
        else await new Promise((res) => setTimeout(res, 50));
    }
    assert.ok(t0, 'the API says the link is bad');
    await page.locator('#not-ok-table tr[data-link="p1-t0-3~p1-t1-0"][data-state=bad]').waitFor({ timeout: 4000 });
    const took = Date.now() - t0;
    await assertMatrix(page, 1, 'plane 1 after the change');
    await assertDir(page, 3, 0, 'down', { state: 'bad' }, 'plane 1, T0 3, T1 0');
    assert.ok(took <= 2000, `on the page ${took} ms after the API said so`);
    noErrors(page, 'matrix');
});

test('adding a denylist entry: blast radius, save, then in the API and on the matrix', async () => {
    const page = await newPage();
    await signIn(page, tokens.admin);
    await view(page, '#/denylist', '#deny-form');
    await page.locator('#deny-element').fill('p0-t1-1');
    await page.locator('#deny-reason').fill('web test: drain');
    await page.locator('#deny-scope').selectOption('both');
    assert.equal(await page.locator('#deny-save').count(), 0, 'no Save before the blast radius');
    await page.locator('#deny-preview').click();
    await page.locator('#blast-summary').waitFor();
    assert.match(await page.locator('#blast-summary').textContent(), /lowers the capacity of 48 of 56 host pairs; 0 are cut off; 0 fall below the floor of 50 %; the least left is 75\.0 %/);
    await shot(page, 'denylist-blast-radius');
    let d = await call('GET', '/api/v1/denylist', tokens.admin);
    assert.equal(d.body.entries.length, 0, 'the preview stored nothing');
    await page.locator('#deny-save').click();
    await page.waitForFunction(() => /saved: p0-t1-1/.test(document.getElementById('flash').textContent));
    d = await call('GET', '/api/v1/denylist', tokens.admin);
    assert.deepEqual(d.body.entries.map((e) => [e.element, e.scope, e.reason, e.author]), [['p0-t1-1', 'both', 'web test: drain', 'root']]);
    await page.locator('#deny-list tr[data-id]').first().waitFor({ timeout: 2500 });

    // the bad link's page: the T1's entry covers it, and its audit trail has the addition
    await view(page, `#/element/${BAD.link}`, '#element-deny tr[data-id]');
    await page.locator('#audit-table').waitFor();
    assert.match(await page.locator('#audit-table tbody').textContent(), /root\s*add\s*#1\s*p0-t1-1\s*web test: drain/);

    // the bad link's page: the entry in force on it, as the health engine applies it
    await page.locator('#denied-table tr[data-id="1"]').waitFor();
    assert.match(await page.locator('#denied-table tbody').textContent(), /#1\s*p0-t1-1\s*both\s*operator\s*web test: drain/);

    // the matrix shows the denied T1's column hatched, both ways
    await view(page, '#/overview/0', 'canvas#matrix[data-loaded=true]');
    await page.waitForFunction(() => document.querySelectorAll('#not-ok-table tr').length === 5 &&
        [...document.querySelectorAll('#not-ok-table tbody tr')].every((tr) => tr.dataset.col === '1' && /denied.*denied/.test(tr.textContent)));
    const m = await assertMatrix(page, 0, 'plane 0 with T1 1 denied');
    for (let row = 0; row < 4; row++) assert.equal(m.nib(row, 1, 'down').denied, true, `the API: (${row}, 1) denied`);
    noErrors(page, 'denylist add');
});

test('an entry below the capacity floor is refused with the reason; an admin may force it', async () => {
    const page = await newPage();
    page.allowed.push(/status of 409/);
    await signIn(page, tokens.admin);
    let r = await call('POST', '/api/v1/denylist', tokens.admin, { element: 'h3:0', reason: 'web test' });
    assert.equal(r.status, 201);
    await view(page, '#/denylist', '#deny-form');
    await page.locator('#deny-element').fill('h3:1');
    await page.locator('#deny-reason').fill('web test: cut h3 off');
    await page.locator('#deny-preview').click();
    await page.locator('#blast-summary').waitFor();
    assert.match(await page.locator('#deny-result').textContent(), /Without force the controller refuses it/);
    await page.locator('#deny-save').click(); // unforced: refused
    await page.locator('#deny-error').waitFor();
    assert.match(await page.locator('#deny-error').textContent(), /capacity floor.*HTTP 409/);
    await page.locator('#deny-force').check();
    await page.locator('#deny-save').click();
    await page.waitForFunction(() => /saved: h3:1.*forced/.test(document.getElementById('flash').textContent));
    r = await call('GET', '/api/v1/denylist', tokens.admin);
    assert.ok(r.body.entries.some((e) => e.element === 'h3:1'), 'the forced entry is stored');
    noErrors(page, 'forced entry');
});

test('changes appear without a reload; an entry is removed from its Remove button', async () => {
    const page = await newPage();
    await signIn(page, tokens.operator);
    await view(page, '#/denylist', '#deny-form');
    // forced: with h3 cut off and p0-t1-1 denied by the tests before, it is below the floor
    const r = await call('POST', '/api/v1/denylist?force=true', tokens.admin, { element: 'p1-t0-3', reason: 'web test: live' });
    assert.equal(r.status, 201);
    const row = page.locator(`#deny-list tr[data-id="${r.body.id}"]`);
    await row.waitFor({ timeout: 2000 }); // polled every second: within 2 s
    await row.getByRole('button', { name: `Remove entry #${r.body.id} (p1-t0-3)` }).click();
    await row.getByRole('button', { name: `Yes, remove #${r.body.id}` }).click();
    await row.waitFor({ state: 'detached', timeout: 2500 });
    const d = await call('GET', '/api/v1/denylist', tokens.admin);
    assert.ok(!d.body.entries.some((e) => e.id === r.body.id), 'removed in the API');
    noErrors(page, 'live denylist');
});

test('an entry with a maintenance window waits for it', async () => {
    const page = await newPage();
    await signIn(page, tokens.operator);
    await view(page, '#/denylist', '#deny-form');
    const at = (h) => new Date(Date.now() + h * 3600e3).toISOString().replace(/\.\d+Z$/, 'Z');
    await page.locator('#deny-element').fill('p1-t0-1~p1-t1-1');
    await page.locator('#deny-scope').selectOption('up');
    await page.locator('#deny-reason').fill('web test: window');
    const from = at(24); // once: a second call may fall in the next second
    await page.locator('#deny-from').fill(from);
    await page.locator('#deny-to').fill(at(26));
    await page.locator('#deny-preview').click();
    await page.locator('#blast-summary').waitFor();
    await page.locator('#deny-save').click();
    await page.waitForFunction(() => /saved: p1-t0-1~p1-t1-1 \(up\) denied within its window/.test(document.getElementById('flash').textContent));
    const d = await call('GET', '/api/v1/denylist', tokens.admin);
    const e = d.body.entries.find((x) => x.reason === 'web test: window');
    assert.ok(e && e.scope === 'up' && e.active === false && e.window.start.startsWith(from.slice(0, 19)), 'stored with its window, not in force');
    await page.locator(`#deny-list tr[data-id="${e.id}"]`).waitFor({ timeout: 2500 });
    assert.match(await page.locator(`#deny-list tr[data-id="${e.id}"]`).textContent(), /waiting for its window/);
    noErrors(page, 'window');
});

test('accessibility and fit: Tab reaches every control, each state has a word, nothing is wider than a laptop', async () => {
    const page = await newPage();
    await signIn(page, tokens.admin);
    for (const [hash, ready] of [['#/overview', '#problems-table'], ['#/overview/0', '#not-ok-table'],
        [`#/element/${BAD.link}`, '#evidence table'], ['#/element/p0-t1-1', '#evidence table'],
        ['#/denylist', '#deny-form'], ['#/paths?from=h4:0&to=h0:0', '#path-summary'], ['#/agents', '#agents-table']]) {
        await view(page, hash, ready);
        await accessible(page, hash);
    }
    noErrors(page, 'accessibility');
});

for (const role of ['reader', 'h0']) {
    test(`a ${role === 'h0' ? 'agent' : role} token gets no edit controls`, async () => {
        const page = await newPage();
        await signIn(page, tokens[role]);
        await view(page, '#/denylist', '#deny-list tr[data-id]');
        assert.equal(await page.locator('#deny-form').count(), 0, 'no add form');
        assert.equal(await page.locator('#deny-list button').count(), 0, 'no Remove buttons');
        assert.equal(await page.locator('#deny-force, #deny-save').count(), 0, 'no Save, no force');
        if (role === 'reader') await shot(page, 'denylist-reader');
        await view(page, `#/element/${BAD.link}`, '#evidence table');
        assert.equal(await page.locator('#view button, #view a[href^="#/denylist?"]').count(), 0, 'no edit control on the element page');
        noErrors(page, `${role} views`);
    });
}

test('sign out forgets the token; a token refused mid-session returns to the form', async () => {
    const page = await newPage();
    page.allowed.push(/status of 401/);
    await signIn(page, tokens.reader);
    await view(page, '#/agents', '#agents-table');
    await page.locator('#signout').click();
    await page.locator('#login').waitFor({ state: 'visible' });
    assert.equal(await page.evaluate(() => sessionStorage.length), 0, 'the token is gone');
    await page.reload();
    await page.locator('#login').waitFor({ state: 'visible' });
    await signIn(page, tokens.reader);
    await view(page, '#/overview/0', 'canvas#matrix[data-loaded=true]');
    await page.evaluate(() => sessionStorage.setItem('mrcfab.token', 'tok-revoked-0000000000'));
    await page.waitForFunction(() => /no longer accepts/.test(document.getElementById('login-msg').textContent), null, { timeout: 3000 });
    noErrors(page, 'sign out');
});
