// SPDX-License-Identifier: MIT
// One plane, #/overview/P: its T0 x T1 link matrix, both directions of every link, from ONE
// GET /api/v1/health/matrix?plane=P (a full plane is 131,072 links in about 180 KB), polled
// every second with If-None-Match: an unchanged plane answers 304 with no body and costs
// nothing here, a changed one is decoded and drawn again. Beside it the plane's counts
// (/health/summary) and the links not ok as text: every one the matrix holds, with its loss,
// verdict and entries from /health/problems, read again when the picture changed (or every
// few seconds while the health moves within its states).
//
// The time from opening the plane to its first picture is measured with performance marks
// (mrc-plane-open, mrc-matrix-received: the answer parsed, mrc-matrix-drawn: decoded and put
// on the canvas; the measure mrc-matrix-first-draw) and shown.

import { api, tagged } from './api.js';
import { LinkMatrix } from './matrix.js';
import { planeTabs, getSummary, COUNTS } from './planes.js';
import { el, badge, table, render, pct, num, elementLink, elementHref, deniedText, verdictText } from './ui.js';

const LIST_MAX = 200; // rows of the not-ok list shown
const DETAIL_MAX = 1000; // problem items read for their losses (one page)
const DETAIL_EVERY = 5000; // ms: how stale they may grow while the picture stays the same
const KIND = { switch: 'switch', host_port: 'host port' };

// A direction as badges: its state, and denied and named when they are.
function dirBadges(x) {
    return [badge(x.state), x.denied ? [' ', badge('denied')] : null, x.named ? [' ', badge('named')] : null];
}

