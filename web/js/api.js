// SPDX-License-Identifier: MIT
// The controller's API as the dashboard uses it: the bearer token of this browser session, one
// fetch wrapper that sends it and turns faults (RFC 9457 problem documents) into ApiError (and
// its conditional form, for the answers tagged with an ETag), and the two shared caches several
// views read (the denylist, keyed by its version, and the audit log, fetched incrementally).

const KEY = 'mrcfab.token'; // sessionStorage: gone when the tab closes, never in a URL

export function getToken() {
    return sessionStorage.getItem(KEY);
}
export function setToken(t) {
    sessionStorage.setItem(KEY, t);
}
export function clearToken() {
    sessionStorage.removeItem(KEY);
    denylist = null;
    audit = { last: 0, records: [] };
}

export class ApiError extends Error {
    constructor(status, problem, text) {
        super(problem?.detail || text || `HTTP ${status}`);
        this.status = status;
        this.problem = problem; // the problem document, with blast_radius on a 409
    }
}

// Told of every request's fate: null when the controller answered (whatever it said), else the
// ApiError of a request it did not answer (cluster.js says so and offers the other controllers).
let reached = () => {};
export function onReach(fn) {
    reached = fn;
}

// One request with the session's token; the Response, or ApiError when there is none. A request
// the controller does not answer within 10 s is abandoned: the next poll asks again.
async function request(path, { method = 'GET', body, query, headers: extra } = {}) {
    const url = new URL(path, location.origin);
    for (const [k, v] of Object.entries(query || {})) {
        if (v !== undefined && v !== null && v !== '') url.searchParams.set(k, String(v));
    }
    const headers = { Authorization: `Bearer ${getToken() || ''}`, ...extra };
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    const ctl = new AbortController();
    const timer = setTimeout(() => ctl.abort(), 10000);
    try {
        // no-store: the browser adds no validators of its own, so a 304 reaches us only when we
        // asked for one (tagged() below), and nothing stale is ever served from its cache
        // a change is not followed to another controller: a follower redirects it to the
        // leader, and the browser would drop the token on the way to another origin
        const res = await fetch(url, {
            method, headers, signal: ctl.signal, cache: 'no-store', redirect: method === 'GET' ? 'follow' : 'manual',
            body: body === undefined ? undefined : JSON.stringify(body),
        });
        reached(null);
        if (res.type === 'opaqueredirect') {
            throw new ApiError(307, null, "this controller follows another, which makes every change: make it on the leader's dashboard (the controllers' panel, top right, links to it)");
        }
        return res;
    } catch (e) {
        if (e instanceof ApiError) throw e;
        const err = new ApiError(0, null, `the controller cannot be reached (${e.name === 'AbortError' ? 'no answer in 10 s' : e.message})`);
        reached(err);
        throw err;
    } finally {
        clearTimeout(timer);
    }
}

async function parse(res) {
    if (res.status === 204) return null;
    const text = await res.text();
    let data = null;
    try {
        data = text ? JSON.parse(text) : null;
    } catch {
        /* a body that is not JSON: its text goes into the error below */
    }
    if (!res.ok) throw new ApiError(res.status, data, text.slice(0, 200));
    return data;
}

// api('/api/v1/x', {method, body, query}) → the parsed JSON (null for 204).
export async function api(path, opts = {}) {
    return parse(await request(path, opts));
}

// A GET with If-None-Match of the tag the last answer had: {changed: false} for 304 (no body
// sent, nothing to parse), else {changed: true, etag, data}.
export async function tagged(path, { query, etag } = {}) {
    const res = await request(path, { query, headers: etag ? { 'If-None-Match': etag } : {} });
    if (res.status === 304) return { changed: false, etag };
    const tag = res.headers.get('ETag');
    const data = await parse(res);
    return { changed: true, etag: tag, data };
}

// Who the token is. A controller without /whoami yet is read as a reader: edit controls only
// show for a role known to be allowed to use them (the server enforces roles anyway).
export async function whoami() {
    try {
        return await api('/api/v1/whoami');
    } catch (e) {
        if (e.status === 404) return { name: '(unknown)', role: 'reader' };
        throw e;
    }
}

// Every item of a paged list (offset/limit, at most 1000 a page).
export async function allPages(path, query = {}, max = 100000) {
    const items = [];
    for (let offset = 0; ; ) {
        const page = await api(path, { query: { ...query, offset, limit: 1000 } });
        items.push(...page.items);
        offset += page.items.length;
        if (page.items.length === 0 || offset >= page.total || offset >= max) return items;
    }
}

// The denylist, fetched again only when its version moved (GET /denylist/version answers at once
// with wait=0); the version also moves at a window's start and end, so `active` stays right.
let denylist = null;
export async function getDenylist() {
    if (denylist) {
        const v = await api('/api/v1/denylist/version', { query: { after: 0, wait: 0 } });
        if (v.version === denylist.version) return denylist;
    }
    denylist = await api('/api/v1/denylist');
    return denylist;
}
export function denylistChanged() {
    denylist = null;
}

// The audit log, oldest first, fetched from where the last call stopped.
let audit = { last: 0, records: [] };
export async function getAudit() {
    for (;;) {
        const page = await api('/api/v1/audit', { query: { after: audit.last, limit: 1000 } });
        for (const r of page.records) {
            audit.records.push(r);
            audit.last = Math.max(audit.last, r.id);
        }
        if (page.records.length < 1000) return audit.records;
    }
}
