// SPDX-License-Identifier: MIT
// The controllers of the fabric (GET /api/v1/cluster), in the page's header on every view:
// which controller serves this page and its part (leader, follower, or alone without etcd),
// each controller with the leader marked and its epoch, and a link to each other one's
// dashboard. When the controller serving the page stops answering, a banner says so at once and
// offers the others' dashboards from the last answer: a browser cannot go on here without it.

import { api, onReach } from './api.js';
import { el, render, errorText } from './ui.js';

const PERIOD = 3000;
const ROLE = {
    leader: { word: 'leader', sym: '★' },
    follower: { word: 'follower', sym: '○' },
    alone: { word: 'alone', sym: '●' },
};

const $ = (id) => document.getElementById(id);
let last = null; // the last answer
let timer = null;
let gen = 0;
let down = false;

function roleBadge(role) {
    const r = ROLE[role] || { word: role, sym: '' };
    return el('span', { class: `badge role-${role}` }, el('span', { 'aria-hidden': 'true' }, r.sym), ' ', r.word);
}

// The other controllers as links to their dashboards: each keeps its own sign-in (a token is
// kept per address), so the link says where it goes.
function others(c) {
    const self = c?.self?.url;
    return (c?.members || []).filter((m) => m.url && m.url !== self);
}
function dashLink(m) {
    return el('a', { href: `${m.url}/`, class: 'ctl-link', 'data-member': m.name }, m.name, m.role === 'leader' ? ' (leader)' : '');
}

// Short, for the header: the badge says this controller's role
function summaryText(c) {
    const s = c.self || {};
    if (s.role === 'alone') return '· no other controller';
    return `${s.name} · ${c.leader ? `leader ${c.leader.name}, epoch ${c.leader.epoch}` : 'no leader now'}`;
}

function renderPanel(c) {
    const box = $('cluster');
    render(box, JSON.stringify(c), () => {
        const s = c.self || {};
        const parts = [el('summary', { id: 'cluster-summary' }, roleBadge(s.role), ' ', summaryText(c))];
        if (s.role === 'alone') {
            parts.push(el('div', { class: 'cluster-body' },
                el('p', {}, 'This controller runs alone (no --etcd): its store is the fabric\'s, and there is no other controller to go to.')));
            return parts;
        }
        const members = c.members || [];
        parts.push(el('div', { class: 'cluster-body' },
            el('p', {}, c.leader
                ? ['The leader is ', el('strong', { id: 'cluster-leader' }, c.leader.name), ` (epoch ${c.leader.epoch}, ${c.leader.url}); it makes every change and computes health, and a follower fetches its health views from it.`]
                : 'No controller leads at the moment (an election, or etcd out of reach): changes are refused until one does.'),
            el('table', { id: 'cluster-table' },
                el('caption', {}, `${members.length} ${members.length === 1 ? 'controller' : 'controllers'}`),
                el('thead', {}, el('tr', {}, ['Controller', 'Role', 'Dashboard'].map((h) => el('th', { scope: 'col' }, h)))),
                el('tbody', {}, members.map((m) => el('tr', { 'data-member': m.name, 'data-role': m.role, class: m.role === 'leader' ? 'is-leader' : null },
                    el('td', {}, m.name, m.url === s.url ? ' (this one)' : ''),
                    el('td', {}, roleBadge(m.role)),
                    el('td', {}, m.url === s.url ? 'this page' : dashLink(m))))))));
        return parts;
    });
    box.hidden = false;
}

// Says the controller serving the page does not answer, and where else to go.
function renderDown(e) {
    const box = $('cluster-down');
    const s = last?.self || {};
    const where = s.name ? `${s.name} (${location.origin})` : location.origin;
    const alt = others(last);
    render(box, `${errorText(e)}|${JSON.stringify(alt)}`, () => [
        el('strong', {}, `The controller serving this page, ${where}, does not answer`), `: ${errorText(e)}. `,
        alt.length
            ? ['Open the dashboard of another controller of this fabric (sign in there again): ',
                alt.map((m, i) => [i ? ', ' : '', dashLink(m)]), '.']
            : (s.role === 'alone' ? 'It runs alone: there is no other controller to go to. ' : '') + 'This page tries again every few seconds.',
    ]);
    box.hidden = false;
}

// Every request to this controller, whoever made it: one not answered is said at once, and
// the banner goes with the next answer.
onReach((e) => {
    if (e) {
        down = true;
        renderDown(e);
    } else if (down) {
        down = false;
        $('cluster-down').hidden = true;
    }
});

async function poll(g) {
    try {
        const c = await api('/api/v1/cluster');
        if (g !== gen) return;
        last = c;
        renderPanel(c);
    } catch {
        /* not answered: the banner says so (onReach); another fault: the last panel stays */
    }
    if (g === gen) timer = setTimeout(() => poll(g), PERIOD);
}

export function start() {
    stop();
    poll(gen);
}
export function stop() {
    gen++;
    clearTimeout(timer);
    down = false;
    $('cluster').hidden = true;
    $('cluster-down').hidden = true;
    $('cluster').replaceChildren();
    delete $('cluster').dataset.key;
}
