// SPDX-License-Identifier: MIT
// One element's page (a switch, a T0-T1 link or a host port): its health history as a chart,
// the evidence its state rests on (each direction's: the agents' beside the prober's), the
// prober's verdict that names it, the denylist entries in force on it and every entry that
// covers it, and its audit trail.

import { api, getDenylist, getAudit } from './api.js';
import { drawHistory } from './chart.js';
import { entryRows } from './denylist.js';
import { el, badge, table, render, pct, num, stamp, kindOf, sameElement, elementLink, errorBox, STATES } from './ui.js';

const KIND = { link: 'T0-T1 link', port: 'host port (NIC-T0 link)', switch: 'switch' };

// Switches' tiers and hosts' T0s do not change while the controller runs: asked once.
const tiers = new Map();
const portT0 = new Map();

async function tierOf(name) {
    if (!tiers.has(name)) tiers.set(name, (await api(`/api/v1/switches/${encodeURIComponent(name)}`)).tier);
    return tiers.get(name);
}

// The T0 whose link listing holds this link or port, and the switches whose entries cover it.
async function whereIs(name, kind) {
    if (kind === 'link') {
        const [a, b] = name.split('~');
        const t0 = (await tierOf(a)) === 't0' ? a : b;
        return { t0, covers: [a, b] };
    }
    if (kind === 'port') {
        if (!portT0.has(name)) {
            const [host, port] = name.split(':');
            const prof = await api(`/api/v1/hosts/${encodeURIComponent(host)}/profile`);
            portT0.set(name, prof.ports.find((p) => p.port === Number(port))?.t0 || null);
        }
        const t0 = portT0.get(name);
        return { t0, covers: t0 ? [t0] : [] };
    }
    return { t0: null, covers: [] };
}

// Each direction's evidence: its state, then the agents' and the prober's side by side.
function evidenceTable(item) {
    const th = (t, attrs = {}) => el('th', { scope: 'col', ...attrs }, t);
    const word = (s) => STATES[s]?.word || s;
    const rows = ['up', 'down'].map((d) => {
        const x = item[d], a = x.agents || {}, p = x.prober || {};
        return el('tr', { 'data-dir': d },
            el('th', { scope: 'row' }, d === 'up' ? 'up (toward the T1, or from the host)' : 'down'),
            el('td', {}, badge(x.state), x.denied ? [' ', badge('denied')] : null), el('td', {}, word(x.measured)),
            el('td', { class: 'n' }, num(a.sent)), el('td', { class: 'n' }, num(a.lost)), el('td', { class: 'n' }, pct(a.loss_rate, 3)),
            el('td', { class: 'n' }, num(a.sources)), el('td', { class: 'n' }, num(a.assumed_bad_evs)),
            el('td', { class: 'n', 'data-src': 'prober-sent' }, num(p.sent)), el('td', { class: 'n', 'data-src': 'prober-lost' }, num(p.lost)),
            el('td', { class: 'n', 'data-src': 'prober-loss' }, pct(p.loss_rate, 3)),
            el('td', {}, !p.sent ? 'not probed' : p.own ? 'its own results' : "the plane's coverage"),
            el('td', {}, stamp(x.last_evidence)));
    });
    return el('div', { class: 'wide-scroll' }, el('table', { id: 'evidence-table' },
        el('caption', {}, `${item.link}: ${word(item.state)}, measured ${word(item.measured)}`),
        el('thead', {},
            el('tr', {}, th('Direction', { rowspan: 2 }), th('State', { rowspan: 2 }), th('Measured', { rowspan: 2 }),
                th("The agents' reports", { colspan: 5, class: 'group' }), th("The prober's", { colspan: 4, class: 'group' }),
                th('Last evidence', { rowspan: 2 })),
            el('tr', {}, ['Sent', 'Lost', 'Loss', 'Reporters', 'Assumed-bad EVs', 'Sent', 'Lost', 'Loss', 'From'].map((t) => th(t)))),
        el('tbody', {}, rows)));
}

