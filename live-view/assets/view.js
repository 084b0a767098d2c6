// The live view's page: receives the run's description, status and frames over a
// WebSocket (see live-view/src/protocol.rs for the format) and draws them in a canvas.
"use strict";

const $ = (id) => document.getElementById(id);
const view = $("view");
const bar = $("bar");
let description = null;
let socket = null;
let paused = false;
let field = 0;
let range = [0, 1];
let lastFrame = null;   // the newest frame: {header, layers}
let fixed = {};         // fixed layers (relief, lines) by kind, kept between frames
window.liveFrames = 0;  // frames drawn (the browser test reads it)

// Palettes: value in [0, 1] to [r, g, b].
const stops = {
  diverging: [[0.0, [33, 102, 172]], [0.5, [247, 247, 247]], [1.0, [178, 24, 43]]],
  sequential: [[0.0, [68, 1, 84]], [0.25, [59, 82, 139]], [0.5, [33, 145, 140]],
               [0.75, [94, 201, 98]], [1.0, [253, 231, 37]]],
  water: [[0.0, [198, 219, 239]], [0.5, [66, 146, 198]], [1.0, [8, 48, 107]]],
  quality: [[0.0, [215, 48, 39]], [0.5, [254, 224, 139]], [1.0, [26, 152, 80]]],
};

function colour(palette, t) {
  const s = stops[palette] || stops.sequential;
  t = Math.min(1, Math.max(0, t));
  for (let k = 1; k < s.length; k++) {
    if (t <= s[k][0]) {
      const [t0, c0] = s[k - 1];
      const [t1, c1] = s[k];
      const f = (t - t0) / (t1 - t0 || 1);
      return [0, 1, 2].map((i) => c0[i] + f * (c1[i] - c0[i]));
    }
  }
  return s[s.length - 1][1];
}

function send(command) {
  if (socket && socket.readyState === WebSocket.OPEN) socket.send(JSON.stringify(command));
}

// Sizes the canvas to the space beside the controls and below the header, keeping the
// domain's aspect; returns its size in device pixels.
function layout() {
  const aspect = description ? description.aspect : 4 / 3;
  const box = $("picture").getBoundingClientRect();
  let w = Math.max(100, box.width);
  let h = w / aspect;
  const room = Math.max(100, window.innerHeight - box.top - 16);
  if (h > room) { h = room; w = h * aspect; }
  view.style.width = `${Math.round(w)}px`;
  view.style.height = `${Math.round(h)}px`;
  const dpr = window.devicePixelRatio || 1;
  return [Math.max(16, Math.round(w * dpr)), Math.max(16, Math.round(h * dpr))];
}

function sendView() {
  send({ view: layout() });
}

function connect() {
  socket = new WebSocket(`ws://${location.host}/stream`);
  socket.binaryType = "arraybuffer";
  socket.onopen = () => { $("state").textContent = "connected"; sendView(); };
  socket.onclose = () => {
    $("state").textContent = lastStatus && lastStatus.finished ? "run finished" : "disconnected";
    $("pause").disabled = true;
    $("checkpoint").disabled = true;
  };
  socket.onmessage = (event) => {
    if (typeof event.data === "string") {
      const m = JSON.parse(event.data);
      if (m.kind === "hello") hello(m);
      else if (m.kind === "status") showStatus(m.status);
    } else {
      frame(event.data);
    }
  };
}

function hello(d) {
  description = d;
  $("title").textContent = d.title;
  $("clock").textContent = d.clock;
  document.title = d.title + " (live)";
  const select = $("field");
  select.innerHTML = "";
  d.fields.forEach((f, i) => {
    const o = document.createElement("option");
    o.value = i;
    o.textContent = f.name;
    select.appendChild(o);
  });
  setField(0);
  $("pause").disabled = false;
  $("checkpoint").disabled = false;
  sendView();
}

function setField(i) {
  field = i;
  $("field").value = i;
  range = description.fields[i].range.slice();
  $("low").value = range[0];
  $("high").value = range[1];
  drawBar();
}

