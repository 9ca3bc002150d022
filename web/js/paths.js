// SPDX-License-Identifier: MIT
// The path explorer: every EV between two host ports (h3:1 and h7:1; the port is the plane) or
// two hosts (every plane), each with its state and its hops' states, read again every second.

import { api } from './api.js';
import { el, badge, table, render, pct, errorBox, elementLink } from './ui.js';

// 'h3:1' → {host: 'h3', plane: 1}; 'h3' → {host: 'h3', plane: null}
function parse(s) {
    const m = /^([^:\s]+)(?::(\d+))?$/.exec(s.trim());
    return m ? { host: m[1], plane: m[2] === undefined ? null : Number(m[2]) } : null;
}

export function mount(root, ctx, params, query) {
    const from = el('input', { id: 'path-from', name: 'from', required: true, placeholder: 'h3:1', value: query.get('from') || null, size: 12 });
    const to = el('input', { id: 'path-to', name: 'to', required: true, placeholder: 'h7:1', value: query.get('to') || null, size: 12 });
    const result = el('div', { id: 'path-result' });
    const form = el('form', { id: 'path-form' },
        el('div', { class: 'row' },
            el('label', {}, 'From host port ', from), el('label', {}, 'To host port ', to),
            el('button', { type: 'submit' }, 'Show paths')));
    root.append(el('h2', {}, 'Path explorer'),
        el('p', { class: 'muted' }, 'Two host ports of one plane (h3:1 and h7:1: port 1 is plane 1), or two hosts for every plane.'),
        form, result);

    let q = null; // the query shown: {a, b, plane}
    function take() {
        const a = parse(from.value), b = parse(to.value);
        q = null; // an invalid query stops the last one's refreshes, or they would hide the error
        if (!a || !b) return render(result, 'bad', () => el('p', { class: 'error', role: 'alert' }, 'Give each end as HOST:PORT (h3:1) or HOST (h3).'));
        if (a.plane !== null && b.plane !== null && a.plane !== b.plane) {
            return render(result, 'planes', () => el('p', { class: 'error', role: 'alert' },
                `${from.value} is on plane ${a.plane} and ${to.value} on plane ${b.plane}: a path stays in one plane.`));
        }
        q = { a, b, plane: a.plane ?? b.plane };
        // the query into the address (replaceState fires no hashchange: the view stays)
        history.replaceState(null, '', `#/paths?from=${encodeURIComponent(from.value.trim())}&to=${encodeURIComponent(to.value.trim())}`);
    }
    form.addEventListener('submit', (e) => {
        e.preventDefault();
        take();
        if (q) refresh();
    });
    if (from.value && to.value) take();

    async function refresh() {
        if (!q) return;
        const shown = q;
        let d;
        try {
            d = await api('/api/v1/health/path', { query: { from: shown.a.host, to: shown.b.host } });
        } catch (e) {
            if (e.status === 400 || e.status === 404) return render(result, `err${e.message}`, () => errorBox(e));
            throw e;
        }
        if (shown !== q) return; // a newer query was asked meanwhile
        const evs = d.evs.filter((ev) => shown.plane === null || ev.plane === shown.plane);
        const by = {};
        for (const ev of evs) by[ev.state] = (by[ev.state] || 0) + 1;
        render(result, JSON.stringify(evs), () => [
            el('p', { id: 'path-summary' }, `${evs.length} EVs between ${d.from} and ${d.to}` +
                (shown.plane === null ? ' on every plane' : ` on plane ${shown.plane}`) + ': ' +
                (Object.entries(by).map(([s, n]) => `${n} ${s.replace('_', ' ')}`).join(', ') || 'none') + '.'),
            evs.length ? table(null, ['EV', 'Plane', 'T1', 'State', 'Hops, in order: the direction crossed', 'Worst loss along it'], evs.map((ev) => {
                // the first half of the hops is crossed toward the T1 (up), the rest down
                const dirs = ev.hops.map((h, i) => h[i < ev.hops.length / 2 ? 'up' : 'down']);
                return el('tr', { 'data-ev': ev.ev, 'data-state': ev.state },
                    el('td', {}, ev.ev ?? '—'), el('td', {}, ev.plane), el('td', {}, ev.t1 ? elementLink(ev.t1) : '—'), el('td', {}, badge(ev.state)),
                    el('td', {}, el('ol', { class: 'hops' }, ev.hops.map((h, i) => el('li', {}, elementLink(h.link),
                        ` ${i < ev.hops.length / 2 ? 'up' : 'down'} `, badge(dirs[i].state), ` ${pct(dirs[i].loss_rate)}`)))),
                    el('td', {}, pct(Math.max(0, ...dirs.map((d) => d.loss_rate)))));
            })) : null,
        ]);
    }
    return { refresh, unmount() {} };
}
