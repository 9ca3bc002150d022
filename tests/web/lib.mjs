// SPDX-License-Identifier: MIT
// What the dashboard's browser tests share (dashboard.test.mjs on the lab fabric,
// dashboard_full.test.mjs on the full one): the API called directly, pages in Chromium that
// collect their console errors, signing in, waiting for a view, reading the matrix's pixels,
// and the accessibility walk. tests/web/run.sh passes MRCFAB_BASE, MRCFAB_TOKENS,
// MRCFAB_SCREENSHOTS and MRCFAB_CHROMIUM.

import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { chromium } from 'playwright-core';

export const BASE = process.env.MRCFAB_BASE;
const SHOTS = process.env.MRCFAB_SCREENSHOTS;
export const tokens = Object.fromEntries(fs.readFileSync(process.env.MRCFAB_TOKENS, 'utf8').split('\n')
    .filter((l) => l && !l.startsWith('#')).map((l) => l.split(/\s+/)).map(([t, role, name]) => [role === 'agent' ? name : role, t]));

// The colours app.css gives the states and marks, written out here rather than read from the
// page, so that a page that mixes them up fails.
export const RGB = {
    no_data: [196, 196, 196], ok: [0, 158, 115], degraded: [230, 159, 0], bad: [213, 94, 0],
    denied: [0, 114, 178], mark: [0, 0, 0], gap: [255, 255, 255],
};
export const colourName = (rgb) => Object.keys(RGB).find((k) => RGB[k].every((v, i) => v === rgb[i])) || `rgb(${rgb})`;

