// SPDX-License-Identifier: MIT
// An element's health history as a chart on a <canvas>: its loss rate over time as a step
// line (a sample holds until the next), each sample a dot in its state's colour with the
// state's symbol. The same samples are listed as a table beside it for screen readers.

import { STATES } from './ui.js';

const PAD = { left: 64, right: 16, top: 16, bottom: 28 };

function colour(name) {
    return getComputedStyle(document.documentElement).getPropertyValue(`--c-${name}`).trim() || '#888888';
}

const hms = (t) => new Date(t).toISOString().slice(11, 19);

export function drawHistory(canvas, history) {
    const w = Math.max(300, canvas.parentElement.clientWidth - 2), h = 200;
    canvas.width = w;
    canvas.height = h;
    const ctx = canvas.getContext('2d');
    ctx.clearRect(0, 0, w, h);
    ctx.font = '12px system-ui, sans-serif';
    ctx.fillStyle = '#222222';
    const samples = history.samples || [];
    if (!samples.length) {
        ctx.fillText('No samples: the element has not been degraded or bad (its state now: ' +
            (STATES[history.state]?.word || history.state) + ').', PAD.left, h / 2);
        return;
    }
    // at least the last ten minutes (64 samples 10 s apart), ending now
    const now = Date.now();
    const t0 = Math.min(Date.parse(samples[0].time), now - 600000);
    const t1 = now;
    const ymax = Math.max(0.001, ...samples.map((s) => s.loss_rate)) * 1.2;
    const x = (t) => PAD.left + ((t - t0) / (t1 - t0)) * (w - PAD.left - PAD.right);
    const y = (v) => h - PAD.bottom - (v / ymax) * (h - PAD.top - PAD.bottom);

    // axes, three loss ticks, the first and last time
    ctx.strokeStyle = '#999999';
    ctx.lineWidth = 1;
    ctx.beginPath();
    ctx.moveTo(PAD.left, PAD.top);
    ctx.lineTo(PAD.left, h - PAD.bottom);
    ctx.lineTo(w - PAD.right, h - PAD.bottom);
    ctx.stroke();
    ctx.textAlign = 'right';
    for (const v of [0, ymax / 2, ymax]) {
        ctx.fillText(`${(v * 100).toPrecision(2)} %`, PAD.left - 6, y(v) + 4);
    }
    ctx.textAlign = 'left';
    ctx.fillText(`${hms(t0)}Z`, PAD.left, h - 8);
    ctx.textAlign = 'right';
    ctx.fillText(`now ${hms(now)}Z`, w - PAD.right, h - 8);

    // the loss as a step line up to now
    ctx.strokeStyle = '#333333';
    ctx.lineWidth = 2;
    ctx.beginPath();
    samples.forEach((s, i) => {
        const tx = x(Date.parse(s.time));
        if (i === 0) ctx.moveTo(tx, y(s.loss_rate));
        else ctx.lineTo(tx, y(samples[i - 1].loss_rate));
        ctx.lineTo(tx, y(s.loss_rate));
    });
    ctx.lineTo(x(now), y(samples[samples.length - 1].loss_rate));
    ctx.stroke();

    // the samples: a dot in the state's colour and its symbol
    ctx.textAlign = 'center';
    for (const s of samples) {
        const tx = x(Date.parse(s.time)), ty = y(s.loss_rate);
        ctx.fillStyle = colour(s.state);
        ctx.beginPath();
        ctx.arc(tx, ty, 5, 0, 2 * Math.PI);
        ctx.fill();
        ctx.strokeStyle = '#222222';
        ctx.lineWidth = 1;
        ctx.stroke();
        ctx.fillStyle = '#222222';
        ctx.fillText(STATES[s.state]?.sym || '', tx, ty - 9);
    }
}