export function mount(root, ctx, params) {
    const planes = ctx.fabric.per_plane;
    const plane = Math.min(Math.max(0, parseInt(params[0], 10) || 0), planes.length - 1);
    const shape = planes[plane];
    performance.mark('mrc-plane-open', { detail: { plane } });

    const tabs = planeTabs(planes, plane);
    const scroller = el('div', { class: 'matrix-scroll' });
    const canvas = el('canvas', {
        class: 'matrix', tabindex: 0, role: 'img', id: 'matrix', 'data-plane': plane,
        'aria-label': `Link matrix of plane ${plane}: rows are its ${shape.t0} T0 switches, columns its ${shape.t1} T1 switches, each cell's left half the up direction and its right half down. Arrow keys move the cursor (Shift: 16 at a time, Page Up and Down: 32 rows), Enter opens the link.`,
        'aria-describedby': 'matrix-desc',
    });
    scroller.append(canvas);
    const desc = el('p', { id: 'matrix-desc', class: 'cell-desc', 'aria-live': 'polite' });
    const status = el('p', { class: 'muted', id: 'matrix-status' });
    const legend = el('div', { id: 'legend' });
    const counts = el('div', { id: 'counts' });
    const notOk = el('div', { id: 'not-ok' });
    const others = el('div', { id: 'not-ok-others' });
    const zoom = el('button', { type: 'button', id: 'matrix-zoom', 'aria-pressed': 'false', hidden: true, onclick: () => setZoom(!matrix.zoom) }, 'Zoom in');
    const matrix = new LinkMatrix(canvas, scroller, desc, (name) => ctx.navigate(elementHref(name)));

    root.append(
        el('div', { class: 'title-row' }, el('h2', {}, `Overview — plane ${plane}`), tabs.node),
        el('section', { 'aria-labelledby': 'matrix-h', class: 'matrix-box' },
            el('div', { class: 'title-row' }, el('h3', { id: 'matrix-h' }, `T0 × T1 links (${num(shape.t0)} × ${num(shape.t1)}), both directions`), zoom),
            el('p', { class: 'muted' }, 'Rows: T0 switches, index 0 at the top. Columns: T1 switches, index 0 on the left. ' +
                'Each cell is a link: its left half the up direction (T0 toward T1), its right half down. ' +
                'Hatched: denied (an entry in force excludes it); dotted: named by a prober verdict.' +
                (shape.t0 * shape.t1 > 4096 ? ' Each link not ok is also drawn enlarged over its neighbours.' : '')),
            legend, scroller, desc, status),
        el('div', { class: 'row tables' },
            el('section', { 'aria-labelledby': 'counts-h' }, el('h3', { id: 'counts-h' }, 'Elements by state'), counts),
            el('section', { 'aria-labelledby': 'notok-h', class: 'grow' }, el('h3', { id: 'notok-h' }, 'Links not ok'), notOk,
                el('h3', { id: 'others-h' }, 'Switches and host ports not ok or denied'), others)),
    );
    matrix.shape(shape.t0, shape.t1);

    let etag = null;
    let drawn = 0, unchanged = 0, firstMs = null, since = null;
    let details = new Map(); // element name → its problem item (loss, verdict, entries)
    let detailsOf = null, detailsAt = 0; // the health version they were read at, and when
    let others0 = [], othersCut = false;
    let dead = false;
    matrix.detail = (name) => {
        const x = details.get(name);
        return x ? `; loss ${pct(x.loss_rate)} (its worse direction)` : '';
    };
    const onResize = () => { if (matrix.cells) matrix.layout(); };
    window.addEventListener('resize', onResize);

    function setZoom(on) {
        matrix.setZoom(on);
        zoom.setAttribute('aria-pressed', String(on));
        zoom.textContent = on ? 'Fit the plane' : 'Zoom in';
    }

    function showStatus() {
        const t = since ? new Date(since).toISOString().slice(11, 19) : '';
        status.textContent = `Drawn ${firstMs === null ? '' : `${Math.round(firstMs)} ms after opening the plane, `}from one request a second: ` +
            `${num(drawn)} ${drawn === 1 ? 'picture' : 'pictures'}, ${num(unchanged)} unchanged answers (304); the picture last changed at ${t}Z.`;
    }

    async function readMatrix() {
        const r = await tagged('/api/v1/health/matrix', { query: { plane }, etag });
        if (dead) return false;
        if (!r.changed) {
            unchanged++;
            return false;
        }
        if (firstMs === null) performance.mark('mrc-matrix-received', { detail: { plane } });
        matrix.load(r.data);
        etag = r.etag;
        matrix.paint();
        drawn++;
        since = Date.now();
        if (firstMs === null) {
            performance.mark('mrc-matrix-drawn', { detail: { plane } });
            firstMs = performance.measure('mrc-matrix-first-draw', 'mrc-plane-open', 'mrc-matrix-drawn').duration;
            canvas.dataset.firstDrawMs = firstMs.toFixed(1);
            zoom.hidden = !matrix.canZoom();
        }
        canvas.dataset.loaded = 'true';
        canvas.dataset.version = r.data.version;
        return true;
    }

    function renderCounts(p) {
        const cols = ['ok', 'degraded', 'bad', 'no_data'];
        render(counts, JSON.stringify(p), () => [
            table(null, ['Element', ...cols.map((c) => badge(c))], [
                ['T0-T1 links', ...cols.map((c) => num(p.links[c]))],
                ['Host ports (NIC-T0 links)', ...cols.map((c) => num(p.host_ports[c]))],
                ['Switches', ...cols.map((c) => num(p.switches[c]))],
            ], { class: 'counts', id: 'plane-counts' }),
            el('p', { id: 'plane-totals' }, COUNTS.map((c, i) => [i ? ', ' : '', el('span', { 'data-count': c }, num(p[c])), ` ${c}`]),
                ` ${p.bad + p.degraded + p.denied === 1 ? 'element' : 'elements'} (`, el('a', { href: '#/denylist' }, 'the denylist'), ').'),
        ]);
    }

    function renderLegend() {
        const n = matrix.n;
        render(legend, JSON.stringify(n), () => el('ul', { class: 'legend', 'aria-label': 'Legend: directions by what they show' },
            ['ok', 'degraded', 'bad', 'no_data'].map((c) => el('li', {}, badge(c), ` ${num(n[c])}`)),
            el('li', {}, el('span', { class: 'swatch swatch-denied', 'aria-hidden': 'true' }), badge('denied'), ` ${num(n.denied)}`),
            el('li', {}, el('span', { class: 'swatch swatch-named', 'aria-hidden': 'true' }), badge('named'), ` ${num(n.named)}`),
            el('li', { class: 'muted' }, 'directions')));
    }

    function renderNotOk() {
        const list = matrix.notOk();
        const shown = list.slice(0, LIST_MAX);
        const key = JSON.stringify([matrix.version, list.length, shown.map((x) => details.get(x.link)?.loss_rate)]);
        render(notOk, key, () => {
            if (!list.length) return el('p', { id: 'not-ok-none' }, 'Every link is ok or has no data yet, and none is denied or named.');
            const rows = shown.map((x) => {
                const d = details.get(x.link);
                return el('tr', { 'data-link': x.link, 'data-row': x.r, 'data-col': x.c, 'data-state': x.shown },
                    el('td', {}, elementLink(x.link)), el('td', {}, dirBadges(x.up)), el('td', {}, dirBadges(x.down)),
                    el('td', { class: 'n' }, d ? pct(d.loss_rate) : '—'), el('td', {}, d ? verdictText(d.verdict) : '—'),
                    el('td', {}, d ? deniedText(d.denied) : x.up.denied || x.down.denied ? 'yes' : 'no'));
            });
            return el('div', { class: 'list-scroll' },
                table(`${num(list.length)} of ${num(matrix.rows * matrix.cols)} links are not ok, denied or named` +
                    (list.length > LIST_MAX ? ` (the worst ${LIST_MAX} shown)` : ''),
                ['Link', 'Up', 'Down', 'Loss', 'Verdict', 'Denied'], rows, { id: 'not-ok-table' }));
        });
        render(others, JSON.stringify([others0, othersCut]), () => (others0.length
            ? el('div', { class: 'list-scroll short' }, table(othersCut ? `Those among the plane's first ${num(DETAIL_MAX)} problems (all of them: the overview's list)` : null, ['Element', 'Kind', 'State', 'Loss', 'Verdict', 'Denied'],
                others0.map((x) => el('tr', { 'data-element': x.element, 'data-state': x.state },
                    el('td', {}, elementLink(x.element)), el('td', {}, KIND[x.kind]), el('td', {}, badge(x.state)),
                    el('td', {}, x.kind === 'switch' ? `${pct(x.loss_rate, 1)} of its links` : pct(x.loss_rate)),
                    el('td', {}, verdictText(x.verdict)), el('td', {}, deniedText(x.denied)))), { id: 'others-table' }))
            : el('p', { id: 'others-none' }, othersCut ? `None among the plane's first ${num(DETAIL_MAX)} problems (all of them: the overview's list).` : 'None.')));
    }

    return {
        async refresh() {
            // the matrix first, drawn the moment it is decoded; the rest after it (the summary
            // costs the controller more than the matrix, and must not delay the picture)
            const changed = await readMatrix();
            if (dead) return;
            const summary = await getSummary();
            if (dead) return;
            tabs.update(summary);
            const p = summary.planes.find((x) => x.plane === plane);
            if (p) renderCounts(p);
            // the details again when the picture changed, else every few seconds (losses move
            // within a state; host ports and switches are not in the matrix)
            if (changed || (summary.version !== detailsOf && Date.now() - detailsAt >= DETAIL_EVERY)) {
                const page = await api('/api/v1/health/problems', { query: { plane, limit: DETAIL_MAX } });
                if (dead) return;
                details = new Map(page.items.map((x) => [x.element, x]));
                others0 = page.items.filter((x) => x.kind !== 'link');
                othersCut = page.total > page.items.length;
                detailsOf = summary.version;
                detailsAt = Date.now();
            }
            renderLegend();
            renderNotOk();
            matrix.describe();
            showStatus();
        },
        unmount() {
            dead = true;
            window.removeEventListener('resize', onResize);
        },
    };
}
