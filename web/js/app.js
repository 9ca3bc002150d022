// SPDX-License-Identifier: MIT
// The dashboard's shell: the token form, who is signed in, hash routing between the views and
// the poll loop that refreshes the current view every second, and the controllers' panel
// (cluster.js) in the header.
//
// Routes: #/overview[/PLANE], #/element/NAME, #/denylist[?element=NAME], #/paths[?from=&to=],
// #/agents. A view is {refresh(), unmount()}; refresh() reads what the view shows from the API
// and updates the page in place, so changes appear within a second or two without a reload.

import { api, whoami, getToken, setToken, clearToken } from './api.js';
import { errorText } from './ui.js';
import * as overview from './overview.js';
import * as element from './element.js';
import * as denylist from './denylist.js';
import * as paths from './paths.js';
import * as agents from './agents.js';
import * as cluster from './cluster.js';

const VIEWS = { overview, element, denylist, paths, agents };
const EDIT = new Set(['prober', 'localizer', 'operator', 'admin']); // may add entries (a prober or the localizer removes only prober entries)
const FORCE = new Set(['operator', 'admin']); // may force one below the floor
const PERIOD = 1000;

const $ = (id) => document.getElementById(id);
let ctx = null; // {name, role, canEdit, canForce, fabric, navigate, flash} once signed in
let view = null;
let gen = 0; // bumped by every route change and sign-out: stale refreshes stop there
let timer = null;

function showLogin(message) {
    $('app').hidden = true;
    $('login').hidden = false;
    $('login-msg').textContent = message || '';
    $('token').value = '';
    $('token').focus();
}

function stop() {
    gen++;
    clearTimeout(timer);
    view?.unmount();
    view = null;
}

function signOut(message) {
    stop();
    cluster.stop();
    clearToken();
    ctx = null;
    $('view').replaceChildren();
    showLogin(message);
}

function setLive(text, bad) {
    const live = $('live');
    live.textContent = text;
    live.classList.toggle('error', !!bad);
}

function flash(text, bad) {
    const f = $('flash');
    f.textContent = text;
    f.className = bad ? 'flash error' : 'flash';
}

async function start() {
    if (!getToken()) return showLogin('');
    let me, fabric;
    try {
        me = await whoami();
        fabric = await api('/api/v1/fabric');
    } catch (e) {
        if (e.status === 401) return signOut('The controller refused that token (HTTP 401). Give a token of its tokens file.');
        return showLogin(`Could not sign in: ${errorText(e)}`);
    }
    ctx = {
        name: me.name, role: me.role, canEdit: EDIT.has(me.role), canForce: FORCE.has(me.role), fabric, flash,
        navigate: (hash) => { location.hash = hash; },
    };
    $('who').textContent = `${me.name} (${me.role})`;
    $('fabric-name').textContent = `${fabric.name}: ${fabric.planes} planes, ${fabric.hosts.toLocaleString('en-US')} hosts`;
    $('login').hidden = true;
    $('app').hidden = false;
    cluster.start();
    route();
}

function route() {
    if (!ctx) return;
    stop();
    const [path, qs] = location.hash.replace(/^#\/?/, '').split('?');
    const parts = path.split('/');
    const name = VIEWS[parts[0]] ? parts[0] : 'overview';
    for (const a of document.querySelectorAll('#nav a')) {
        if (a.dataset.view === name) a.setAttribute('aria-current', 'page');
        else a.removeAttribute('aria-current');
    }
    flash('');
    const root = $('view');
    root.replaceChildren();
    view = VIEWS[name].mount(root, ctx, parts.slice(1), new URLSearchParams(qs || ''));
    document.title = `mrcfab — ${root.querySelector('h2')?.textContent || name}`;
    root.querySelector('h2')?.setAttribute('tabindex', '-1');
    if (document.activeElement === document.body || document.activeElement?.closest('#nav')) root.querySelector('h2')?.focus();
    tick(gen);
}

// One refresh, then the next a second after this one began (never two at once).
async function tick(g) {
    const t = performance.now();
    try {
        await view.refresh();
        if (g === gen) setLive(`Live: updated ${new Date().toISOString().slice(11, 19)}Z`);
    } catch (e) {
        if (e.status === 401) return signOut('The controller no longer accepts the token (HTTP 401). Sign in again.');
        if (g === gen) setLive(`Not updated: ${errorText(e)}. Trying again every second.`, true);
    }
    if (g === gen) timer = setTimeout(() => tick(g), Math.max(100, PERIOD - (performance.now() - t)));
}

$('login-form').addEventListener('submit', (e) => {
    e.preventDefault();
    const t = $('token').value.trim();
    if (!t) return;
    setToken(t);
    start();
});
$('signout').addEventListener('click', () => signOut('Signed out.'));
window.addEventListener('hashchange', route);
start();
