// SPDX-License-Identifier: MIT
// The overview of one plane: its elements counted by state, and the T0 x T1 link matrix with a
// text list of the links that are not ok.
//
// Loading a plane's links scales with the fabric: a plane of the full fabric is 131,072 T0-T1
// links, 132 pages of /health/links. A small plane is read whole every second. A large one is
// swept a few pages a second (the T0-T1 links come first in a plane's listing, in T0-major
// order), while the degraded and bad links, usually few, are read every second by the state
// filter, so a link going bad shows within a second or two; a link that leaves those lists
// has its T0's row read again at once.

import { api, allPages, getDenylist } from './api.js';
import { LinkMatrix, CODES } from './matrix.js';
import { el, badge, table, render, pct, num, elementLink } from './ui.js';

const PAGE = 1000; // the API's largest page
const WHOLE = 4 * PAGE; // read a plane whole every second up to this many links
const LIST_MAX = 200; // rows of the not-ok list shown

export function mount(root, ctx, params) {
    const planes = ctx.fabric.per_plane;
    const plane = Math.min(Math.max(0, parseInt(params[0] || '0', 10) || 0), planes.length - 1);
    const shape = planes[plane];

    const scroller = el('div', { class: 'matrix-scroll' });
    const canvas = el('canvas', {
        class: 'matrix', tabindex: 0, role: 'img', id: 'matrix',
        'aria-label': `Link matrix of plane ${plane}: rows are its ${shape.t0} T0 switches, columns its ${shape.t1} T1 switches. Arrow keys move the cursor (Shift: 16 at a time), Enter opens the link.`,
        'aria-describedby': 'matrix-desc',
    });
    scroller.append(canvas);
    const desc = el('p', { id: 'matrix-desc', class: 'cell-desc', 'aria-live': 'polite' });
    const progress = el('p', { class: 'muted', id: 'matrix-progress' });
    const counts = el('div', { id: 'counts' });
    const legend = el('div', { id: 'legend' });
    const notOk = el('div', { id: 'not-ok' });
    const matrix = new LinkMatrix(canvas, scroller, desc, (name) => ctx.navigate(`#/element/${encodeURIComponent(name)}`));

    root.append(
        el('div', { class: 'title-row' }, el('h2', {}, `Overview — plane ${plane}`),
            el('nav', { class: 'planes', 'aria-label': 'Planes' },
                planes.map((p) => el('a', { href: `#/overview/${p.plane}`, 'aria-current': p.plane === plane ? 'page' : null }, `Plane ${p.plane}`)))),
        el('div', { class: 'overview-grid' },
            el('section', { 'aria-labelledby': 'matrix-h', class: 'matrix-box' },
                el('h3', { id: 'matrix-h' }, `T0 × T1 links (${shape.t0} × ${shape.t1})`),
                el('p', { class: 'muted' }, 'Rows: T0 switches, index 0 at the top. Columns: T1 switches, index 0 on the left.'),
                legend, scroller, desc, progress),
            el('div', {},
                el('section', { 'aria-labelledby': 'counts-h' }, el('h3', { id: 'counts-h' }, 'Elements by state'), counts),
                el('section', { 'aria-labelledby': 'notok-h' }, el('h3', { id: 'notok-h' }, 'Links not ok'), notOk))),
    );

    let names = null; // {t0: [...], t1: [...]}, by index
    let lossy = new Set(); // the links the last poll of the lossy lists returned
    let sweep = 0, swept = false;
    let dead = false;
    const onResize = () => { if (names) matrix.layout(); };
    window.addEventListener('resize', onResize);

    async function loadNames() {
        const byIndex = async (tier) => (await allPages('/api/v1/switches', { plane, tier }))
            .sort((a, b) => a.index - b.index).map((s) => s.name);
        const [t0, t1] = await Promise.all([byIndex('t0'), byIndex('t1')]);
        return { t0, t1 };
    }

    const linksPage = (query) => api('/api/v1/health/links', { query: { plane, limit: PAGE, ...query } });

    async function loadLinks() {
        const total = matrix.rows * matrix.cols;
        if (total <= WHOLE) {
            const pages = [];
            for (let off = 0; off < total; off += PAGE) pages.push(linksPage({ offset: off }));
            for (const p of await Promise.all(pages)) p.items.forEach((it) => matrix.set(it));
            progress.textContent = `${num(total)} links, all read every second.`;
            return;
        }
        const now = new Set();
        for (const state of ['bad', 'degraded']) {
            for (let off = 0; off < 2 * PAGE; off += PAGE) {
                const p = await linksPage({ state, offset: off });
                for (const it of p.items) if (matrix.set(it)) now.add(it.link);
                if (off + PAGE >= p.total) break;
            }
        }
        const rows = new Set([...lossy].filter((l) => !now.has(l)).map((l) => l.split('~')[0]));
        for (const t0 of [...rows].slice(0, 4)) {
            (await api('/api/v1/health/links', { query: { switch: t0, limit: PAGE } })).items.forEach((it) => matrix.set(it));
        }
        lossy = now;
        // the sweep: six pages a second until the plane is read once, then one
        const batch = [];
        for (let k = 0; k < (swept ? 1 : 6); k++) {
            batch.push(linksPage({ offset: sweep }));
            sweep += PAGE;
            if (sweep >= total) {
                sweep = 0;
                swept = true;
                break;
            }
        }
        for (const p of await Promise.all(batch)) p.items.forEach((it) => matrix.set(it));
        progress.textContent = swept
            ? `${num(total)} links: degraded and bad ones read every second, all of them every ${Math.ceil(total / PAGE)} s.`
            : `Reading the plane's ${num(total)} links: ${Math.round((100 * (sweep || total)) / total)} % so far (grey cells are not read yet).`;
    }

    function renderCounts(switches, entries) {
        // T1s' link counts add up to the T0-T1 links; the T0s' also hold their host ports.
        const z = () => ({ ok: 0, degraded: 0, bad: 0, no_data: 0 });
        const links = z(), ports = z(), t0 = z(), t1 = z();
        const t0set = new Set(names.t0);
        for (const s of switches) {
            const isT0 = t0set.has(s.switch);
            (isT0 ? t0 : t1)[s.state]++;
            for (const k of Object.keys(links)) {
                if (isT0) ports[k] += s.links[k] || 0;
                else links[k] += s.links[k] || 0;
            }
        }
        for (const k of Object.keys(ports)) ports[k] -= links[k];
        const active = entries.filter((e) => e.active && onPlane(e.element)).length;
        const cols = ['ok', 'degraded', 'bad', 'no_data'];
        const key = JSON.stringify([links, ports, t0, t1, active]);
        render(counts, key, () => [
            table(null, ['Element', ...cols.map((c) => badge(c))], [
                ['T0-T1 links', ...cols.map((c) => num(links[c]))],
                ['Host ports (NIC-T0 links)', ...cols.map((c) => num(ports[c]))],
                ['T0 switches', ...cols.map((c) => num(t0[c]))],
                ['T1 switches', ...cols.map((c) => num(t1[c]))],
            ], { class: 'counts' }),
            el('p', {}, `Denylist: ${active} active ${active === 1 ? 'entry' : 'entries'} on this plane (`, el('a', { href: '#/denylist' }, 'the denylist'), ').'),
        ]);
    }

    function onPlane(element) {
        if (element.includes('~')) return matrix.locate(element) !== null;
        const m = /:(\d+)$/.exec(element);
        if (m) return Number(m[1]) === plane;
        return matrix.rowOf.has(element) || matrix.colOf.has(element);
    }

    function renderMatrixText() {
        const n = matrix.counts();
        const shown = [...CODES, 'denied'].filter((c) => c !== 'unknown' || n.unknown);
        render(legend, JSON.stringify(n), () => el('ul', { class: 'legend', 'aria-label': 'Legend: cells by what they show' },
            shown.map((c) => el('li', {}, badge(c), ` ${num(n[c])}`)),
            el('li', { class: 'muted' }, 'down: bad, passing nothing one way; denied: an active denylist entry covers it (the link or its switch)')));
        const list = matrix.notOk();
        render(notOk, JSON.stringify(list.slice(0, LIST_MAX)) + list.length, () => {
            if (!list.length) return el('p', { id: 'not-ok-none' }, `Every link read is ok or has no data yet.`);
            // the link's name says its T0 (row) and T1 (column); the attributes say the cell
            const rows = list.slice(0, LIST_MAX).map((x) => el('tr', { 'data-link': x.link, 'data-row': x.r, 'data-col': x.c, 'data-state': x.shown },
                el('td', {}, elementLink(x.link)), el('td', {}, badge(x.state)),
                el('td', {}, pct(x.lossUp)), el('td', {}, pct(x.lossDown)), el('td', {}, x.denied ? badge('denied') : 'no')));
            return el('div', { class: 'list-scroll' },
                table(`${num(list.length)} of ${num(matrix.rows * matrix.cols)} links are not ok or are denied` +
                    (list.length > LIST_MAX ? ` (the worst ${LIST_MAX} shown)` : ''),
                ['Link', 'State', 'Loss up', 'Loss down', 'Denied'], rows, { id: 'not-ok-table' }));
        });
        matrix.describe();
    }

    return {
        async refresh() {
            if (!names) {
                names = await loadNames();
                if (dead) return;
                matrix.shape(names.t0, names.t1);
            }
            const [switches, deny] = await Promise.all([allPages('/api/v1/health/switches', { plane }), getDenylist()]);
            await loadLinks();
            if (dead) return;
            matrix.setDenied(deny.entries);
            renderCounts(switches, deny.entries);
            renderMatrixText();
            matrix.paint();
            canvas.dataset.loaded = 'true';
        },
        unmount() {
            dead = true;
            window.removeEventListener('resize', onResize);
        },
    };
}
