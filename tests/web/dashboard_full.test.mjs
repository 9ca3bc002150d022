// SPDX-License-Identifier: MIT
// The dashboard in Chromium against a live mrc-controller on the full fabric (131,072 hosts,
// 8 planes of 512 T0 x 256 T1; started by tests/web/run.sh full). Seeded over the API as the
// localizer and an operator would: every plane's coverage (each direction probed, so every
// link is judged), a link the prober finds 5 % lossy toward its T1, which its verdict names
// and its denylist entry takes out, a degraded link, a T1 a switch verdict names bad, and an
// operator's drain of a T0; and a second bad link with nothing else on it. Checked: the landing counts per plane in the table and in the tabs
// are /health/summary's, the problem list is /health/problems (bad first, paged), a full
// plane's matrix is drawn within 1 s of the click that opens it (measured in the page with
// performance marks, printed) from one request and shows the seeded cells, a new bad link is
// drawn within 2 s of the API having it while the unchanged polls are answered 304, keyboard
// and pointer find links at full size, and the element page shows the prober's evidence
// beside the agents', the verdict and the entries in force.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import {
    tokens, call, apiMatrix, launch, close, newPage, noErrors, signIn, view, shot, geometry, assertDir, accessible,
    landingCounts, assertCounts, pixel,
} from './lib.mjs';

const PLANES = 8;
const BAD = { plane: 3, link: 'p3-t0-100~p3-t1-200', row: 100, col: 200 }; // up: 5 % lost, named, denied
const BAD2 = { plane: 3, link: 'p3-t0-400~p3-t1-100', row: 400, col: 100 }; // down: 2 % lost, nothing else
const DEGRADED = { plane: 3, link: 'p3-t0-7~p3-t1-9', row: 7, col: 9 }; // down: 0.3 % lost
const DRAIN = { plane: 2, sw: 'p2-t0-5', row: 5 }; // an operator's maintenance
const BAD_T1 = { plane: 5, sw: 'p5-t1-42', col: 42 }; // a switch verdict
const LATER = { plane: 3, link: 'p3-t0-300~p3-t1-50', row: 300, col: 50 }; // goes bad during the run
const SINCE = '2026-12-01T22:00:00Z';
const COMPONENT = 'p3 U t0=100 t1=200';
let entry = 0; // the prober's denylist entry on BAD

const sleep = (ms) => new Promise((res) => setTimeout(res, ms));

async function seed() {
    // every direction of every plane carried probes this window: every link is judged ok
    let r = await call('POST', '/api/v1/probes', tokens.localizer, {
        coverage: Array.from({ length: PLANES }, (_, plane) => ({ plane, nic: 1000, uplink: 1000, hosts: 16384 })),
    });
    assert.equal(r.status, 202, 'coverage taken');
    r = await call('POST', '/api/v1/denylist', tokens.localizer, { element: BAD.link, scope: 'up', reason: `prober: ${COMPONENT} loses 5.0 %` });
    assert.equal(r.status, 201, `the prober's entry: ${JSON.stringify(r.body)}`);
    entry = r.body.id;
    r = await call('POST', '/api/v1/probes', tokens.localizer, {
        results: [{ element: BAD.link, scope: 'up', sent: 10000, lost: 500 }, { element: BAD2.link, scope: 'down', sent: 10000, lost: 200 },
            { element: DEGRADED.link, scope: 'down', sent: 10000, lost: 30 }],
        verdicts: [
            { component: COMPONENT, kind: 'link', elements: [{ element: BAD.link, scope: 'up' }], loss: 0.05, lost: 500, sent: 10000,
                horizon_s: 10, llr: 50.5, since: SINCE, state: 'denied', entries: [entry] },
            { component: 'p5 T1 42', kind: 'switch', elements: [{ element: BAD_T1.sw, scope: 'both' }], loss: 0.04, lost: 400, sent: 10000,
                horizon_s: 10, llr: 80, since: SINCE, state: 'logged', entries: [] },
        ],
    });
    assert.equal(r.status, 202, `results and verdicts taken: ${JSON.stringify(r.body)}`);
    r = await call('POST', '/api/v1/denylist', tokens.operator, { element: DRAIN.sw, reason: 'maintenance: optics swap' });
    assert.equal(r.status, 201, `the operator's drain: ${JSON.stringify(r.body)}`);
    for (let i = 0; i < 100; i++) {
        const s = (await call('GET', '/api/v1/health/summary', tokens.admin)).body;
        const p = s.planes;
        if (p[3].bad >= 2 && p[3].degraded >= 1 && p[5].bad >= 512 && p[2].denied >= 1) return;
        await sleep(100);
    }
    assert.fail('the seeded health never showed in /health/summary');
}

