// SPDX-License-Identifier: MIT
// The dashboard served by a FOLLOWER of three controllers on a real etcd (tests/web/run.sh ha,
// which passes MRCFAB_BASE: the follower's URL, MRCFAB_LEADER: the leader's, and
// MRCFAB_FOLLOWER_PID). The health views and the agents are the leader's (a follower fetches
// them from the leader: a browser's redirect to another origin would drop the token), the
// controllers' panel names the leader with its epoch and links to the others' dashboards, and
// once the follower is killed the page says it does not answer and offers the other two.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { BASE, tokens, call, launch, close, newPage, noErrors, signIn, view, shot, landingCounts, assertCounts } from './lib.mjs';

const LEADER = process.env.MRCFAB_LEADER;
const PID = Number(process.env.MRCFAB_FOLLOWER_PID);
const BAD = 'p0-t0-2~p0-t1-1';

// the leader's API, directly: a follower redirects writes, and fetch() would drop the token
// on the way to another origin
async function atLeader(method, url, token, body) {
    const res = await fetch(LEADER + url, {
        method, redirect: 'manual',
        headers: { Authorization: `Bearer ${token}`, ...(body ? { 'Content-Type': 'application/json' } : {}) },
        body: body ? JSON.stringify(body) : undefined,
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : null };
}

// the reports of dashboard.test.mjs, to the leader: the up direction of BAD loses 5 %
async function seed() {
    for (let h = 0; h < 8; h++) {
        const tok = tokens[`h${h}`];
        let r = await atLeader('POST', '/api/v1/agents', tok, { host: `h${h}`, version: '0.1.0', mode: 'srv6', ports: [{ port: 0, up: true }, { port: 1, up: true }] });
        assert.equal(r.status, 200, `h${h} registers with the leader`);
        const evs = [];
        for (let q = 0; q < 8; q++) {
            if (q === h) continue;
            for (const plane of [0, 1]) {
                for (const t1 of [0, 1]) {
                    const local = Math.floor(q / 2) === Math.floor(h / 2);
                    if (local && t1 === 1) continue;
                    const lossy = plane === 0 && t1 === 1 && Math.floor(h / 2) === 2 && !local;
                    evs.push({ peer: `h${q}`, ev: (plane << 29) | (t1 << 18), sent: 10000, lost: lossy ? 500 : 0, state: 'good' });
                }
            }
        }
        r = await atLeader('POST', '/api/v1/reports', tok, { host: `h${h}`, evs });
        assert.equal(r.status, 202, `h${h} reports to the leader`);
    }
    for (let i = 0; i < 100; i++) {
        const l = await atLeader('GET', '/api/v1/health/links?state=bad', tokens.admin);
        if (l.body.items.length) return;
        await new Promise((res) => setTimeout(res, 100));
    }
    assert.fail('the seeded link never turned bad at the leader');
}

let leader, self;
before(async () => {
    await seed();
    leader = (await atLeader('GET', '/api/v1/cluster', tokens.reader)).body;
    // each controller lists the others once it has read their membership keys
    for (let i = 0; i < 100; i++) {
        self = (await call('GET', '/api/v1/cluster', tokens.reader)).body;
        if (self.members.length === 3) break;
        await new Promise((res) => setTimeout(res, 100));
    }
    assert.equal(self.members.length, 3, 'the follower lists three controllers');
    assert.equal(leader.self.role, 'leader', 'MRCFAB_LEADER leads');
    assert.equal(self.self.role, 'follower', 'MRCFAB_BASE follows');
    await launch();
});

after(close);

test("a follower's dashboard: the health views and the agents are the leader's", async () => {
    const page = await newPage();
    await signIn(page, tokens.reader);
    await view(page, '#/overview', '#problems-table');
    const summary = (await atLeader('GET', '/api/v1/health/summary', tokens.admin)).body;
    assert.deepEqual(summary.planes.map((p) => [p.bad, p.degraded, p.denied]), [[1, 0, 0], [0, 0, 0]], "the leader's summary: the seeded link bad");
    assertCounts(await landingCounts(page), summary, "the follower's page");
    const rows = await page.locator('#problems-table tbody tr').evaluateAll((trs) => trs.map((tr) => tr.dataset.element));
    assert.ok(rows.includes(BAD), "the leader's bad link is listed on the follower's page");
    await shot(page, 'ha-follower-overview');
    await view(page, '#/overview/0', 'canvas#matrix[data-loaded=true]');
    await page.locator(`#not-ok-table tr[data-link="${BAD}"][data-state=bad]`).waitFor();
    await view(page, '#/agents', '#agents-table');
    assert.equal(await page.locator('#agents-table tbody tr').count(), 8, 'the eight agents that registered with the leader');
    noErrors(page, "the follower's views");
});

test("the controllers' panel names the leader, its epoch, and links to the others' dashboards", async () => {
    const page = await newPage();
    await signIn(page, tokens.reader);
    await view(page, '#/overview', '#planes-table');
    const [sw, w] = await page.evaluate(() => [document.querySelector('header.top').scrollHeight, document.querySelector('#signout').offsetTop]);
    assert.ok(w < 20, `the header holds on one line at 1366 px (Sign out at ${w} px of ${sw})`);
    const summary = page.locator('#cluster-summary');
    await summary.waitFor();
    const text = await summary.textContent();
    assert.match(text, new RegExp(`follower ${self.self.name} · leader ${leader.self.name}, epoch ${leader.leader.epoch}$`));
    assert.match(text, /○ follower/, 'the role in a word and a symbol');
    await summary.click();
    await page.waitForFunction(() => document.querySelectorAll('#cluster-table tbody tr').length === 3);
    const rows = await page.locator('#cluster-table tbody tr').evaluateAll((trs) => trs.map((tr) => ({
        name: tr.dataset.member, role: tr.dataset.role, href: tr.querySelector('a')?.getAttribute('href') || null, text: tr.textContent,
    })));
    assert.equal(rows.length, 3, 'three controllers');
    assert.deepEqual(rows.filter((r) => r.role === 'leader').map((r) => r.name), [leader.self.name], 'the leader marked, and only it');
    assert.match(rows.find((r) => r.role === 'leader').text, /★ leader/);
    for (const r of rows) {
        const m = self.members.find((x) => x.name === r.name);
        if (r.name === self.self.name) assert.equal(r.href, null, 'no link to this page');
        else assert.equal(r.href, `${m.url}/`, `${r.name}: a link to its dashboard`);
    }
    assert.match(await page.locator('#cluster-leader').textContent(), new RegExp(leader.self.name));
    await shot(page, 'ha-cluster-panel');
    noErrors(page, 'the panel');
});

test("a change asked of a follower's page is not followed: it says to make it on the leader's", async () => {
    const page = await newPage();
    await signIn(page, tokens.admin);
    await view(page, '#/denylist', '#deny-form');
    await page.locator('#deny-element').fill('p0-t1-1');
    await page.locator('#deny-reason').fill('web ha test');
    await page.locator('#deny-preview').click();
    await page.locator('#deny-error').waitFor();
    assert.match(await page.locator('#deny-error').textContent(), /this controller follows another.*leader's dashboard.*\(HTTP 307\)/);
    assert.equal(await page.locator('#cluster-down').isVisible(), false, 'no "does not answer" banner: it answered');
    const d = await atLeader('GET', '/api/v1/denylist', tokens.admin);
    assert.equal(d.body.entries.length, 0, 'nothing stored');
    noErrors(page, 'a change on a follower');
});

test('the follower killed: the page says it does not answer and offers the other two', async () => {
    const page = await newPage();
    page.allowed.push(/ERR_CONNECTION_REFUSED|Failed to load resource/);
    await signIn(page, tokens.reader);
    await view(page, '#/overview', '#planes-table');
    await page.locator('#cluster-summary').waitFor();
    process.kill(PID, 'SIGKILL');
    const down = page.locator('#cluster-down');
    await down.waitFor({ state: 'visible', timeout: 5000 });
    assert.match(await down.textContent(), new RegExp(`The controller serving this page, ${self.self.name} \\(${BASE}\\), does not answer`));
    const links = await down.locator('a').evaluateAll((as) => as.map((a) => [a.dataset.member, a.getAttribute('href'), a.textContent]));
    const want = self.members.filter((m) => m.name !== self.self.name).map((m) => [m.name, `${m.url}/`]);
    assert.deepEqual(links.map(([n, h]) => [n, h]).sort(), want.sort(), "links to the other two controllers' dashboards");
    assert.ok(links.some(([n, , t]) => n === leader.self.name && /\(leader\)/.test(t)), 'the leader named as such');
    await shot(page, 'ha-follower-down');
    // the leader's link opens its dashboard, which asks for the token again (kept per address)
    await down.locator(`a[data-member="${leader.self.name}"]`).click();
    await page.waitForURL(`${LEADER}/`);
    await page.locator('#login').waitFor({ state: 'visible' });
    noErrors(page, 'the follower down');
});
