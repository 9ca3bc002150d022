// SPDX-License-Identifier: MIT
// The denylist: its entries, and for roles that may change it a Remove button per entry and a
// form to add one. Adding is two steps: the blast radius first (POST ?dry_run=true stores
// nothing), then Save does the real POST. An entry the controller refuses for cutting host
// pairs below the capacity floor (409) shows why, and an operator or admin may force it.
// Read-only roles get no edit controls at all, not disabled ones.

import { api, getDenylist, denylistChanged } from './api.js';
import { el, table, render, pct, num, stamp, elementLink, errorText } from './ui.js';

const RFC3339 = '\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}(:\\d{2}(\\.\\d+)?)?Z';

function inForce(e) {
    if (e.active) return el('span', { class: 'badge st-denied' }, el('span', { 'aria-hidden': 'true' }, '⊘'), ' in force');
    if (e.window && Date.parse(e.window.start) > Date.now()) return '◷ waiting for its window';
    return '— window over';
}

// Remove, in two steps so a stray click removes nothing.
function removeControl(entry, ctx) {
    const cell = el('span', { class: 'actions' });
    const ask = () => cell.replaceChildren(
        `Remove #${entry.id}? `,
        el('button', { type: 'button', class: 'danger', onclick: remove }, `Yes, remove #${entry.id}`), ' ',
        el('button', { type: 'button', onclick: reset }, 'Keep'));
    const reset = () => cell.replaceChildren(el('button', {
        type: 'button', onclick: ask, 'aria-label': `Remove entry #${entry.id} (${entry.element})`,
    }, 'Remove'));
    async function remove() {
        try {
            await api(`/api/v1/denylist/${entry.id}`, { method: 'DELETE' });
            ctx.flash(`Entry #${entry.id} (${entry.element}) removed.`);
            denylistChanged();
        } catch (e) {
            ctx.flash(`Entry #${entry.id} was not removed: ${errorText(e)}`, true);
            reset();
        }
    }
    reset();
    return cell;
}

// The entries as a table, with Remove buttons only for roles that may change the denylist.
export function entryRows(entries, ctx, caption) {
    const head = ['ID', 'Element', 'Scope', 'Reason', 'Source', 'Author', 'Created', 'Window', 'Now'];
    return table(caption, ctx.canEdit ? [...head, 'Change'] : head, entries.map((e) => el('tr', { 'data-id': e.id },
        [`#${e.id}`, elementLink(e.element), e.scope, e.reason, e.source, e.author, stamp(e.created),
            e.window ? `${e.window.start} to ${e.window.end}` : 'always', inForce(e),
            ctx.canEdit ? removeControl(e, ctx) : null].filter((c) => c !== null).map((c) => el('td', {}, c)))),
    { class: 'entries' });
}

function blastRadius(br, refused) {
    return [
        el('p', { id: 'blast-summary' },
            `It lowers the capacity of ${num(br.affected_pairs)} of ${num(br.pairs)} host pairs; ` +
            `${num(br.cut_off_pairs)} are cut off; ${num(br.below_floor_pairs)} fall below the floor of ${pct(br.floor, 0)}; ` +
            `the least left is ${pct(br.min_capacity_left, 1)}.`),
        refused ? el('p', { class: 'warn' }, '▲ Without force the controller refuses it: host pairs would fall below the capacity floor.') : null,
        br.capacity_left.length ? table('Affected pairs by the capacity they keep', ['Capacity kept', 'Pairs'],
            br.capacity_left.map((b) => [`${pct(b.from, 0)} to ${pct(b.to, 0)}`, num(b.pairs)])) : null,
        br.worst.length ? table('The hardest hit pairs', ['From', 'To', 'Before', 'After'],
            br.worst.map((w) => [w.src, w.dst, pct(w.before, 1), pct(w.after, 1)])) : null,
    ];
}