// The prober's verdict that names an element (or null).
function verdictBlock(v) {
    if (!v) return el('p', { id: 'verdict-none' }, 'No prober verdict names it.');
    return table(null, ['Component', 'Kind', 'State', 'Loss', 'Lost of sent', 'Horizon', 'LLR', 'Since', 'Entries'], [[
        v.component, v.kind, v.state, pct(v.loss, 3), `${num(v.lost)} of ${num(v.sent)}`, `${num(v.horizon_s)} s`,
        v.llr === undefined ? '—' : Number(v.llr).toFixed(1), stamp(v.since),
        v.entries?.filter((id) => id > 0).length ? v.entries.filter((id) => id > 0).map((id) => `#${id}`).join(', ') : 'none yet',
    ]], { id: 'verdict-table' });
}

// The entries in force on it as the health engine applies them (its own and its switches').
function deniedBlock(denied) {
    if (!denied?.length) return el('p', { id: 'denied-none' }, 'None is in force on it.');
    return table(null, ['ID', 'Element', 'Scope', 'Source', 'Reason'],
        denied.map((d) => el('tr', { 'data-id': d.id }, [`#${d.id}`, elementLink(d.element), d.scope, d.source, d.reason].map((c) => el('td', {}, c)))),
    { id: 'denied-table' });
}