before(async () => {
    await seed();
    await launch();
});

after(close);

test("the landing view at full scale: each plane's counts in its table and tabs, what is wrong now, paged", async () => {
    const page = await newPage();
    await signIn(page, tokens.reader);
    await view(page, '#/overview', '#problems-table');
    const summary = (await call('GET', '/api/v1/health/summary', tokens.admin)).body;
    assert.equal(summary.planes.length, PLANES);
    assert.deepEqual(summary.planes[0], { ...summary.planes[0], bad: 0, degraded: 0, denied: 0 }, 'plane 0 is clean');
    assert.ok(summary.planes[3].bad >= 2 && summary.planes[5].bad >= 513 && summary.planes[2].denied >= 1, 'the seeded planes are sick');
    await page.waitForFunction((n) => document.querySelectorAll('#planes-table tbody tr').length === n, PLANES);
    assertCounts(await landingCounts(page), summary, 'full');
    for (const p of [3, 5]) {
        assert.equal(await page.locator(`nav.planes a[data-plane="${p}"]`).evaluate((a) => a.classList.contains('sick-bad')), true, `plane ${p}'s tab is marked sick`);
    }
    assert.equal(await page.locator('nav.planes a[data-plane="0"]').evaluate((a) => a.classList.contains('sick-bad')), false);

    // the problem list: /health/problems' first page, bad first (plane 3's links, then plane 5's T1)
    const problems = (await call('GET', '/api/v1/health/problems?limit=50', tokens.admin)).body;
    const rows = () => page.locator('#problems-table tbody tr').evaluateAll((trs) => trs.map((tr) => [tr.dataset.element, tr.dataset.state,
        tr.querySelector('a').getAttribute('href')]));
    let got = await rows();
    assert.deepEqual(got.map(([e, s]) => [e, s]), problems.items.map((x) => [x.element, x.state]), 'the first page is /health/problems\'');
    assert.deepEqual(got.slice(0, 3).map(([e, s]) => [e, s]), [[BAD.link, 'bad'], [BAD2.link, 'bad'], [BAD_T1.sw, 'bad']], 'bad first, by plane');
    for (const [e, , href] of got) assert.equal(href, `#/element/${encodeURIComponent(e)}`, `${e} links to its page`);
    assert.match(await page.locator('#problems-table tbody tr').first().textContent(), /p3-t0-100~p3-t1-200T0-T1 link3✕ bad ⊘ denied.*5\.00 %.*#\d+ prober \(up\).*link, denied: 5\.00 % over 10 s/);
    assert.equal(await page.locator('#problems-range').textContent(), `1–50 of ${problems.total.toLocaleString('en-US')}`);
    await shot(page, 'full-overview');
    // the next page
    await page.locator('#problems-next').click();
    await page.waitForFunction(() => /^51–/.test(document.getElementById('problems-range').textContent));
    const second = (await call('GET', '/api/v1/health/problems?offset=50&limit=50', tokens.admin)).body;
    got = await rows();
    assert.deepEqual(got.map(([e, s]) => [e, s]), second.items.map((x) => [x.element, x.state]), 'the second page is offset 50\'s');
    // the last page ends with the drained switch (denied only: last)
    const lastOffset = Math.floor((problems.total - 1) / 50) * 50;
    for (let offset = 100; offset <= lastOffset; offset += 50) {
        await page.locator('#problems-next').click();
        await page.waitForFunction((o) => document.getElementById('problems-range').textContent.startsWith(`${(o + 1).toLocaleString('en-US')}–`), offset);
    }
    assert.equal(await page.locator('#problems-next').isDisabled(), true, 'no page after the last');
    got = await rows();
    assert.deepEqual(got.at(-1).slice(0, 2), [DRAIN.sw, 'ok'], 'the denied-only switch comes last');
    noErrors(page, 'landing');
});

test('a full plane: its 512 x 256 matrix drawn within 1 s of the click, from one request', async () => {
    const page = await newPage();
    const requests = [];
    page.on('request', (q) => requests.push({ url: q.url(), t: Date.now() }));
    await signIn(page, tokens.admin);
    await view(page, '#/overview', '#planes-table');
    // the click's own time, in the page's clock
    await page.evaluate(() => document.addEventListener('click', () => performance.mark('test-click'), { capture: true, once: true }));
    const from = requests.length;
    await page.locator(`nav.planes a[data-plane="${BAD.plane}"]`).click();
    await page.locator(`canvas#matrix[data-plane="${BAD.plane}"][data-loaded=true]`).waitFor({ timeout: 5000 });
    const t = await page.evaluate(() => ({
        click: performance.measure('test-click-to-draw', 'test-click', 'mrc-matrix-drawn').duration,
        mount: performance.getEntriesByName('mrc-matrix-first-draw').at(-1).duration,
        fetch: performance.measure('test-fetch', 'mrc-plane-open', 'mrc-matrix-received').duration,
        paint: performance.measure('test-paint', 'mrc-matrix-received', 'mrc-matrix-drawn').duration,
        shown: document.getElementById('matrix').dataset.firstDrawMs,
    }));
    const drawnAt = requests.length;
    console.log(`# full fabric, plane ${BAD.plane} (512 x 256 links, both directions): drawn ${t.click.toFixed(1)} ms after the click ` +
        `(${t.mount.toFixed(1)} ms after the view mounted: ${t.fetch.toFixed(1)} ms to the parsed answer, ${t.paint.toFixed(1)} ms to decode and draw it; ` +
        `the page says ${t.shown} ms)`);
    assert.ok(t.click < 1000, `drawn ${t.click.toFixed(1)} ms after the click: within 1 s`);
    const api = requests.slice(from, drawnAt).map((q) => new URL(q.url)).filter((u) => u.pathname.startsWith('/api/'));
    assert.deepEqual(api.filter((u) => u.pathname === '/api/v1/health/matrix').map((u) => u.search), [`?plane=${BAD.plane}`], 'one GET /health/matrix');
    assert.deepEqual(api.filter((u) => /\/health\/links|\/switches/.test(u.pathname)).map((u) => u.pathname), [], 'no link or switch listing');

    const g = await geometry(page);
    assert.deepEqual([g.rows, g.cols], [512, 256]);
    const box = await page.locator('#matrix').boundingBox();
    assert.ok(box.width <= 1366 && box.width >= 512, `the plane's full width on screen (${box.width} px)`);
    // the seeded cells as the API's matrix has them: BAD up bad, denied and named, down ok;
    // BAD2 down bad; DEGRADED down degraded; a cell far from them plain ok
    const m = await apiMatrix(BAD.plane);
    assert.deepEqual(m.nib(BAD.row, BAD.col, 'up'), { state: 'bad', denied: true, named: true }, 'the API: BAD up');
    assert.deepEqual(m.nib(DEGRADED.row, DEGRADED.col, 'down'), { state: 'degraded', denied: false, named: false }, 'the API: DEGRADED down');
    await assertDir(page, BAD.row, BAD.col, 'up', m.nib(BAD.row, BAD.col, 'up'), 'BAD');
    await assertDir(page, DEGRADED.row, DEGRADED.col, 'down', m.nib(DEGRADED.row, DEGRADED.col, 'down'), 'DEGRADED');
    await assertDir(page, 400, 20, 'up', { state: 'ok' }, 'an ok cell');
    assert.deepEqual(m.nib(BAD2.row, BAD2.col, 'down'), { state: 'bad', denied: false, named: false }, 'the API: BAD2 down');
    await assertDir(page, BAD2.row, BAD2.col, 'down', m.nib(BAD2.row, BAD2.col, 'down'), 'BAD2');
    assert.equal(await pixel(page, BAD2.col * g.cw + g.dw, BAD2.row * g.ch), 'bad', 'the pixel of the seeded bad link (its down half) is the bad colour');
    assert.equal(await pixel(page, BAD2.col * g.cw, BAD2.row * g.ch), 'ok', 'and its up half the ok colour');
    // every other cell's own pixels, in the page: ok, where no enlarged copy lies over them
    const wrong = await page.evaluate(({ b64, mw, mh }) => {
        const cells = Uint8Array.from(atob(b64), (ch) => ch.charCodeAt(0));
        const c = document.getElementById('matrix'), d = c.dataset, cw = +d.cellWidth, ch = +d.cellHeight, cols = +d.cols, rows = +d.rows;
        const px = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
        const covered = new Uint8Array(c.width * c.height);
        cells.forEach((b, i) => {
            if (b === 0x11) return;
            const x0 = (i % cols) * cw + cw / 2 - mw - 1, y0 = Math.floor(i / cols) * ch + (ch >> 1) - (mh >> 1) - 1;
            for (let y = Math.max(0, y0); y < Math.min(c.height, y0 + mh + 2); y++) covered.fill(1, y * c.width + Math.max(0, x0), y * c.width + Math.min(c.width, x0 + 2 * mw + 2));
        });
        let bad = 0, checked = 0;
        for (let i = 0; i < cells.length; i++) {
            if (cells[i] !== 0x11) continue;
            const x = (i % cols) * cw, y = Math.floor(i / cols) * ch;
            if (covered[y * c.width + x]) continue;
            checked++;
            const p = (y * c.width + x) * 4;
            if (px[p] !== 0 || px[p + 1] !== 158 || px[p + 2] !== 115) bad++;
        }
        return { bad, checked, rows };
    }, { b64: m.b64, mw: g.mw, mh: g.mh });
    assert.equal(wrong.bad, 0, `every ok cell not under an enlarged copy is drawn ok (${wrong.checked} checked)`);
    assert.ok(wrong.checked > 120000, `most cells checked (${wrong.checked})`);

    // the pointer names the link under it at full size; the keyboard walks to it; Enter opens it
    // (at whole pixels: Chromium rounds a fractional pointer position, and a row is one pixel)
    await page.locator('#matrix').hover({ position: { x: BAD.col * g.cw + 1, y: BAD.row * g.ch + (g.ch >> 1) } });
    assert.match(await page.locator('#matrix-desc').textContent(),
        /^p3-t0-100~p3-t1-200 \(row T0 100, column T1 200\): up ✕ bad, ⊘ denied, ◎ named by a verdict; down ✓ ok; loss 5\.00 %/);
    await page.mouse.move(0, 0);
    await page.locator('#matrix').focus();
    for (let i = 0; i < 3; i++) await page.keyboard.press('PageDown');
    for (let i = 0; i < 4; i++) await page.keyboard.press('ArrowDown');
    for (let i = 0; i < 12; i++) await page.keyboard.press('Shift+ArrowRight');
    for (let i = 0; i < 8; i++) await page.keyboard.press('ArrowRight');
    assert.match(await page.locator('#matrix-desc').textContent(), /^p3-t0-100~p3-t1-200 \(row T0 100, column T1 200\): up ✕ bad/);
    // the text list of the links not ok
    const list = await page.locator('#not-ok-table tbody tr').evaluateAll((trs) => trs.map((tr) => [tr.dataset.link, tr.dataset.state]));
    assert.deepEqual(list, [[BAD.link, 'bad'], [BAD2.link, 'bad'], [DEGRADED.link, 'degraded']], 'the links not ok as text, worst first');
    assert.match(await page.locator(`#not-ok-table tr[data-link="${BAD.link}"]`).textContent(), /✕ bad ⊘ denied ◎ named✓ ok5\.00 %link, denied/);
    await shot(page, 'full-plane');
    // the zoom: larger cells, the same links under the keyboard's cursor
    await page.locator('#matrix-zoom').click();
    const z = await geometry(page);
    assert.ok(z.cw >= 8 && z.ch >= 8, `zoomed cells ${z.cw} x ${z.ch} px`);
    // (BAD2: the keyboard's cursor is drawn over BAD)
    await assertDir(page, BAD2.row, BAD2.col, 'down', m.nib(BAD2.row, BAD2.col, 'down'), 'BAD2 zoomed');
    await assertDir(page, BAD2.row, BAD2.col, 'up', m.nib(BAD2.row, BAD2.col, 'up'), 'BAD2 zoomed');
    await page.locator('#matrix').focus();
    await page.keyboard.press('ArrowUp');
    await page.keyboard.press('ArrowDown');
    assert.match(await page.locator('#matrix-desc').textContent(), /^p3-t0-100~p3-t1-200 /);
    await page.keyboard.press('Enter');
    await page.waitForFunction((l) => location.hash === `#/element/${encodeURIComponent(l)}`, BAD.link);
    await page.locator('#evidence-table').waitFor();
    noErrors(page, 'full plane');
});

test('a full plane stays live: unchanged polls answered 304, a new bad link drawn within 2 s', async () => {
    const page = await newPage();
    const seen = { 200: 0, 304: 0, other: 0 };
    page.on('response', (res) => {
        if (!res.url().includes('/api/v1/health/matrix')) return;
        if (res.status() === 200 || res.status() === 304) seen[res.status()]++;
        else seen.other++;
    });
    await signIn(page, tokens.reader);
    await view(page, `#/overview/${LATER.plane}`, 'canvas#matrix[data-loaded=true]');
    const v0 = await page.locator('#matrix').getAttribute('data-version');
    await sleep(3500);
    assert.equal(seen[200], 1, `one picture while the plane is unchanged (${JSON.stringify(seen)})`);
    assert.ok(seen[304] >= 2, `the polls of an unchanged plane answered 304 (${JSON.stringify(seen)})`);
    const before = await apiMatrix(LATER.plane);
    assert.equal(before.version, before.etag, 'the matrix\'s version is its ETag');
    assert.equal(await page.locator('#matrix').getAttribute('data-version'), v0, 'the same picture');

    const r = await call('POST', '/api/v1/probes', tokens.localizer, { results: [{ element: LATER.link, scope: 'up', sent: 10000, lost: 400 }] });
    assert.equal(r.status, 202);
    let t0 = 0;
    for (let i = 0; i < 100 && !t0; i++) {
        if ((await apiMatrix(LATER.plane)).nib(LATER.row, LATER.col, 'up').state === 'bad') t0 = Date.now();
        else await sleep(50);
    }
    assert.ok(t0, 'the API\'s matrix has the new bad link');
    const g = await geometry(page);
    await page.waitForFunction(([x, y]) => {
        const d = document.getElementById('matrix').getContext('2d').getImageData(x, y, 1, 1).data;
        return d[0] === 213 && d[1] === 94 && d[2] === 0;
    }, [LATER.col * g.cw + 1, LATER.row * g.ch], { timeout: 5000, polling: 20 });
    const took = Date.now() - t0;
    console.log(`# full fabric, plane ${LATER.plane}: the new bad link drawn ${took} ms after the API's matrix had it`);
    assert.ok(took <= 2000, `drawn ${took} ms after the API had it: within 2 s`);
    await assertDir(page, LATER.row, LATER.col, 'up', { state: 'bad' }, 'LATER');
    await page.locator(`#not-ok-table tr[data-link="${LATER.link}"][data-state=bad]`).waitFor({ timeout: 2000 });
    assert.equal(seen[200], 2, `redrawn once, on the change (${JSON.stringify(seen)})`);
    await sleep(1500);
    assert.ok(seen[304] >= 3 && seen.other === 0, `304s again after it (${JSON.stringify(seen)})`);
    noErrors(page, 'live');
});

test("the element page: the prober's evidence beside the agents', the verdict, the entries in force", async () => {
    const page = await newPage();
    await signIn(page, tokens.reader);
    await view(page, `#/element/${BAD.link}`, '#evidence-table');
    await page.locator('#verdict-table').waitFor();
    const cells = (dir) => page.locator(`#evidence-table tr[data-dir=${dir}] td`).allTextContents();
    // State, Measured, agents: sent lost loss reporters assumed-bad; prober: sent lost loss from; last evidence
    const up = await cells('up'), down = await cells('down');
    assert.deepEqual(up.slice(0, 11), ['✕ bad ⊘ denied', 'bad', '0', '0', '0.000 %', '0', '0', '10,000', '500', '5.000 %', 'its own results']);
    assert.deepEqual(down.slice(0, 11), ['✓ ok', 'ok', '0', '0', '0.000 %', '0', '0', '1,000', '0', '0.000 %', "the plane's coverage"]);
    const verdict = await page.locator('#verdict-table tbody td').allTextContents();
    assert.deepEqual(verdict, [COMPONENT, 'link', 'denied', '5.000 %', '500 of 10,000', '10 s', '50.5', '2026-12-01 22:00:00Z', `#${entry}`]);
    const denied = await page.locator('#denied-table tbody td').allTextContents();
    assert.deepEqual(denied, [`#${entry}`, BAD.link, 'up', 'prober', `prober: ${COMPONENT} loses 5.0 %`]);
    await page.locator(`#element-deny tr[data-id="${entry}"]`).waitFor();
    await shot(page, 'full-element');

    // the T1 the switch verdict names, and the drained T0
    await view(page, `#/element/${BAD_T1.sw}`, '#switch-table');
    await page.locator('#verdict-table').waitFor();
    assert.match(await page.locator('#switch-table tbody').textContent(), /✕ bad/);
    assert.deepEqual((await page.locator('#verdict-table tbody td').allTextContents()).slice(0, 3), ['p5 T1 42', 'switch', 'logged']);
    await view(page, `#/element/${DRAIN.sw}`, '#switch-table');
    await page.locator('#denied-table').waitFor();
    assert.match(await page.locator('#denied-table tbody').textContent(), /p2-t0-5\s*both\s*operator\s*maintenance: optics swap/);
    assert.match(await page.locator('#switch-table tbody').textContent(), /✓ ok ⊘ denied/);
    noErrors(page, 'element');
});

test('the drained T0 and the bad T1 are drawn as lines: hatched and dotted', async () => {
    const page = await newPage();
    await signIn(page, tokens.reader);
    await view(page, `#/overview/${DRAIN.plane}`, 'canvas#matrix[data-loaded=true]');
    let m = await apiMatrix(DRAIN.plane);
    for (const c of [0, 100, 255]) {
        for (const dir of ['up', 'down']) {
            assert.deepEqual(m.nib(DRAIN.row, c, dir), { state: 'ok', denied: true, named: false });
            await assertDir(page, DRAIN.row, c, dir, m.nib(DRAIN.row, c, dir), `drained T0, T1 ${c}`);
        }
    }
    await view(page, `#/overview/${BAD_T1.plane}`, `canvas#matrix[data-plane="${BAD_T1.plane}"][data-loaded=true]`);
    m = await apiMatrix(BAD_T1.plane);
    for (const r of [0, 255, 511]) {
        assert.deepEqual(m.nib(r, BAD_T1.col, 'up'), { state: 'bad', denied: false, named: true });
        await assertDir(page, r, BAD_T1.col, 'up', m.nib(r, BAD_T1.col, 'up'), `bad T1, T0 ${r}`);
    }
    assert.match(await page.locator('#not-ok-table caption').textContent(), /^512 of 131,072 links are not ok, denied or named \(the worst 200 shown\)/);
    noErrors(page, 'lines');
});

test('accessibility and fit at full scale: Tab reaches every control, each state has a word, nothing wider than a laptop', async () => {
    const page = await newPage();
    await signIn(page, tokens.admin);
    for (const [hash, ready] of [['#/overview', '#problems-table'], [`#/overview/${BAD.plane}`, '#not-ok-table'],
        [`#/element/${BAD.link}`, '#evidence-table']]) {
        await view(page, hash, ready);
        await accessible(page, hash);
    }
    noErrors(page, 'accessibility');
});
