// SPDX-License-Identifier: MIT
// The T0 x T1 link matrix of one plane on a <canvas>: one row per T0, one column per T1, a
// cell per link coloured by its state. A plane of the full fabric has 512 x 256 = 131,072
// links, so cells live in typed arrays and are painted into one ImageData: no DOM node per
// cell. The canvas is focusable: arrow keys move a cursor cell, Enter opens its link, and the
// cursor's link is described in text beside it; the mouse hovers and clicks the same cells.

import { STATES, pct } from './ui.js';

// Cell codes, in order of severity (the summary sorts by it).
export const CODES = ['unknown', 'no_data', 'ok', 'degraded', 'bad', 'down'];
const CODE = Object.fromEntries(CODES.map((c, i) => [c, i]));

// A link's cell code from its health item. 'down' is a link that passes nothing in a direction
// with evidence: every packet lost, or only EVs given up on (assumed bad) and none sent.
export function codeOf(item) {
    const dead = (d) => (d.sent > 0 && d.loss_rate >= 0.99) || (d.sent === 0 && d.assumed_bad_evs > 0);
    if (item.state === 'bad' && (dead(item.up) || dead(item.down))) return CODE.down;
    return CODE[item.state] ?? CODE.unknown;
}

// Colours come from the stylesheet's custom properties (one palette for badges and canvas).
function palette() {
    const css = getComputedStyle(document.documentElement);
    const rgb = (name) => {
        const h = css.getPropertyValue(name).trim().replace('#', '');
        return [0, 2, 4].map((i) => parseInt(h.slice(i, i + 2), 16));
    };
    return {
        cells: CODES.map((c) => rgb(`--c-${c}`)),
        denied: rgb('--c-denied'),
        gap: rgb('--c-gap'),
    };
}

export class LinkMatrix {
    // canvas: the <canvas>; scroller: its scrolling container; desc: the text description's
    // element; onOpen(name): a cell was opened (click or Enter).
    constructor(canvas, scroller, desc, onOpen) {
        Object.assign(this, { canvas, scroller, desc, onOpen });
        this.rows = 0;
        this.cols = 0;
        this.cursor = null; // {r, c}: the keyboard's cell
        this.hover = null;
        this.pending = false;
        canvas.addEventListener('keydown', (e) => this.key(e));
        canvas.addEventListener('mousemove', (e) => this.point(e, false));
        canvas.addEventListener('mouseleave', () => { this.hover = null; this.draw(); this.describe(); });
        canvas.addEventListener('click', (e) => this.point(e, true));
        canvas.addEventListener('focus', () => { if (!this.cursor && this.rows) this.move(0, 0); });
    }

    // A new plane: rowNames[i] is the name of T0 i, colNames[j] of T1 j.
    shape(rowNames, colNames) {
        this.rowNames = rowNames;
        this.colNames = colNames;
        this.rows = rowNames.length;
        this.cols = colNames.length;
        this.rowOf = new Map(rowNames.map((n, i) => [n, i]));
        this.colOf = new Map(colNames.map((n, i) => [n, i]));
        const n = this.rows * this.cols;
        this.code = new Uint8Array(n); // CODES index; 0 until loaded
        this.lossUp = new Float32Array(n);
        this.lossDown = new Float32Array(n);
        this.denied = new Uint8Array(n);
        this.cursor = null;
        this.hover = null;
        this.layout();
    }

    // Square cells as wide as the section allows (1 to 40 px); the container scrolls the rest.
    layout() {
        const width = Math.max(200, this.scroller.parentElement.clientWidth - 4);
        this.cell = Math.max(1, Math.min(40, Math.floor(width / Math.max(1, this.cols))));
        this.canvas.width = this.cols * this.cell;
        this.canvas.height = this.rows * this.cell;
        this.canvas.dataset.cellSize = this.cell;
        this.canvas.dataset.rows = this.rows;
        this.canvas.dataset.cols = this.cols;
        this.image = null;
        this.dirty = true;
        this.draw();
    }

    // The cell of a link named T0~T1 (or T1~T0), or null when it is not in this plane's matrix.
    locate(name) {
        const [a, b] = name.split('~');
        let r = this.rowOf.get(a), c = this.colOf.get(b);
        if (r === undefined || c === undefined) {
            r = this.rowOf.get(b);
            c = this.colOf.get(a);
        }
        return r === undefined || c === undefined ? null : { r, c };
    }