export async function call(method, url, token, body) {
    const res = await fetch(BASE + url, {
        method, headers: { Authorization: `Bearer ${token}`, ...(body ? { 'Content-Type': 'application/json' } : {}) },
        body: body ? JSON.stringify(body) : undefined,
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : null, headers: res.headers };
}

// The API's matrix of a plane, decoded: nib(r, c, 'up'|'down') → {state, denied, named}.
export async function apiMatrix(plane) {
    const r = await call('GET', `/api/v1/health/matrix?plane=${plane}`, tokens.admin);
    assert.equal(r.status, 200, 'GET /health/matrix');
    const cells = Buffer.from(r.body.cells, 'base64');
    const STATES = ['no_data', 'ok', 'degraded', 'bad'];
    return {
        ...r.body, etag: r.headers.get('etag'), b64: r.body.cells, cells,
        nib(row, col, dir) {
            const b = cells[row * r.body.t1 + col], n = dir === 'up' ? b >> 4 : b & 15;
            return { state: STATES[n & 3], denied: !!(n & 4), named: !!(n & 8) };
        },
    };
}

let browser;
export async function launch() {
    browser = await chromium.launch({ executablePath: process.env.MRCFAB_CHROMIUM || '/usr/bin/chromium', headless: true, args: ['--no-sandbox'] });
}
export async function close() {
    await browser?.close();
}

// A page at 1366 x 768 in a context of its own (sessionStorage is per context), collecting its
// console errors and uncaught exceptions.
export async function newPage() {
    const context = await browser.newContext({ viewport: { width: 1366, height: 768 } });
    const page = await context.newPage();
    page.errors = [];
    page.allowed = [];
    page.on('console', (m) => {
        if (m.type() === 'error' && !page.allowed.some((re) => re.test(m.text()))) page.errors.push(`console: ${m.text()}`);
    });
    page.on('pageerror', (e) => page.errors.push(`exception: ${e.message}`));
    return page;
}

export function noErrors(page, what) {
    assert.deepEqual(page.errors, [], `${what}: no console errors`);
}

export async function signIn(page, token) {
    await page.goto(`${BASE}/`);
    await page.locator('#token').fill(token);
    await page.locator('#login-form button[type=submit]').click();
    await page.locator('#app').waitFor({ state: 'visible' });
}

// Goes to a view and waits for its first refresh and what it must show.
export async function view(page, hash, selector) {
    await page.evaluate((h) => { location.hash = h; }, hash);
    await page.locator(selector).first().waitFor({ state: 'attached', timeout: 10000 });
    try {
        await page.waitForFunction(() => /^Live: updated/.test(document.getElementById('live').textContent), null, { timeout: 10000 });
    } catch (e) {
        throw new Error(`${hash}: no refresh in 10 s; the page says: ${await page.locator('#live').textContent()}`);
    }
}

export const shot = (page, name) => page.screenshot({ path: path.join(SHOTS, `${name}.png`) });

// The matrix's geometry as the page laid it out.
export function geometry(page) {
    return page.evaluate(() => {
        const d = document.getElementById('matrix').dataset;
        const [mw, mh] = d.marks ? d.marks.split('x').map(Number) : [0, 0];
        return { rows: +d.rows, cols: +d.cols, dw: +d.dirWidth, cw: +d.cellWidth, ch: +d.cellHeight, mw, mh, plane: +d.plane };
    });
}

// The colours drawn for one direction of cell (r, c), by name and pixel count: where cells are
// small, its half of the enlarged copy drawn over a cell not ok, else (or with own) its own
// pixels.
export async function dirColours(page, r, c, dir, own = false) {
    const g = await geometry(page);
    const x0 = c * g.cw + (dir === 'up' ? 0 : g.dw), y0 = r * g.ch;
    const rect = own && g.mw ? { x: x0, y: y0, w: g.dw, h: g.ch } : g.mw
        ? { x: c * g.cw + g.dw - (dir === 'up' ? g.mw : 0), y: y0 + (g.ch >> 1) - (g.mh >> 1), w: g.mw, h: g.mh }
        : { x: x0, y: y0, w: g.dw - 1, h: g.ch - 1 }; // big cells: the grid line left out
    const px = await page.evaluate(({ x, y, w, h }) => {
        const c = document.getElementById('matrix');
        const X = Math.max(0, x), Y = Math.max(0, y);
        const d = c.getContext('2d').getImageData(X, Y, Math.min(w, c.width - X), Math.min(h, c.height - Y)).data;
        return Array.from(d);
    }, rect);
    const out = {};
    for (let i = 0; i < px.length; i += 4) {
        const n = px[i + 3] === 255 ? colourName([px[i], px[i + 1], px[i + 2]]) : 'transparent';
        out[n] = (out[n] || 0) + 1;
    }
    return out;
}

// One pixel of the matrix as a colour name.
export async function pixel(page, x, y) {
    const d = await page.evaluate(([X, Y]) => Array.from(document.getElementById('matrix').getContext('2d').getImageData(X, Y, 1, 1).data), [x, y]);
    return d[3] === 255 ? colourName(d.slice(0, 3)) : 'transparent';
}

// Asserts what a direction shows: its state's colour, the denied hatching and the named dots
// exactly when they are due, and no other state's colour.
export async function assertDir(page, r, c, dir, want, what) {
    const plain = (want.state === 'ok' || want.state === 'no_data') && !want.denied && !want.named;
    const got = await dirColours(page, r, c, dir, plain);
    const states = ['no_data', 'ok', 'degraded', 'bad'];
    assert.ok(got[want.state] > 0, `${what}: ${dir} drawn ${want.state} (${JSON.stringify(got)})`);
    for (const s of states) if (s !== want.state) assert.ok(!got[s], `${what}: ${dir} not ${s} (${JSON.stringify(got)})`);
    assert.equal(!!got.denied, !!want.denied, `${what}: ${dir} ${want.denied ? '' : 'not '}hatched denied (${JSON.stringify(got)})`);
    assert.equal(!!got.mark, !!want.named, `${what}: ${dir} ${want.named ? '' : 'not '}dotted named (${JSON.stringify(got)})`);
}

// A control as the test names it, the same across the page's rebuilds of its tables: what it
// is and says, and how many controls before it in the page are the same.
const CONTROLS = 'a[href], button, input, select, textarea, summary, [tabindex]:not([tabindex="-1"])';
function describeControls(sel, only) {
    const seen = new Map();
    const out = [];
    for (const e of document.querySelectorAll(sel)) {
        const d = `${e.tagName.toLowerCase()}#${e.id}[${e.getAttribute('href') || e.getAttribute('name') || ''}] ${(e.getAttribute('aria-label') || e.textContent).trim().slice(0, 40)}`;
        const n = (seen.get(d) || 0) + 1;
        seen.set(d, n);
        if (only ? e === document.activeElement : !e.disabled && e.checkVisibility()) out.push(`${d} (${n})`);
    }
    return out;
}

// Every visible control of the page, and the ones Tab reaches going once round the page.
async function tabWalk(page) {
    const run = (only) => page.evaluate(([sel, fn, o]) => new Function(`return (${fn})`)()(sel, o), [CONTROLS, describeControls.toString(), only]);
    const controls = await run(false);
    const reached = [];
    for (let i = 0; i < 2 * controls.length + 10; i++) {
        await page.keyboard.press('Tab');
        const [d] = await run(true);
        if (d && d === reached[0]) break; // round once
        if (d && !reached.includes(d)) reached.push(d);
    }
    return { controls, reached };
}

// Tab reaches every control; no state is told by colour alone (every badge carries its word);
// readable at 1366 x 768 (the page does not scroll sideways; wide tables scroll in their box).
export async function accessible(page, hash) {
    // the plane tabs' counts in place first: the walk names controls by their text
    await page.waitForFunction(() => [...document.querySelectorAll('nav.planes a[data-plane]')].every((a) => a.querySelector('[data-count]')));
    const { controls, reached } = await tabWalk(page);
    const missed = controls.filter((c) => !reached.includes(c));
    assert.deepEqual(missed, [], `${hash}: every control is reached by Tab (${controls.length} controls)`);
    assert.ok(controls.some((c) => c.startsWith('button#signout')), `${hash}: the walk saw the page's controls`);
    const badges = await page.locator('#view .badge').evaluateAll((bs) => bs.map((b) => b.textContent.trim()));
    assert.ok(badges.length > 0, `${hash}: states shown`);
    for (const b of badges) assert.match(b, /[a-z]{2,}/, `${hash}: the badge '${b}' has a word`);
    const [sw, w] = await page.evaluate(() => [document.documentElement.scrollWidth, window.innerWidth]);
    assert.ok(sw <= w, `${hash}: ${sw} px wide in a ${w} px window`);
}

// Each plane's counts as the landing view's table and the plane tabs show them.
export async function landingCounts(page) {
    return page.evaluate(() => {
        const table = [...document.querySelectorAll('#planes-table tbody tr')].map((tr) => ({
            plane: Number(tr.dataset.plane),
            ...Object.fromEntries([...tr.querySelectorAll('td[data-count]')].map((td) => [td.dataset.count, Number(td.textContent.replace(/,/g, ''))])),
        }));
        const tabs = [...document.querySelectorAll('nav.planes a[data-plane]')].map((a) => ({
            plane: Number(a.dataset.plane),
            ...Object.fromEntries([...a.querySelectorAll('[data-count]')].map((s) => [s.dataset.count,
                Number(s.querySelector('[aria-hidden]').textContent.replace(/[^0-9]/g, ''))])),
            words: a.textContent,
        }));
        return { table, tabs };
    });
}

// Asserts the landing counts (table and tabs) equal a summary's.
export function assertCounts(got, summary, what) {
    const want = summary.planes.map((p) => ({ plane: p.plane, bad: p.bad, degraded: p.degraded, denied: p.denied }));
    assert.deepEqual(got.table, want, `${what}: the planes table's counts are /health/summary's`);
    assert.deepEqual(got.tabs.map(({ words, ...t }) => t), want, `${what}: the plane tabs' counts are /health/summary's`);
    for (const t of got.tabs) {
        const p = summary.planes[t.plane];
        assert.match(t.words, new RegExp(`Plane ${t.plane}.*${p.bad} bad.*${p.degraded} degraded.*${p.denied} denied`), `${what}: tab ${t.plane} says its counts in words`);
    }
}
