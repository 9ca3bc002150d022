// SPDX-License-Identifier: MIT
// The agents (one per host) and the probers, with when each was last heard from.

import { api } from './api.js';
import { el, table, render, num, when, errorBox } from './ui.js';

const freshness = (stale) => el('span', { class: `badge st-${stale ? 'bad' : 'ok'}` },
    el('span', { 'aria-hidden': 'true' }, stale ? '✕' : '✓'), stale ? ' stale' : ' fresh');

export function mount(root) {
    const agents = el('div', { id: 'agents' });
    const probers = el('div', { id: 'probers' });
    root.append(el('h2', {}, 'Agents and probers'),
        el('section', { 'aria-labelledby': 'ag-h' }, el('h3', { id: 'ag-h' }, 'Agents'),
            el('p', { class: 'muted' }, 'An agent is stale once silent (no registration, no report) for three report intervals.'), agents),
        el('section', { 'aria-labelledby': 'pr-h' }, el('h3', { id: 'pr-h' }, 'Probers'), probers));

    // "how long ago" changes every second: the key holds the second so the text stays true
    const tick = () => Math.floor(Date.now() / 1000);

    return {
        async refresh() {
            const [a, p] = await Promise.allSettled([api('/api/v1/agents'), api('/api/v1/probers')]);
            for (const r of [a, p]) if (r.status === 'rejected' && r.reason.status === 401) throw r.reason;
            if (a.status === 'fulfilled') {
                const d = a.value;
                render(agents, JSON.stringify(d) + tick(), () => [
                    el('p', {}, `${num(d.total)} registered: ${num(d.fresh)} fresh, ${num(d.stale)} stale.`),
                    d.items.length ? table(null, ['Host', 'State', 'Last seen', 'Registered', 'Reports', 'Version', 'Mode', 'Ports'],
                        d.items.map((g) => el('tr', { 'data-host': g.host },
                            [g.host, freshness(g.stale), when(g.last_seen), when(g.registered), num(g.reports), g.version, g.mode,
                                g.ports.map((x) => `${x.port} ${x.up ? '✓ up' : '✕ down'}`).join(', ')].map((c) => el('td', {}, c)))),
                    { id: 'agents-table' }) : el('p', {}, 'No agent has registered.'),
                ]);
            } else {
                render(agents, `e${a.reason.message}`, () => errorBox(a.reason));
            }
            if (p.status === 'fulfilled') {
                const items = p.value.items;
                render(probers, JSON.stringify(items) + tick(), () => (items.length
                    ? table(null, ['Prober', 'Last seen', 'Requests'], items.map((x) => [x.name, when(x.last_seen), num(x.requests)]), { id: 'probers-table' })
                    : el('p', {}, 'No prober token is configured.')));
            } else if (p.reason.status === 404) {
                render(probers, 'nf', () => el('p', { class: 'muted' }, 'This controller does not list its probers (no GET /api/v1/probers).'));
            } else {
                render(probers, `e${p.reason.message}`, () => errorBox(p.reason));
            }
        },
        unmount() {},
    };
}