    // Records a link's health item; true if it was a link of this matrix.
    set(item) {
        const at = this.locate(item.link);
        if (!at) return false;
        const i = at.r * this.cols + at.c;
        this.code[i] = codeOf(item);
        this.lossUp[i] = item.up?.loss_rate ?? 0;
        this.lossDown[i] = item.down?.loss_rate ?? 0;
        this.dirty = true;
        return true;
    }

    // The active denylist entries: a T0 denies its row, a T1 its column, a link its cell.
    setDenied(entries) {
        const d = new Uint8Array(this.rows * this.cols);
        for (const e of entries) {
            if (!e.active) continue;
            const at = this.locate(e.element);
            if (at) d[at.r * this.cols + at.c] = 1;
            const r = this.rowOf.get(e.element), c = this.colOf.get(e.element);
            if (r !== undefined) d.fill(1, r * this.cols, (r + 1) * this.cols);
            if (c !== undefined) for (let k = 0; k < this.rows; k++) d[k * this.cols + c] = 1;
        }
        if (d.some((v, i) => v !== this.denied[i])) {
            this.denied = d;
            this.dirty = true;
        }
    }

    // What a cell shows: denied outranks the health state (the link is out of use).
    shown(i) {
        return this.denied[i] ? 'denied' : CODES[this.code[i]];
    }

    // Cells counted by what they show, for the legend.
    counts() {
        const n = Object.fromEntries([...CODES, 'denied'].map((c) => [c, 0]));
        for (let i = 0; i < this.code.length; i++) n[this.shown(i)]++;
        return n;
    }

    // Every cell not ok (nor still loading), worst first: the text version of the picture.
    notOk() {
        const out = [];
        for (let i = 0; i < this.code.length; i++) {
            if (this.code[i] > CODE.ok || this.denied[i]) out.push(this.cellInfo(Math.floor(i / this.cols), i % this.cols));
        }
        return out.sort((a, b) => b.severity - a.severity || a.r - b.r || a.c - b.c);
    }

    cellInfo(r, c) {
        const i = r * this.cols + c;
        return {
            r, c, link: `${this.rowNames[r]}~${this.colNames[c]}`,
            state: CODES[this.code[i]], denied: !!this.denied[i], shown: this.shown(i),
            // health first (down, bad, degraded), then denied: a denied switch's whole row or
            // column must not push the lossy links out of a shortened list
            severity: this.code[i] * 2 + this.denied[i],
            lossUp: this.lossUp[i], lossDown: this.lossDown[i],
        };
    }

    describeCell(r, c) {
        const x = this.cellInfo(r, c);
        const s = STATES[x.state];
        return `${x.link} (row T0 ${r}, column T1 ${c}): ${s.sym} ${s.word}` +
            (x.state === 'unknown' || x.state === 'no_data' ? '' : `, loss toward the T1 ${pct(x.lossUp)}, toward the T0 ${pct(x.lossDown)}`) +
            (x.denied ? ', ⊘ denied' : '');
    }