export function mount(root, ctx, params) {
    const name = decodeURIComponent(params.join('/'));
    const kind = kindOf(name);
    const state = el('span', { id: 'element-state' });
    const canvas = el('canvas', { class: 'chart', id: 'history-chart', role: 'img', 'aria-label': `Loss rate of ${name} over time; the samples are listed below` });
    const samples = el('div');
    const evidence = el('div', { id: 'evidence' });
    const verdict = el('div', { id: 'verdict' });
    const inForce = el('div', { id: 'element-denied' });
    const deny = el('div', { id: 'element-deny' });
    const audit = el('div', { id: 'element-audit' });
    const fault = el('div');
    root.append(
        el('h2', {}, `${name} `, state),
        el('p', { class: 'muted' }, `A ${KIND[kind]}.`,
            ctx.canEdit ? [' ', el('a', { href: `#/denylist?element=${encodeURIComponent(name)}` }, 'Add a denylist entry for it')] : null),
        fault,
        el('section', { 'aria-labelledby': 'hist-h' }, el('h3', { id: 'hist-h' }, 'Health history'),
            el('div', { class: 'chart-box' }, canvas), el('details', {}, el('summary', {}, 'Samples as a table'), samples)),
        el('section', { 'aria-labelledby': 'ev-h' }, el('h3', { id: 'ev-h' }, 'Evidence'), evidence),
        el('section', { 'aria-labelledby': 'verdict-h' }, el('h3', { id: 'verdict-h' }, "The prober's verdict"), verdict),
        el('section', { 'aria-labelledby': 'deny-h' }, el('h3', { id: 'deny-h' }, 'Denylist entries'),
            el('h4', {}, 'In force on it now'), inForce, el('h4', {}, 'Every entry on it or its switches'), deny),
        el('section', { 'aria-labelledby': 'audit-h' }, el('h3', { id: 'audit-h' }, 'Audit trail'), audit),
    );

    let where = null;
    let history = null;
    const redraw = () => history && drawHistory(canvas, history);
    window.addEventListener('resize', redraw);

    // A link's or port's item: its T0's listing holds it, at an offset found once and then
    // read alone (one item a second, not the T0's 512), looked for again if it moved.
    let at = null;
    async function linkItem() {
        const list = (query) => api('/api/v1/health/links', { query: { switch: where.t0, ...query } });
        if (at !== null) {
            const one = await list({ offset: at, limit: 1 });
            if (one.items[0] && sameElement(one.items[0].link, name)) return one.items[0];
        }
        const page = await list({ limit: 1000 });
        const i = page.items.findIndex((l) => sameElement(l.link, name));
        at = i < 0 ? null : i;
        return i < 0 ? null : page.items[i];
    }

    function renderMarks(item) {
        render(verdict, JSON.stringify(item?.verdict ?? null), () => verdictBlock(item?.verdict));
        render(inForce, JSON.stringify(item?.denied ?? []), () => deniedBlock(item?.denied));
    }

    async function loadEvidence() {
        if (kind === 'switch') {
            const lossy = (state) => api('/api/v1/health/links', { query: { switch: name, state, limit: 100 } });
            const [sw, bad, degraded] = await Promise.all([
                api('/api/v1/health/switches', { query: { switch: name } }), lossy('bad'), lossy('degraded')]);
            const item = sw.items[0];
            const links = [...bad.items, ...degraded.items];
            const more = bad.total + degraded.total - links.length;
            render(evidence, JSON.stringify([item, links, more]), () => [
                item ? table(null, ['Own state', 'Measured', 'ok', 'degraded', 'bad', 'no data'], [[
                    [badge(item.state), item.denied?.length ? [' ', badge('denied')] : null], STATES[item.measured]?.word || item.measured,
                    num(item.links.ok), num(item.links.degraded), num(item.links.bad), num(item.links.no_data)]], { id: 'switch-table' }) : null,
                links.length
                    ? el('div', { class: 'list-scroll' }, table(`Its ${num(bad.total + degraded.total)} degraded or bad links` + (more > 0 ? ` (the first ${links.length} shown)` : ''),
                        ['Link', 'State', 'Loss up', 'Loss down'],
                        links.map((l) => [elementLink(l.link), badge(l.state), pct(l.up.loss_rate), pct(l.down.loss_rate)])))
                    : el('p', {}, 'None of its links is degraded or bad.'),
            ]);
            renderMarks(item);
            return;
        }
        if (!where.t0) {
            render(evidence, 'none', () => el('p', {}, 'This port is not cabled.'));
            renderMarks(null);
            return;
        }
        const item = await linkItem();
        render(evidence, JSON.stringify(item), () => (item ? evidenceTable(item) : el('p', {}, 'No evidence listed for it.')));
        renderMarks(item);
    }

    function renderDeny(entries, records) {
        const covers = (e) => typeof e.element === 'string' && (sameElement(e.element, name) || where.covers.includes(e.element));
        const mine = entries.filter(covers);
        render(deny, JSON.stringify(mine), () => (mine.length
            ? entryRows(mine, ctx, `${mine.length} ${mine.length === 1 ? 'entry' : 'entries'}`)
            : el('p', {}, 'No entry covers it.')));
        // the audit records of every entry ever made on it (a removal's detail may not name it)
        const ids = new Set(records.filter((r) => r.detail && covers(r.detail)).map((r) => r.entry));
        const trail = records.filter((r) => ids.has(r.entry)).slice(-100).reverse();
        render(audit, JSON.stringify(trail), () => (trail.length
            ? table('Newest first', ['Time', 'Who', 'What', 'Entry', 'Element', 'Reason'], trail.map((r) => [
                stamp(r.time), r.actor, r.action, `#${r.entry}`, r.detail?.element || '', r.detail?.reason || '']), { id: 'audit-table' })
            : el('p', {}, 'No change has been made to it.')));
    }

    return {
        async refresh() {
            try {
                where ||= await whereIs(name, kind);
                history = await api('/api/v1/health/history', { query: { element: name } });
            } catch (e) {
                if (e.status === 404 || e.status === 400) {
                    render(fault, 'nf', () => errorBox(e));
                    return;
                }
                throw e;
            }
            render(state, history.state, () => badge(history.state));
            redraw();
            render(samples, JSON.stringify(history.samples), () => table(null, ['Time', 'State', 'Loss rate'],
                history.samples.map((s) => [stamp(s.time), badge(s.state), pct(s.loss_rate, 3)])));
            await loadEvidence();
            const [d, records] = await Promise.all([getDenylist(), getAudit()]);
            renderDeny(d.entries, records);
        },
        unmount() {
            window.removeEventListener('resize', redraw);
        },
    };
}
