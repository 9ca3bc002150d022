// SPDX-License-Identifier: MIT
// The plane tabs of the overview (the fabric, then each plane), each plane's tab with its
// counts of bad, degraded and denied elements from GET /api/v1/health/summary, so that a sick
// plane is seen from any of them without opening it. The counts are symbols and numbers on the
// tab, in words for screen readers and in the tab's tooltip.

import { api } from './api.js';
import { el, STATES } from './ui.js';

export const COUNTS = ['bad', 'degraded', 'denied'];

export function getSummary() {
    return api('/api/v1/health/summary');
}

// planes: ctx.fabric.per_plane; current: the plane shown, or null for the fabric view.
// → {node, update(summary)}
export function planeTabs(planes, current) {
    const tab = (href, label, here, plane) => {
        const counts = el('span', { class: 'tab-counts' });
        const a = el('a', { href, 'aria-current': here ? 'page' : null, 'data-plane': plane }, label, counts);
        return { a, counts };
    };
    const all = tab('#/overview', 'All planes', current === null, null);
    const tabs = planes.map((p) => tab(`#/overview/${p.plane}`, `Plane ${p.plane}`, p.plane === current, p.plane));
    const node = el('nav', { class: 'planes', 'aria-label': 'Planes' }, all.a, tabs.map((t) => t.a));
    let last = '';
    function update(summary) {
        const key = JSON.stringify(summary.planes.map((p) => COUNTS.map((c) => p[c])));
        if (key === last) return; // unchanged: the tabs keep their nodes (and the focus)
        last = key;
        for (const p of summary.planes) {
            const t = tabs[p.plane];
            if (!t) continue;
            const words = COUNTS.map((c) => `${p[c]} ${STATES[c].word}`).join(', ');
            t.a.title = `Plane ${p.plane}: ${words}`;
            t.a.classList.toggle('sick-bad', p.bad > 0);
            t.a.classList.toggle('sick-degraded', p.bad === 0 && p.degraded > 0);
            for (const c of COUNTS) t.a.dataset[c] = p[c];
            t.counts.replaceChildren(...COUNTS.map((c) => el('span', { class: `tab-count n-${c}${p[c] ? '' : ' zero'}`, 'data-count': c },
                el('span', { 'aria-hidden': 'true' }, `${STATES[c].sym} ${p[c]}`),
                el('span', { class: 'sr-only' }, `, ${p[c]} ${STATES[c].word}`))));
        }
    }
    return { node, update };
}