let lastStatus = null;
const num = (x) => (typeof x === "number" ? x : NaN);
function showStatus(s) {
  // Frames and status messages may arrive out of order: keep the newest.
  if (lastStatus && num(s.seq) < num(lastStatus.seq)) return;
  lastStatus = s;
  $("time").textContent = num(s.time).toPrecision(6);
  $("step").textContent = s.step;
  $("rate").textContent = num(s.steps_per_second).toFixed(1);
  $("progress").value = num(s.progress) || 0;
  paused = s.paused;
  $("pause").textContent = paused ? "Resume" : "Pause";
  $("state").textContent = s.finished ? "run finished" : paused ? "paused" : "running";
  if (s.notice) $("notice").textContent = s.notice;
}

function frame(buffer) {
  const dv = new DataView(buffer);
  const len = dv.getUint32(0, true);
  const header = JSON.parse(new TextDecoder().decode(new Uint8Array(buffer, 4, len)));
  const n = header.width * header.height;
  let at = 4 + Math.ceil(len / 4) * 4;
  const layers = {};
  for (const kind of header.layers) {
    layers[kind] = new Float32Array(buffer, at, n);
    at += 4 * n;
    if (kind === "relief" || kind === "lines") fixed[kind] = { w: header.width, h: header.height, v: layers[kind] };
  }
  showStatus(header.status);
  // The field is shared by every page: follow another page's choice.
  if (header.field !== field && description) setField(header.field);
  lastFrame = { header, layers };
  draw();
}

function fixedLayer(kind, w, h) {
  const f = fixed[kind];
  return f && f.w === w && f.h === h ? f.v : null;
}

function draw() {
  if (!lastFrame || !description) return;
  const { header, layers } = lastFrame;
  const w = header.width;
  const h = header.height;
  const values = layers.values;
  const palette = description.fields[header.field].palette;
  const relief = fixedLayer("relief", w, h);
  const lines = fixedLayer("lines", w, h);
  const image = new ImageData(w, h);
  const [lo, hi] = range;
  const span = hi - lo || 1;
  const wet = (k) => values[k] > lo;
  for (let j = 0; j < h; j++) {
    for (let i = 0; i < w; i++) {
      const k = i + j * w;                 // row 0 is the south edge
      const p = 4 * (i + (h - 1 - j) * w); // the canvas's row 0 is its top
      const v = values[k];
      let c;
      if (palette === "water") {
        const g = relief ? 90 + 150 * relief[k] : 200;
        if (Number.isNaN(v) || v <= lo) {
          c = [g, g, g];
        } else {
          const front = (i > 0 && !wet(k - 1)) || (i + 1 < w && !wet(k + 1)) ||
                        (j > 0 && !wet(k - w)) || (j + 1 < h && !wet(k + w));
          c = front ? [10, 20, 60] : colour("water", (v - lo) / span).map((x) => 0.8 * x + 0.2 * g);
        }
      } else if (Number.isNaN(v)) {
        const g = relief ? 90 + 150 * relief[k] : 255;
        c = [g, g, g];
      } else {
        c = colour(palette, (v - lo) / span);
      }
      if (lines && lines[k] > 0.5) c = c.map((x) => 0.35 * x);
      image.data[p] = c[0];
      image.data[p + 1] = c[1];
      image.data[p + 2] = c[2];
      image.data[p + 3] = 255;
    }
  }
  const small = document.createElement("canvas");
  small.width = w;
  small.height = h;
  small.getContext("2d").putImageData(image, 0, 0);
  const [W, H] = layout();
  view.width = W;
  view.height = H;
  const g = view.getContext("2d");
  g.imageSmoothingEnabled = w < W / 2;
  g.drawImage(small, 0, 0, W, H);
  if (layers.contours) contours(g, layers.contours, w, h, W / w, H / h);
  for (const m of description.marks) {
    const x = m.x * W;
    const y = (1 - m.y) * H;
    g.fillStyle = "#e31a1c";
    g.beginPath();
    g.arc(x, y, 4, 0, 2 * Math.PI);
    g.fill();
    g.fillStyle = "#111";
    g.font = "12px sans-serif";
    g.fillText(m.name, x + 6, y - 6);
  }
  window.liveFrames += 1;
}

