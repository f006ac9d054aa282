// Package simdemo makes the demo's interactive package: a canvas
// simulation of a camera's exposure in three steps (aperture, shutter
// speed, ISO), made by the program (no third-party content). Each step
// changes one setting and shows its side effect on the picture: the
// background's blur, the moving ball's streak, the grain. The app reports
// each step it reaches through the platform's postMessage protocol, the
// height of its content, and completion with a score once the last step's
// picture is well exposed.
package simdemo

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"strings"
)

// Title is the app's title.
const Title = "Exposure simulator"

// Steps are the app's steps, in order.
var Steps = []struct {
	ID    string `json:"id"`
	Title string `json:"title"`
}{
	{"aperture", "Aperture and depth of field"},
	{"shutter", "Shutter speed and motion"},
	{"iso", "ISO and grain"},
}

const page = `<!doctype html>
<html lang="en">
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Exposure simulator</title>
<style>
  body { margin: 0; font: 15px/1.45 system-ui, sans-serif; color: #1f2937; background: #f8fafc; }
  main { max-width: 720px; margin: 0 auto; padding: 12px; }
  canvas { width: 100%; height: auto; border-radius: 8px; background: #000; display: block; }
  h1 { font-size: 1.1rem; margin: .2rem 0 .4rem; }
  .row { display: flex; gap: .8rem; align-items: center; flex-wrap: wrap; margin: .6rem 0; }
  label { font-weight: 600; }
  input[type=range] { flex: 1; min-width: 180px; }
  .meter { font-variant-numeric: tabular-nums; }
  .ok { color: #047857; font-weight: 600; }
  button { font: inherit; padding: .35rem .9rem; border-radius: 6px; border: 1px solid #1d4ed8; background: #1d4ed8; color: #fff; }
  button:disabled { opacity: .5; }
  ol { display: flex; gap: 1rem; padding: 0; margin: 0 0 .4rem; list-style: none; font-size: .9rem; color: #64748b; }
  ol .now { color: #1d4ed8; font-weight: 600; }
</style>
<main>
  <ol id="steps"></ol>
  <h1 id="title"></h1>
  <p id="hint"></p>
  <canvas id="view" width="640" height="320" aria-label="A photo of a ball flying past trees, as the camera's settings would take it"></canvas>
  <div class="row"><label for="setting" id="label"></label><input id="setting" type="range"><span class="meter" id="value"></span></div>
  <div class="row"><span class="meter" id="exposure"></span><span id="verdict" role="status"></span></div>
  <div class="row"><button id="next" type="button">Next step</button></div>
</main>
<script src="sim.js"></script>
</html>
`

