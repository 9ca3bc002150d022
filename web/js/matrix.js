// SPDX-License-Identifier: MIT
// The T0 x T1 link matrix of one plane on a <canvas>, from GET /api/v1/health/matrix: one row
// per T0, one column per T1, each cell one link split in two, its left half the up direction
// (T0 toward T1) and its right half the down direction. A plane of the full fabric is 512 x 256
// links, so the answer's cells (one byte a link, a nibble a direction) stay a Uint8Array and
// are painted into one ImageData through a Uint32Array view: no DOM node per cell. A denied
// direction is hatched, a direction a prober verdict names is dotted, so neither is told by
// colour alone; where cells are a few pixels, every cell not ok gets an enlarged copy of itself
// centred on it, so that one bad link among 131,072 is seen. The canvas is focusable: arrow
// keys move a cursor cell, Enter opens its link, and the link under the cursor or the pointer
// is named in the status line beside it.

import { STATES } from './ui.js';

// A direction's nibble: state | denied << 2 | named << 3 (the controller's encoding).
export const STATE_NAMES = ['no_data', 'ok', 'degraded', 'bad'];
export const nibState = (n) => n & 3;
export const nibDenied = (n) => (n & 4) !== 0;
export const nibNamed = (n) => (n & 8) !== 0;

const BIG = 6; // a direction at least this wide and a cell this tall: grid lines, no enlarged copies
const MARK_W = 8, MARK_H = 10; // each direction's half of the enlarged copy of a small cell
const MARKS_MAX = 8192; // beyond this many cells not ok the picture speaks for itself

// Colours from the stylesheet's custom properties (one palette for badges and canvas), as
// little-endian RGBA words for the Uint32Array view of the image.
function palette() {
    const css = getComputedStyle(document.documentElement);
    const word = (name) => {
        const h = css.getPropertyValue(name).trim().replace('#', '');
        const [r, g, b] = [0, 2, 4].map((i) => parseInt(h.slice(i, i + 2), 16));
        return (0xff000000 | (b << 16) | (g << 8) | r) >>> 0;
    };
    return {
        states: STATE_NAMES.map((s) => word(`--c-${s}`)),
        denied: word('--c-denied'),
        mark: word('--c-mark'),
        gap: word('--c-gap'),
        blank: word('--c-unknown'),
    };
}

// base64 to bytes (atob's string is one char per byte).
function decode(b64) {
    const bin = atob(b64);
    const out = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
    return out;
}

export class LinkMatrix {
    // canvas: the <canvas>; scroller: its scrolling container; desc: the status line naming
    // the link under the cursor; onOpen(name): a cell was opened (click or Enter).
    constructor(canvas, scroller, desc, onOpen) {
        Object.assign(this, { canvas, scroller, desc, onOpen });
        this.rows = 0;
        this.cols = 0;
        this.cells = null; // null until the first answer
        this.zoom = false;
        this.cursor = null; // {r, c}: the keyboard's cell
        this.hover = null;
        this.pending = false;
        this.detail = () => ''; // more about a link (its loss), from the caller
        canvas.addEventListener('keydown', (e) => this.key(e));
        canvas.addEventListener('mousemove', (e) => this.point(e, false));
        canvas.addEventListener('mouseleave', () => { this.hover = null; this.draw(); this.describe(); });
        canvas.addEventListener('click', (e) => this.point(e, true));
        canvas.addEventListener('focus', () => { if (!this.cursor && this.cells) this.move(0, 0); });
    }

    // The plane's size, known before its answer arrives: the canvas takes its place at once.
    shape(rows, cols) {
        this.rows = rows;
        this.cols = cols;
        this.rowNames = Array.from({ length: rows }, (_, i) => `T0 ${i}`);
        this.colNames = Array.from({ length: cols }, (_, j) => `T1 ${j}`);
        this.cells = null;
        this.cursor = null;
        this.hover = null;
        this.layout();
    }

    // An answer of GET /health/matrix: names and cells; the picture is redrawn from them.
    load(m) {
        if (m.encoding !== 'base64') throw new Error(`the matrix came encoded as ${m.encoding}, not base64`);
        const cells = decode(m.cells);
        if (cells.length !== m.t0 * m.t1) throw new Error(`the matrix has ${cells.length} cells, not ${m.t0} x ${m.t1}`);
        if (m.t0 !== this.rows || m.t1 !== this.cols) this.shape(m.t0, m.t1);
        this.rowNames = m.t0_names;
        this.colNames = m.t1_names;
        this.rowOf = new Map(m.t0_names.map((n, i) => [n, i]));
        this.colOf = new Map(m.t1_names.map((n, j) => [n, j]));
        this.cells = cells;
        this.version = m.version;
        this.tally();
        this.image = null;
    }