// Level lines of `v` (w x h, row 0 south) by marching squares, at 16 levels over its range.
function contours(g, v, w, h, sx, sy) {
  let min = Infinity;
  let max = -Infinity;
  for (const x of v) if (!Number.isNaN(x)) { min = Math.min(min, x); max = Math.max(max, x); }
  if (!(max > min)) return;
  g.strokeStyle = "rgba(0, 0, 0, 0.7)";
  g.lineWidth = 1;
  g.beginPath();
  const px = (i) => (i + 0.5) * sx;
  const py = (j) => (h - 0.5 - j) * sy;
  for (let l = 1; l < 16; l++) {
    const z = min + (max - min) * l / 16;
    for (let j = 0; j + 1 < h; j++) {
      for (let i = 0; i + 1 < w; i++) {
        const a = v[i + j * w], b = v[i + 1 + j * w], c = v[i + 1 + (j + 1) * w], d = v[i + (j + 1) * w];
        const pts = [];
        const edge = (p, q, x0, y0, x1, y1) => {
          if ((p < z) !== (q < z)) {
            const f = (z - p) / (q - p);
            pts.push([px(x0 + f * (x1 - x0)), py(y0 + f * (y1 - y0))]);
          }
        };
        edge(a, b, i, j, i + 1, j);
        edge(b, c, i + 1, j, i + 1, j + 1);
        edge(d, c, i, j + 1, i + 1, j + 1);
        edge(a, d, i, j, i, j + 1);
        for (let k = 0; k + 1 < pts.length; k += 2) {
          g.moveTo(pts[k][0], pts[k][1]);
          g.lineTo(pts[k + 1][0], pts[k + 1][1]);
        }
      }
    }
  }
  g.stroke();
}

function drawBar() {
  if (!description) return;
  const f = description.fields[field];
  const g = bar.getContext("2d");
  g.clearRect(0, 0, bar.width, bar.height);
  const top = 10;
  const bottom = bar.height - 10;
  for (let y = top; y < bottom; y++) {
    const c = colour(f.palette, (bottom - y) / (bottom - top));
    g.fillStyle = `rgb(${c[0]}, ${c[1]}, ${c[2]})`;
    g.fillRect(0, y, 18, 1);
  }
  g.fillStyle = "#222";
  g.font = "11px sans-serif";
  const label = (x) => Number(x.toPrecision(3)).toString();
  g.fillText(label(range[1]), 22, top + 4);
  g.fillText(label((range[0] + range[1]) / 2), 22, (top + bottom) / 2 + 4);
  g.fillText(label(range[0]), 22, bottom);
  g.save();
  g.translate(bar.width - 4, (top + bottom) / 2);
  g.rotate(-Math.PI / 2);
  g.textAlign = "center";
  g.fillText(f.unit, 0, 0);
  g.restore();
}

$("pause").onclick = () => send({ pause: !paused });
$("checkpoint").onclick = () => send({ checkpoint: true });
$("field").onchange = (e) => {
  setField(Number(e.target.value));
  send({ field });
  lastFrame = null; // the next frame shows the new field
};
const setRange = () => {
  const lo = Number($("low").value);
  const hi = Number($("high").value);
  if (Number.isFinite(lo) && Number.isFinite(hi) && hi > lo) { range = [lo, hi]; drawBar(); draw(); }
};
$("low").onchange = setRange;
$("high").onchange = setRange;
$("fit").onclick = () => {
  if (!lastFrame) return;
  let lo = Infinity;
  let hi = -Infinity;
  for (const x of lastFrame.layers.values) if (!Number.isNaN(x)) { lo = Math.min(lo, x); hi = Math.max(hi, x); }
  if (hi > lo) { $("low").value = lo; $("high").value = hi; setRange(); }
};
let resizing = null;
window.addEventListener("resize", () => {
  clearTimeout(resizing);
  resizing = setTimeout(sendView, 150);
});
connect();
