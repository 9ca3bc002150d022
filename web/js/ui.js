// SPDX-License-Identifier: MIT
// DOM helpers shared by the views. Everything is built with createElement and textContent,
// never from HTML strings: names and reasons come from the controller and are shown as text,
// and the page's Content-Security-Policy forbids inline styles anyway (classes only).

// el('td', {class: 'x', 'data-row': 3}, child, 'text', ...): an element with attributes
// (a function value becomes an event listener: onclick → click) and children.
export function el(tag, attrs = {}, ...children) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
        if (v === undefined || v === null || v === false) continue;
        if (typeof v === 'function') e.addEventListener(k.replace(/^on/, ''), v);
        else if (k === 'class') e.className = v;
        else if (v === true) e.setAttribute(k, '');
        else e.setAttribute(k, String(v));
    }
    append(e, children);
    return e;
}
function append(e, children) {
    for (const c of children.flat(Infinity)) {
        if (c === undefined || c === null || c === false) continue;
        e.append(c instanceof Node ? c : document.createTextNode(String(c)));
    }
}

// The states with a word and a symbol each, so that no state is told by colour alone.
// 'denied' (an entry in force excludes it) and 'named' (a prober's verdict names it) are not
// states but are shown beside one.
export const STATES = {
    unknown: { word: 'not loaded', sym: '?' },
    no_data: { word: 'no data', sym: '·' },
    ok: { word: 'ok', sym: '✓' },
    degraded: { word: 'degraded', sym: '▲' },
    bad: { word: 'bad', sym: '✕' },
    denied: { word: 'denied', sym: '⊘' },
    named: { word: 'named', sym: '◎' },
};

export function badge(state) {
    const s = STATES[state] || { word: state, sym: '' };
    return el('span', { class: `badge st-${state}` }, el('span', { 'aria-hidden': 'true' }, s.sym), ' ', s.word);
}

export function pct(x, digits = 2) {
    return x === undefined || x === null ? '—' : `${(x * 100).toFixed(digits)} %`;
}

export function num(n) {
    return n === undefined || n === null ? '—' : Number(n).toLocaleString('en-US');
}

// RFC 3339 as the controller writes it, shortened for tables, plus how long ago.
export function stamp(t) {
    if (!t) return 'never';
    const d = new Date(t);
    return Number.isNaN(d.getTime()) ? t : d.toISOString().replace('T', ' ').replace(/\.\d+Z$/, 'Z');
}
// ...with how long ago: only where the table is rebuilt every second, or it would go stale
export function when(t) {
    return t ? `${stamp(t)} (${ago(new Date(t))})` : 'never';
}
export function ago(d) {
    const s = Math.round((Date.now() - d.getTime()) / 1000);
    if (s < 0) return `in ${fmtDur(-s)}`;
    return `${fmtDur(s)} ago`;
}
function fmtDur(s) {
    if (s < 90) return `${s} s`;
    if (s < 5400) return `${Math.round(s / 60)} min`;
    if (s < 172800) return `${Math.round(s / 3600)} h`;
    return `${Math.round(s / 86400)} d`;
}

// A table from header labels and rows of cells (a cell is a node, text, or an array of them).
export function table(caption, headers, rows, attrs = {}) {
    return el('table', attrs,
        caption ? el('caption', {}, caption) : null,
        el('thead', {}, el('tr', {}, headers.map((h) => el('th', { scope: 'col' }, h)))),
        el('tbody', {}, rows.map((r) => (r instanceof Node ? r : el('tr', {}, r.map((c) => el('td', {}, c)))))));
}

export function elementHref(name) {
    return `#/element/${encodeURIComponent(name)}`;
}
export function elementLink(name) {
    return el('a', { href: elementHref(name) }, name);
}

// An element's denied entries and verdict, as short text.
export function deniedText(denied) {
    if (!denied?.length) return 'no';
    return denied.map((d) => `#${d.id} ${d.source}${d.scope && d.scope !== 'both' ? ` (${d.scope})` : ''}`).join(', ');
}
export function verdictText(v) {
    if (!v) return '—';
    return `${v.kind}, ${v.state}: ${pct(v.loss)} over ${num(v.horizon_s)} s`;
}

// A fault as a sentence: the problem document's detail and the status.
export function errorText(e) {
    return e.status ? `${e.message} (HTTP ${e.status})` : e.message;
}
export function errorBox(e) {
    return el('p', { class: 'error', role: 'alert' }, errorText(e));
}

// Replaces a container's content only when what it shows changed: the views poll every second,
// and rebuilding unchanged tables would steal focus and selections from the user.
export function render(container, key, build) {
    if (container.dataset.key === key) return;
    container.dataset.key = key;
    container.replaceChildren(...[build()].flat(Infinity).filter((c) => c !== null && c !== undefined && c !== false));
}

// Element names: a T0-T1 link is A~B (either order names the same link), a host port HOST:PORT.
export function kindOf(name) {
    if (name.includes('~')) return 'link';
    if (/^[^:]+:\d+$/.test(name)) return 'port';
    return 'switch';
}
export function sameElement(a, b) {
    if (a === b) return true;
    if (!a.includes('~') || !b.includes('~')) return false;
    const [x, y] = a.split('~');
    return b === `${y}~${x}`;
}