    // Directions counted by state, denied and named, for the legend.
    tally() {
        const k = new Uint32Array(16);
        for (const b of this.cells) {
            k[b >> 4]++;
            k[b & 15]++;
        }
        const n = { no_data: 0, ok: 0, degraded: 0, bad: 0, denied: 0, named: 0 };
        for (let x = 0; x < 16; x++) {
            n[STATE_NAMES[x & 3]] += k[x];
            if (x & 4) n.denied += k[x];
            if (x & 8) n.named += k[x];
        }
        this.n = n;
    }

    // Cells as wide as the section allows, the plane's height within the window when it fits
    // there (one pixel a row at 512 T0s); zoomed, at least 8 x 8 pixels a cell, scrolled.
    layout() {
        const width = Math.max(200, this.scroller.parentElement.clientWidth - 4);
        const height = Math.max(160, Math.floor(window.innerHeight * 0.7));
        const cols = Math.max(1, this.cols), rows = Math.max(1, this.rows);
        let dw = Math.max(1, Math.min(20, Math.floor(width / (2 * cols))));
        let ch = Math.max(1, Math.min(2 * dw, Math.floor(height / rows)));
        if (this.zoom) {
            dw = Math.max(dw, 4);
            ch = Math.max(ch, 2 * dw);
        }
        Object.assign(this, { dw, cw: 2 * dw, ch });
        this.big = dw >= BIG && ch >= BIG;
        this.canvas.width = this.cols * this.cw;
        this.canvas.height = this.rows * this.ch;
        Object.assign(this.canvas.dataset, {
            rows: this.rows, cols: this.cols, dirWidth: dw, cellWidth: this.cw, cellHeight: ch,
            marks: this.big ? '' : `${MARK_W}x${MARK_H}`,
        });
        this.image = null;
        this.paint(); // now: a resized canvas is blank until painted
    }

    // Whether the zoom can show more than the fitted picture does.
    canZoom() {
        return !this.big;
    }

    setZoom(on) {
        this.zoom = on;
        this.layout();
        if (this.cursor) this.reveal();
    }

    // The cell of a link named T0~T1 (or T1~T0), or null when it is not in this plane's matrix.
    locate(name) {
        if (!this.rowOf) return null;
        const [a, b] = name.split('~');
        let r = this.rowOf.get(a), c = this.colOf.get(b);
        if (r === undefined || c === undefined) {
            r = this.rowOf.get(b);
            c = this.colOf.get(a);
        }
        return r === undefined || c === undefined ? null : { r, c };
    }

    nameOf(r, c) {
        return `${this.rowNames[r]}~${this.colNames[c]}`;
    }

    // Both directions of a cell: {state, denied, named} each.
    dirs(r, c) {
        const b = this.cells ? this.cells[r * this.cols + c] : 0;
        const one = (x) => ({ state: this.cells ? STATE_NAMES[x & 3] : 'unknown', denied: !!(x & 4), named: !!(x & 8) });
        return { up: one(b >> 4), down: one(b & 15) };
    }

    // Every link with a direction not ok, denied or named, worst first: the text version of
    // the picture. severity: the worse state, then named, then denied.
    notOk() {
        const out = [];
        if (!this.cells) return out;
        const { cells, cols } = this;
        for (let i = 0; i < cells.length; i++) {
            const b = cells[i];
            const u = b >> 4, d = b & 15;
            if ((u & 3) < 2 && (d & 3) < 2 && !((u | d) & 12)) continue;
            const st = Math.max(u & 3, d & 3);
            const r = Math.floor(i / cols), c = i % cols;
            out.push({
                r, c, link: this.nameOf(r, c), severity: (st >= 2 ? st : 0) * 4 + ((u | d) & 8 ? 2 : 0) + ((u | d) & 4 ? 1 : 0),
                shown: st >= 2 ? STATE_NAMES[st] : (u | d) & 4 ? 'denied' : 'named', ...this.dirs(r, c),
            });
        }
        return out.sort((a, b) => b.severity - a.severity || a.r - b.r || a.c - b.c);
    }