// script draws the picture and runs the steps. Exposure is counted in
// stops from a well-exposed picture: one stop per doubling of light.
const script = `(function () {
  'use strict';
  var steps = STEPS;
  var texts = {
    aperture: ['Aperture', 'A wide aperture (small f-number) lets in more light and blurs the background. Find a setting you like.'],
    shutter: ['Shutter speed', 'A slow shutter lets in more light but streaks the moving ball. Make the ball sharp.'],
    iso: ['ISO', 'Higher ISO brightens the picture but adds grain. Bring the exposure to within half a stop of 0.']
  };
  var apertures = [1.4, 2, 2.8, 4, 5.6, 8, 11, 16];
  var shutters = [15, 30, 60, 125, 250, 500, 1000];
  var isos = [100, 200, 400, 800, 1600, 3200, 6400];
  var state = { aperture: 3, shutter: 4, iso: 0 };
  var at = 0, last = steps.length - 1, done = false;
  var canvas = document.getElementById('view'), ctx = canvas.getContext('2d');
  var slider = document.getElementById('setting');
  var lists = { aperture: apertures, shutter: shutters, iso: isos };
  function log2(x) { return Math.log(x) / Math.LN2; }
  // Stops over a good exposure of f/4, 1/250 s, ISO 400 (a bright day's scene).
  function stops() {
    return 2 * log2(4 / apertures[state.aperture]) + log2(250 / shutters[state.shutter]) + log2(isos[state.iso] / 400);
  }
  function label(kind, i) {
    return kind === 'aperture' ? 'f/' + apertures[i] : kind === 'shutter' ? '1/' + shutters[i] + ' s' : 'ISO ' + isos[i];
  }
  function send(m) { if (window.parent !== window) { window.parent.postMessage(m, '*'); } }
  function draw(t) {
    var ev = stops();
    var light = Math.max(0.08, Math.min(2.4, Math.pow(2, ev / 1.6)));
    var blur = Math.max(0, 4 - state.aperture) * 1.6;
    var w = canvas.width, h = canvas.height;
    ctx.save();
    ctx.filter = 'brightness(' + light + ')';
    var sky = ctx.createLinearGradient(0, 0, 0, h);
    sky.addColorStop(0, '#7dd3fc'); sky.addColorStop(1, '#e0f2fe');
    ctx.fillStyle = sky; ctx.fillRect(0, 0, w, h);
    ctx.filter = 'brightness(' + light + ') blur(' + blur + 'px)';
    for (var i = 0; i < 7; i++) {
      var x = 40 + i * 95;
      ctx.fillStyle = '#78350f'; ctx.fillRect(x - 5, 150, 10, 90);
      ctx.fillStyle = i % 2 ? '#15803d' : '#166534';
      ctx.beginPath(); ctx.arc(x, 140, 42, 0, 2 * Math.PI); ctx.fill();
    }
    ctx.filter = 'brightness(' + light + ')';
    ctx.fillStyle = '#65a30d'; ctx.fillRect(0, 240, w, h - 240);
    // The ball crosses the frame; a slow shutter draws its streak.
    var bx = (t / 4) % (w + 80) - 40, streak = Math.min(120, 1800 / shutters[state.shutter]);
    for (var s = 0; s <= 12; s++) {
      ctx.globalAlpha = s === 12 ? 1 : 0.12;
      ctx.fillStyle = '#dc2626';
      ctx.beginPath(); ctx.arc(bx - streak + streak * s / 12, 205, 22, 0, 2 * Math.PI); ctx.fill();
    }
    ctx.globalAlpha = 1;
    ctx.restore();
    // Grain: one speck per pixel block, more with ISO.
    var grain = Math.max(0, state.iso - 1) * 260;
    for (var g = 0; g < grain; g++) {
      ctx.fillStyle = Math.random() < 0.5 ? 'rgba(255,255,255,.5)' : 'rgba(0,0,0,.5)';
      ctx.fillRect(Math.random() * w, Math.random() * h, 2, 2);
    }
  }
  function show() {
    var step = steps[at], kind = step.id;
    document.getElementById('steps').innerHTML = steps.map(function (s, i) {
      return '<li class="' + (i === at ? 'now' : '') + '">' + (i + 1) + '. ' + s.title + '</li>';
    }).join('');
    document.getElementById('title').textContent = step.title;
    document.getElementById('hint').textContent = texts[kind][1];
    document.getElementById('label').textContent = texts[kind][0];
    slider.min = 0; slider.max = lists[kind].length - 1; slider.value = state[kind];
    document.getElementById('next').hidden = at === last;
    update();
  }
  function update() {
    var kind = steps[at].id;
    state[kind] = Number(slider.value);
    document.getElementById('value').textContent = label(kind, state[kind]);
    var ev = stops();
    document.getElementById('exposure').textContent = 'Exposure: ' + (ev > 0 ? '+' : '') + ev.toFixed(1) + ' stops';
    var verdict = document.getElementById('verdict');
    verdict.textContent = Math.abs(ev) <= 0.5 ? 'Well exposed' : ev > 0 ? 'Too bright' : 'Too dark';
    verdict.className = Math.abs(ev) <= 0.5 ? 'ok' : '';
    if (at === last && Math.abs(ev) <= 0.5 && !done) {
      done = true;
      send({ type: 'lms-interactive:score', score: Math.round(100 - 100 * Math.abs(ev)) });
      send({ type: 'lms-interactive:complete' });
    }
  }
  function go(i) {
    at = i;
    send({ type: 'lms-interactive:step', step: steps[at].id });
    show();
  }
  slider.addEventListener('input', update);
  document.getElementById('next').addEventListener('click', function () { if (at < last) { go(at + 1); } });
  // The page sends the played range once the frame has loaded.
  window.addEventListener('message', function (e) {
    var m = e.data;
    if (!m || m.type !== 'lms-interactive:init') { return; }
    var start = -1;
    steps.forEach(function (s, i) { if (s.id === m.startStep) { start = i; } if (s.id === m.endStep) { last = i; } });
    if (start >= 0 && start !== at) { go(start); }
  });
  // The page sizes the frame to the content, which grows and shrinks
  // with the frame's width (the canvas keeps its proportions).
  function tellHeight() { send({ type: 'lms-interactive:resize', height: Math.ceil(document.body.getBoundingClientRect().height) }); }
  if (window.ResizeObserver) { new ResizeObserver(tellHeight).observe(document.body); }
  tellHeight();
  function frame(t) { draw(t); window.requestAnimationFrame(frame); }
  go(0);
  window.requestAnimationFrame(frame);
})();
`

// Files are the app's files by name: lms-interactive.json, index.html
// and sim.js.
func Files() (map[string]string, error) {
	manifest, err := json.Marshal(map[string]any{"title": Title, "entry": "index.html", "steps": Steps})
	if err != nil {
		return nil, err
	}
	steps, err := json.Marshal(Steps)
	if err != nil {
		return nil, err
	}
	return map[string]string{
		"lms-interactive.json": string(manifest),
		"index.html":           page,
		"sim.js":               strings.Replace(script, "STEPS", string(steps), 1),
	}, nil
}

// Package returns the app as a .zip, its files in a fixed order.
func Package() ([]byte, error) {
	files, err := Files()
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	w := zip.NewWriter(&b)
	for _, name := range []string{"lms-interactive.json", "index.html", "sim.js"} {
		fw, err := w.Create(name)
		if err != nil {
			return nil, err
		}
		if _, err := fw.Write([]byte(files[name])); err != nil {
			return nil, err
		}
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
