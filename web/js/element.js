// SPDX-License-Identifier: MIT
// One element's page (a switch, a T0-T1 link or a host port): its health history as a chart,
// the evidence its state rests on, the denylist entries that cover it and its audit trail.

import { api, getDenylist, getAudit } from './api.js';
import { drawHistory } from './chart.js';
import { entryRows } from './denylist.js';
import { el, badge, table, render, pct, num, stamp, kindOf, sameElement, elementLink, errorBox } from './ui.js';

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

function dirRows(item) {
    return ['up', 'down'].map((d) => {
        const x = item[d];
        return [d === 'up' ? 'up (toward the T1, or from the host)' : 'down', badge(x.state), num(x.sent), num(x.lost),
            pct(x.loss_rate, 3), num(x.sources), x.probed ? 'yes' : 'no', num(x.assumed_bad_evs), stamp(x.last_evidence)];
    });
}

export function mount(root, ctx, params) {
    const name = decodeURIComponent(params.join('/'));
    const kind = kindOf(name);
    const state = el('span', { id: 'element-state' });
    const canvas = el('canvas', { class: 'chart', id: 'history-chart', role: 'img', 'aria-label': `Loss rate of ${name} over time; the samples are listed below` });
    const samples = el('div');
    const evidence = el('div', { id: 'evidence' });
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
        el('section', { 'aria-labelledby': 'deny-h' }, el('h3', { id: 'deny-h' }, 'Denylist entries covering it'), deny),
        el('section', { 'aria-labelledby': 'audit-h' }, el('h3', { id: 'audit-h' }, 'Audit trail'), audit),
    );

    let where = null;
    let history = null;
    const redraw = () => history && drawHistory(canvas, history);
    window.addEventListener('resize', redraw);

    async function loadEvidence() {
        if (kind === 'switch') {
            const [sw, links] = await Promise.all([
                api('/api/v1/health/switches', { query: { switch: name } }),
                api('/api/v1/health/links', { query: { switch: name, limit: 1000 } }),
            ]);
            const item = sw.items[0];
            const bad = links.items.filter((l) => l.state === 'degraded' || l.state === 'bad');
            render(evidence, JSON.stringify([item, bad]), () => [
                item ? table(null, ['Own state', 'ok', 'degraded', 'bad', 'no data'], [[badge(item.state),
                    num(item.links.ok), num(item.links.degraded), num(item.links.bad), num(item.links.no_data)]]) : null,
                bad.length
                    ? table(`Its ${bad.length} degraded or bad links`, ['Link', 'State', 'Loss up', 'Loss down'],
                        bad.map((l) => [elementLink(l.link), badge(l.state), pct(l.up.loss_rate), pct(l.down.loss_rate)]))
                    : el('p', {}, `None of its ${num(links.total)} links is degraded or bad.`),
            ]);
            return;
        }
        if (!where.t0) return render(evidence, 'none', () => el('p', {}, 'This port is not cabled.'));
        const page = await api('/api/v1/health/links', { query: { switch: where.t0, limit: 1000 } });
        const item = page.items.find((l) => sameElement(l.link, name));
        render(evidence, JSON.stringify(item), () => (item
            ? table(`${item.link}: ${item.state}`, ['Direction', 'State', 'Sent', 'Lost', 'Loss', 'Reporters', 'Probed', 'Assumed-bad EVs', 'Last evidence'], dirRows(item))
            : el('p', {}, 'No evidence listed for it.')));
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
