// SPDX-License-Identifier: MIT
// The landing view, #/overview: every plane's counts of bad, degraded and denied elements
// (GET /health/summary) and the fabric-wide list of what is wrong now (GET /health/problems:
// bad first, then degraded, then denied only; paged), each row linking to its element's page.
// #/overview/P is one plane's view (plane.js), with the same tabs.

import { api } from './api.js';
import { planeTabs, getSummary, COUNTS } from './planes.js';
import * as plane from './plane.js';
import { el, badge, table, render, num, pct, elementLink, deniedText, verdictText } from './ui.js';

const PAGE = 50; // problem rows a page
const KIND = { switch: 'switch', link: 'T0-T1 link', host_port: 'host port' };
const ORDER = ['bad', 'degraded', 'ok', 'no_data'];

// "131,071 ok, 1 bad": the states an element kind has on a plane, worst first, zeros left out.
function byState(counts) {
    const parts = ORDER.filter((s) => counts[s]).map((s) => `${num(counts[s])} ${s === 'no_data' ? 'no data' : s}`);
    return parts.length ? parts.join(', ') : 'none';
}

export function mount(root, ctx, params) {
    if (params[0] !== undefined && params[0] !== '') return plane.mount(root, ctx, params);
    const tabs = planeTabs(ctx.fabric.per_plane, null);
    const planes = el('div', { id: 'planes-summary' });
    const list = el('div', { id: 'problems' });
    const where = el('span', { id: 'problems-range', 'aria-live': 'polite' });
    const prev = el('button', { type: 'button', id: 'problems-prev', onclick: () => go(-PAGE) }, `Previous ${PAGE}`);
    const next = el('button', { type: 'button', id: 'problems-next', onclick: () => go(PAGE) }, `Next ${PAGE}`);
    root.append(
        el('div', { class: 'title-row' }, el('h2', {}, 'Overview — every plane'), tabs.node),
        el('section', { 'aria-labelledby': 'planes-h' }, el('h3', { id: 'planes-h' }, 'Planes'),
            el('p', { class: 'muted' }, 'Elements are switches, T0-T1 links and host ports (NIC-T0 links); denied: an entry in force excludes it, whatever its state.'),
            planes),
        el('section', { 'aria-labelledby': 'problems-h' }, el('h3', { id: 'problems-h' }, 'What is wrong now'),
            el('p', { class: 'muted' }, 'Every element not ok or denied, in every plane: bad first, then degraded, then denied only; then by plane and name.'),
            el('div', { class: 'pager' }, prev, ' ', where, ' ', next), list),
    );

    let offset = 0;
    let seq = 0; // the newest request's: an older answer arriving late is dropped
    let dead = false;

    async function loadProblems() {
        const mine = ++seq;
        const page = await api('/api/v1/health/problems', { query: { offset, limit: PAGE } });
        if (dead || mine !== seq) return;
        if (offset > 0 && offset >= page.total) { // the list shrank under this page
            offset = Math.max(0, Math.floor((page.total - 1) / PAGE) * PAGE);
            return loadProblems();
        }
        renderProblems(page);
    }

    function go(delta) {
        offset = Math.max(0, offset + delta);
        loadProblems().catch((e) => ctx.flash(`The problem list was not read: ${e.message}`, true));
    }

    function renderPlanes(summary) {
        render(planes, JSON.stringify(summary.planes), () => table(null,
            ['Plane', badge('bad'), badge('degraded'), badge('denied'), 'T0-T1 links', 'Host ports', 'Switches'],
            summary.planes.map((p) => el('tr', { 'data-plane': p.plane, class: p.bad ? 'sick-bad' : p.degraded ? 'sick-degraded' : null },
                el('td', {}, el('a', { href: `#/overview/${p.plane}` }, `Plane ${p.plane}`)),
                COUNTS.map((c) => el('td', { class: 'n', 'data-count': c }, num(p[c]))),
                el('td', {}, byState(p.links)), el('td', {}, byState(p.host_ports)), el('td', {}, byState(p.switches)))),
            { id: 'planes-table' }));
    }

    function renderProblems(page) {
        const first = page.total ? offset + 1 : 0, last = offset + page.items.length;
        where.textContent = page.total ? `${num(first)}–${num(last)} of ${num(page.total)}` : 'none';
        prev.disabled = offset === 0;
        next.disabled = last >= page.total;
        render(list, JSON.stringify([offset, page.total, page.items]), () => {
            if (!page.total) return el('p', { id: 'problems-none' }, 'Nothing is wrong: every element is ok or has no data yet, and none is denied.');
            return el('div', { class: 'list-scroll' }, table(
                `${num(page.total)} ${page.total === 1 ? 'element is' : 'elements are'} not ok or denied`,
                ['Element', 'Kind', 'Plane', 'State', 'Measured', 'Loss', 'Denied', 'Verdict'],
                page.items.map((x) => el('tr', { 'data-element': x.element, 'data-state': x.state, 'data-plane': x.plane },
                    el('td', {}, elementLink(x.element)), el('td', {}, KIND[x.kind] || x.kind), el('td', {}, x.plane),
                    el('td', {}, badge(x.state), x.denied?.length ? [' ', badge('denied')] : null),
                    el('td', {}, x.measured === 'no_data' ? 'no data' : x.measured),
                    el('td', {}, x.kind === 'switch' ? `${pct(x.loss_rate, 1)} of its links` : pct(x.loss_rate)),
                    el('td', {}, deniedText(x.denied)), el('td', {}, verdictText(x.verdict)))),
                { id: 'problems-table' }));
        });
    }

    return {
        async refresh() {
            const [summary] = await Promise.all([getSummary(), loadProblems()]);
            if (dead) return;
            tabs.update(summary);
            renderPlanes(summary);
        },
        unmount() {
            dead = true;
        },
    };
}