function addForm(ctx, prefill) {
    const input = (name, label, attrs = {}) => el('label', {}, label, el('input', { name, id: `deny-${name}`, ...attrs }));
    const form = el('form', { id: 'deny-form' },
        el('div', { class: 'row' },
            input('element', 'Element', { required: true, maxlength: 95, value: prefill || null, placeholder: 'p0-t0-1~p0-t1-3, p3-t1-17 or h12:3', size: 30 }),
            el('label', {}, 'Scope', el('select', { name: 'scope', id: 'deny-scope' },
                ['both', 'up', 'down'].map((s) => el('option', { value: s }, s)))),
            input('reason', 'Reason', { required: true, maxlength: 255, size: 30 })),
        el('fieldset', {}, el('legend', {}, 'Maintenance window (optional; RFC 3339 UTC, both or neither)'),
            input('from', 'From', { pattern: RFC3339, placeholder: '2026-12-01T02:00:00Z', size: 24 }), ' ',
            input('to', 'To', { pattern: RFC3339, placeholder: '2026-12-01T04:00:00Z', size: 24 })),
        el('button', { type: 'submit', id: 'deny-preview' }, 'Preview blast radius'));
    const preview = el('div', { id: 'deny-result', 'aria-live': 'polite' });
    let body = null; // what the preview was for: Save posts exactly that

    const request = () => {
        const f = new FormData(form);
        const b = { element: f.get('element').trim(), reason: f.get('reason').trim(), scope: f.get('scope') };
        const from = f.get('from').trim(), to = f.get('to').trim();
        if (from || to) b.window = { start: from, end: to };
        return b;
    };
    const fault = (e) => el('p', { class: 'error', role: 'alert', id: 'deny-error' }, errorText(e));

    // Any change makes the preview stale: Save goes only with the blast radius of what is saved.
    form.addEventListener('input', () => {
        body = null;
        preview.replaceChildren();
        const from = form.elements.from, to = form.elements.to;
        to.setCustomValidity(from.value.trim() && !to.value.trim() ? 'A window needs its end too.' : '');
        from.setCustomValidity(to.value.trim() && !from.value.trim() ? 'A window needs its start too.' : '');
    });

    form.addEventListener('submit', async (ev) => {
        ev.preventDefault();
        body = request();
        preview.replaceChildren(el('p', { class: 'muted' }, 'Asking the controller…'));
        try {
            const r = await api('/api/v1/denylist', { method: 'POST', query: { dry_run: 'true' }, body });
            showPreview(r.blast_radius, r.refused);
        } catch (e) {
            body = null;
            preview.replaceChildren(fault(e));
        }
    });

    function showPreview(br, refused, problem) {
        const force = ctx.canForce && refused
            ? el('label', { class: 'force' }, el('input', { type: 'checkbox', id: 'deny-force' }),
                ' Force: add it below the capacity floor (the audit log records that it was forced)')
            : null;
        const save = el('button', { type: 'button', id: 'deny-save', class: 'primary', onclick: () => saveIt(force?.querySelector('input').checked) }, 'Save entry');
        const [summary, warning, ...tables] = blastRadius(br, refused);
        const head = el('h4', { tabindex: -1 }, `Blast radius of denying ${body.element} (${body.scope})`);
        preview.replaceChildren(...[head, problem ? fault(problem) : null, summary, warning,
            refused && !ctx.canForce ? el('p', {}, 'Only an operator or an admin may force an entry below the floor.') : null,
            el('div', { class: 'row' }, force, save), el('div', { class: 'row tables' }, tables)].filter(Boolean));
        // keyboard and screen-reader users land on the answer; Save is the next stop
        head.focus();
        save.scrollIntoView({ block: 'nearest' });
    }

    async function saveIt(force) {
        try {
            const e = await api('/api/v1/denylist', { method: 'POST', query: { force: force ? 'true' : null }, body });
            ctx.flash(`Entry #${e.id} saved: ${e.element} (${e.scope}) denied${e.active ? '' : ' within its window'}${force ? ', forced' : ''}.`);
            denylistChanged();
            form.reset();
            body = null;
            preview.replaceChildren();
        } catch (e) {
            if (e.status === 409 && e.problem?.blast_radius) showPreview(e.problem.blast_radius, true, e);
            else preview.replaceChildren(fault(e));
        }
    }

    return el('section', { 'aria-labelledby': 'add-h' }, el('h3', { id: 'add-h' }, 'Add an entry'), form, preview);
}

export function mount(root, ctx, params, query) {
    const list = el('div', { id: 'deny-list' });
    root.append(el('h2', {}, 'Denylist'),
        ctx.canEdit ? addForm(ctx, query.get('element')) : el('p', { class: 'muted' }, `Your role (${ctx.role}) reads the denylist; changing it takes the prober, operator or admin role.`),
        el('section', { 'aria-labelledby': 'entries-h' }, el('h3', { id: 'entries-h' }, 'Entries'), list));
    return {
        async refresh() {
            const d = await getDenylist();
            render(list, JSON.stringify(d) + ctx.role, () => [
                el('p', {}, `Version ${d.version}; ${d.entries.length} ${d.entries.length === 1 ? 'entry' : 'entries'}, ${d.entries.filter((e) => e.active).length} in force now.`),
                d.entries.length ? entryRows(d.entries, ctx, null) : el('p', {}, 'The denylist is empty.'),
            ]);
        },
        unmount() {},
    };
}