    describeCell(r, c) {
        const { up, down } = this.dirs(r, c);
        const one = (x) => `${STATES[x.state].sym} ${STATES[x.state].word}` + (x.denied ? ', ⊘ denied' : '') + (x.named ? ', ◎ named by a verdict' : '');
        return `${this.nameOf(r, c)} (row T0 ${r}, column T1 ${c}): up ${one(up)}; down ${one(down)}${this.detail(this.nameOf(r, c))}`;
    }

    describe() {
        const at = this.hover || this.cursor;
        this.desc.textContent = at && this.cells ? this.describeCell(at.r, at.c)
            : 'Move over the matrix, or focus it and use the arrow keys, to see a link; click or press Enter to open it.';
    }

    // The picture, repainted on the next frame; cursor and hover outlines drawn over it.
    draw() {
        if (this.pending) return;
        this.pending = true;
        requestAnimationFrame(() => {
            this.pending = false;
            this.paint();
        });
    }

    // Paints now (the first answer is drawn as soon as it is decoded, not a frame later).
    paint() {
        if (!this.rows || !this.cells) return;
        const ctx = this.canvas.getContext('2d');
        if (!this.image) this.image = this.raster();
        ctx.putImageData(this.image, 0, 0);
        for (const [at, colour] of [[this.hover, '#555555'], [this.cursor, '#000000']]) {
            if (!at) continue;
            // at least 8 px each way, so a small cell's outline is still seen
            const w = Math.max(this.cw, 8), h = Math.max(this.ch, 8);
            const x = at.c * this.cw - (w - this.cw) / 2, y = at.r * this.ch - (h - this.ch) / 2;
            ctx.lineWidth = 2;
            ctx.strokeStyle = '#ffffff';
            ctx.strokeRect(x - 1, y - 1, w + 2, h + 2);
            ctx.strokeStyle = colour;
            ctx.strokeRect(x + 1, y + 1, w - 2, h - 2);
        }
    }

    raster() {
        const { cw, ch, dw, cols, rows, cells, big } = this;
        const W = cols * cw, H = rows * ch;
        const img = new ImageData(W, H), px = new Uint32Array(img.data.buffer);
        const pal = palette();
        // big cells: a grid line on their right and bottom (none between a cell's halves: two
        // directions in one state read as one link)
        const gap = big ? 1 : 0;
        if (gap) px.fill(pal.gap);
        const h = ch - gap, st = pal.states;
        for (let r = 0, i = 0; r < rows; r++) {
            for (let c = 0; c < cols; c++, i++) {
                const b = cells[i], x = c * cw, y = r * ch;
                if (b & 0xcc) { // a mark: the patterns
                    this.block(px, W, x, y, dw, h, b >> 4, pal);
                    this.block(px, W, x + dw, y, dw - gap, h, b & 15, pal);
                    continue;
                }
                // the common case, plain colours (131,072 cells: kept to plain stores)
                const up = st[b >> 4], down = st[b & 3];
                for (let yy = 0, p = y * W + x; yy < h; yy++, p += W) {
                    let k = p;
                    for (const e = p + dw; k < e; k++) px[k] = up;
                    for (const e = p + cw - gap; k < e; k++) px[k] = down;
                }
            }
        }
        if (!big) this.marks(px, W, H, pal);
        return img;
    }

    // One direction's w x h pixels at (x0, y0): its state's colour; hatched with the denied
    // colour when an entry excludes it, dotted with the mark colour when a verdict names it.
    // Both patterns are of the whole canvas' coordinates, so that they run on unbroken across
    // cells and their enlarged copies (a drained switch's line is one hatched band).
    block(px, W, x0, y0, w, h, nib, pal) {
        const base = pal.states[nib & 3], den = nib & 4, named = nib & 8;
        for (let y = y0; y < y0 + h; y++) {
            let p = y * W + x0;
            const dotRow = named && (y & 3) < 2;
            for (let x = x0; x < x0 + w; x++, p++) {
                px[p] = dotRow && (x & 3) < 2 ? pal.mark : den && ((x + y) & 7) < 3 ? pal.denied : base;
            }
        }
    }