    describe() {
        const at = this.hover || this.cursor;
        this.desc.textContent = at ? this.describeCell(at.r, at.c)
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

    // Paints now (the test reads pixels right after data arrives, without waiting for a frame).
    paint() {
        if (!this.rows) return;
        const ctx = this.canvas.getContext('2d');
        if (this.dirty || !this.image) {
            this.image = this.raster();
            this.dirty = false;
        }
        ctx.putImageData(this.image, 0, 0);
        for (const [at, colour] of [[this.hover, '#555555'], [this.cursor, '#000000']]) {
            if (!at) continue;
            // at least 8 px wide, so a 1-px cell's outline is still seen
            const s = Math.max(this.cell, 8), o = (s - this.cell) / 2;
            ctx.lineWidth = 2;
            ctx.strokeStyle = '#ffffff';
            ctx.strokeRect(at.c * this.cell - o - 1, at.r * this.cell - o - 1, s + 2, s + 2);
            ctx.strokeStyle = colour;
            ctx.strokeRect(at.c * this.cell - o + 1, at.r * this.cell - o + 1, s - 2, s - 2);
        }
    }

    raster() {
        const { cell, cols, rows } = this;
        const pal = palette();
        const w = cols * cell, img = new ImageData(w, rows * cell), px = img.data;
        const gap = cell >= 6 ? 1 : 0; // a grid line between cells big enough to spare one
        for (let r = 0; r < rows; r++) {
            for (let c = 0; c < cols; c++) {
                const i = r * cols + c;
                const rgb = this.denied[i] ? pal.denied : pal.cells[this.code[i]];
                for (let y = 0; y < cell; y++) {
                    let p = ((r * cell + y) * w + c * cell) * 4;
                    for (let x = 0; x < cell; x++, p += 4) {
                        const g = x >= cell - gap || y >= cell - gap ? pal.gap : rgb;
                        px[p] = g[0];
                        px[p + 1] = g[1];
                        px[p + 2] = g[2];
                        px[p + 3] = 255;
                    }
                }
            }
        }
        if (cell < 6) this.markers(img, pal);
        return img;
    }

    // Cells of a few pixels hide a single bad link among 131,072: lossy and denied cells get a
    // 7-px marker centred on them (worst drawn last, on top), so one lossy link stands out.
    markers(img, pal) {
        const { cell, cols } = this, w = img.width, h = img.height, px = img.data, m = 7;
        const marked = [];
        for (let i = 0; i < this.code.length; i++) {
            if (this.code[i] > CODE.ok || (this.denied[i] && this.notWholeLine(i))) marked.push(i);
        }
        marked.sort((a, b) => this.code[a] - this.code[b]);
        for (const i of marked) {
            const rgb = this.denied[i] ? pal.denied : pal.cells[this.code[i]];
            const cx = (i % cols) * cell + (cell >> 1), cy = Math.floor(i / cols) * cell + (cell >> 1);
            for (let y = Math.max(0, cy - 3); y < Math.min(h, cy - 3 + m); y++) {
                for (let x = Math.max(0, cx - 3); x < Math.min(w, cx - 3 + m); x++) {
                    const p = (y * w + x) * 4;
                    px[p] = rgb[0];
                    px[p + 1] = rgb[1];
                    px[p + 2] = rgb[2];
                }
            }
        }
    }

    // A denied link on its own, not part of a denied switch's full row or column (those are
    // lines, seen at any size; marking each of their cells would smear them).
    notWholeLine(i) {
        const r = Math.floor(i / this.cols), c = i % this.cols;
        let row = true, col = true;
        for (let k = 0; k < this.cols && row; k++) row = !!this.denied[r * this.cols + k];
        for (let k = 0; k < this.rows && col; k++) col = !!this.denied[k * this.cols + c];
        return !row && !col;
    }

    at(e) {
        const r = Math.floor(e.offsetY / this.cell), c = Math.floor(e.offsetX / this.cell);
        return r >= 0 && r < this.rows && c >= 0 && c < this.cols ? { r, c } : null;
    }

    point(e, open) {
        const at = this.at(e);
        this.hover = at;
        this.describe();
        this.draw();
        if (open && at) {
            this.cursor = at;
            this.onOpen(this.cellInfo(at.r, at.c).link);
        }
    }

    move(r, c) {
        this.cursor = { r: Math.max(0, Math.min(this.rows - 1, r)), c: Math.max(0, Math.min(this.cols - 1, c)) };
        this.hover = null;
        this.describe();
        this.draw();
        // keep the cursor in the scrolling container's view
        const y = this.cursor.r * this.cell, x = this.cursor.c * this.cell, sc = this.scroller;
        if (y < sc.scrollTop) sc.scrollTop = y - 8;
        else if (y + this.cell > sc.scrollTop + sc.clientHeight) sc.scrollTop = y + this.cell - sc.clientHeight + 8;
        if (x < sc.scrollLeft) sc.scrollLeft = x - 8;
        else if (x + this.cell > sc.scrollLeft + sc.clientWidth) sc.scrollLeft = x + this.cell - sc.clientWidth + 8;
    }

    key(e) {
        if (!this.rows) return;
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
            this.onOpen(this.cellInfo(r, c).link);
        }
    }
}