    // Small cells: each cell not ok (degraded, bad, denied or named) gets an enlarged copy,
    // MARK_W x MARK_H a direction, centred on it in a white rim: every rim first, then the
    // copies, the worst last, on top; cells of a line (a switch's) make one band.
    marks(px, W, H, pal) {
        const { cells, cols, cw, ch, dw } = this;
        const marked = [];
        for (let i = 0; i < cells.length; i++) {
            const b = cells[i];
            if ((b & 0x30) >= 0x20 || (b & 3) >= 2 || b & 0xcc) {
                marked.push(i);
                if (marked.length > MARKS_MAX) return;
            }
        }
        const sev = (b) => Math.max((b >> 4) & 3, b & 3) * 4 + (((b >> 4) | b) & 8 ? 2 : 0) + (((b >> 4) | b) & 4 ? 1 : 0);
        marked.sort((a, b) => sev(cells[a]) - sev(cells[b]) || a - b);
        const origin = (i) => [(i % cols) * cw + dw - MARK_W, Math.floor(i / cols) * ch + (ch >> 1) - (MARK_H >> 1)];
        for (const i of marked) {
            const [x0, y0] = origin(i);
            for (let y = Math.max(0, y0 - 1); y < Math.min(H, y0 + MARK_H + 1); y++) {
                px.fill(pal.gap, y * W + Math.max(0, x0 - 1), y * W + Math.min(W, x0 + 2 * MARK_W + 1));
            }
        }
        for (const i of marked) {
            const [x0, y0] = origin(i);
            this.clipped(px, W, H, x0, y0, cells[i] >> 4, pal);
            this.clipped(px, W, H, x0 + MARK_W, y0, cells[i] & 15, pal);
        }
    }

    // block() for a mark, which may reach past the canvas' edge: drawn into a scratch buffer
    // at its place mod 8 (so that its patterns lines up with the canvas'), copied in where it
    // lands inside.
    clipped(px, W, H, x0, y0, nib, pal) {
        if (x0 >= 0 && y0 >= 0 && x0 + MARK_W <= W && y0 + MARK_H <= H) {
            this.block(px, W, x0, y0, MARK_W, MARK_H, nib, pal);
            return;
        }
        const sx = ((x0 % 8) + 8) % 8, sy = ((y0 % 8) + 8) % 8, TW = MARK_W + 8;
        const tmp = new Uint32Array(TW * (MARK_H + 8));
        this.block(tmp, TW, sx, sy, MARK_W, MARK_H, nib, pal);
        for (let y = 0; y < MARK_H; y++) {
            for (let x = 0; x < MARK_W; x++) {
                const X = x0 + x, Y = y0 + y;
                if (X >= 0 && Y >= 0 && X < W && Y < H) px[Y * W + X] = tmp[(y + sy) * TW + x + sx];
            }
        }
    }

    at(e) {
        const r = Math.floor(e.offsetY / this.ch), c = Math.floor(e.offsetX / this.cw);
        return r >= 0 && r < this.rows && c >= 0 && c < this.cols ? { r, c } : null;
    }

    point(e, open) {
        if (!this.cells) return;
        const at = this.at(e);
        this.hover = at;
        this.describe();
        this.draw();
        if (open && at) {
            this.cursor = at;
            this.onOpen(this.nameOf(at.r, at.c));
        }
    }

    move(r, c) {
        this.cursor = { r: Math.max(0, Math.min(this.rows - 1, r)), c: Math.max(0, Math.min(this.cols - 1, c)) };
        this.hover = null;
        this.describe();
        this.draw();
        this.reveal();
    }

    // Keeps the cursor in the scrolling container's view: a cursor that left it is brought
    // back to the middle, so what lies around it is seen too.
    reveal() {
        const y = this.cursor.r * this.ch, x = this.cursor.c * this.cw, sc = this.scroller;
        if (y < sc.scrollTop || y + this.ch > sc.scrollTop + sc.clientHeight) sc.scrollTop = y - (sc.clientHeight >> 1);
        if (x < sc.scrollLeft || x + this.cw > sc.scrollLeft + sc.clientWidth) sc.scrollLeft = x - (sc.clientWidth >> 1);
    }

    key(e) {
        if (!this.cells) return;
        const { r, c } = this.cursor || { r: 0, c: 0 };
        const step = e.shiftKey ? 16 : 1;
        const moves = {
            ArrowUp: [r - step, c], ArrowDown: [r + step, c], ArrowLeft: [r, c - step], ArrowRight: [r, c + step],
            PageUp: [r - 32, c], PageDown: [r + 32, c], Home: [r, 0], End: [r, this.cols - 1],
        };
        if (moves[e.key]) {
            e.preventDefault();
            this.move(...moves[e.key]);
        } else if ((e.key === 'Enter' || e.key === ' ') && this.cursor) {
            e.preventDefault();
            this.onOpen(this.nameOf(r, c));
        }
    }
}

