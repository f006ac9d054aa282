// Package scormdemo makes the demo's SCORM 1.2 package: one SCO of three
// short pages on study habits, made by the program (no third-party
// content). The SCO bookmarks its page (lesson_location), keeps the pages
// seen in suspend_data, asks one question whose answer is the score, and
// is completed on its last page; leaving earlier suspends it.
package scormdemo

import (
	"archive/zip"
	"bytes"
	"html"
	"strings"
)

// Title is the package's organization title.
const Title = "Study habits that work"

type page struct{ title, body string }

var pages = []page{
	{"Space it out", "Short sessions spread over days beat one long session the night before: each return to the material " +
		"strengthens what you remember."},
	{"Test yourself", "Recalling an answer without looking is practice that sticks. Close the book and write down what you " +
		"remember, then check."},
	{"Check what you learned", "Which habit helps you remember longer?"},
}

const manifest = `<?xml version="1.0" encoding="UTF-8"?>
<manifest identifier="lms.demo.study-habits" version="1"
  xmlns="http://www.imsproject.org/xsd/imscp_rootv1p1p2" xmlns:adlcp="http://www.adlnet.org/xsd/adlcp_rootv1p2">
  <metadata><schema>ADL SCORM</schema><schemaversion>1.2</schemaversion></metadata>
  <organizations default="org">
    <organization identifier="org">
      <title>` + Title + `</title>
      <item identifier="habits" identifierref="sco">
        <title>` + Title + `</title>
        <adlcp:masteryscore>50</adlcp:masteryscore>
      </item>
    </organization>
  </organizations>
  <resources>
    <resource identifier="sco" type="webcontent" adlcp:scormtype="sco" href="index.html">
      <file href="index.html"/>
    </resource>
  </resources>
</manifest>
`

// script talks to the LMS through the SCORM 1.2 API of the player.
const script = `
var api = window.parent && window.parent.API;
var seen = {};
var current = 0;
var pages = document.querySelectorAll('section');
function show(i) {
  current = i;
  for (var j = 0; j < pages.length; j++) pages[j].hidden = j !== i;
  seen[i] = true;
  document.getElementById('back').disabled = i === 0;
  document.getElementById('next').hidden = i === pages.length - 1;
  if (api) {
    api.LMSSetValue('cmi.core.lesson_location', String(i));
    api.LMSSetValue('cmi.suspend_data', Object.keys(seen).join(','));
    api.LMSCommit('');
  }
}
function answer(right) {
  document.getElementById('result').textContent = right ? 'Right: spacing your sessions helps you remember.' : 'Not quite: spaced sessions help you remember longer.';
  if (api) {
    api.LMSSetValue('cmi.core.score.raw', right ? '100' : '0');
    api.LMSSetValue('cmi.core.lesson_status', 'completed');
    api.LMSSetValue('cmi.core.exit', '');
    api.LMSCommit('');
  }
}
var start = 0;
if (api) {
  api.LMSInitialize('');
  if (api.LMSGetValue('cmi.core.lesson_status') === 'not attempted') api.LMSSetValue('cmi.core.lesson_status', 'incomplete');
  var stored = api.LMSGetValue('cmi.suspend_data');
  if (stored) stored.split(',').forEach(function (k) { seen[k] = true; });
  start = parseInt(api.LMSGetValue('cmi.core.lesson_location'), 10) || 0;
}
document.getElementById('back').onclick = function () { show(current - 1); };
document.getElementById('next').onclick = function () { show(current + 1); };
document.getElementById('a-spaced').onclick = function () { answer(true); };
document.getElementById('a-cram').onclick = function () { answer(false); };
window.addEventListener('pagehide', function () {
  if (!api) return;
  if (api.LMSGetValue('cmi.core.lesson_status') !== 'completed' && api.LMSGetValue('cmi.core.lesson_status') !== 'passed') {
    api.LMSSetValue('cmi.core.exit', 'suspend');
  }
  api.LMSFinish('');
});
show(Math.min(start, pages.length - 1));
`

func index() string {
	var b strings.Builder
	b.WriteString(`<!doctype html><html lang="en"><head><meta charset="utf-8"><title>` + Title + `</title>
<style>body{font-family:system-ui,sans-serif;max-width:40rem;margin:2rem auto;padding:0 1rem;line-height:1.5}
button{font:inherit;padding:.4rem .9rem;margin:.2rem}</style></head><body>`)
	for i, p := range pages {
		b.WriteString(`<section id="page-` + string(rune('0'+i)) + `"><h1>` + html.EscapeString(p.title) + `</h1><p>` + html.EscapeString(p.body) + `</p>`)
		if i == len(pages)-1 {
			b.WriteString(`<p><button id="a-spaced">Spaced sessions</button><button id="a-cram">One long session</button></p><p id="result" role="status"></p>`)
		}
		b.WriteString(`</section>`)
	}
	b.WriteString(`<nav><button id="back">Back</button><button id="next">Next</button></nav><script>` + script + `</script></body></html>`)
	return b.String()
}

// Package returns the zipped package.
func Package() ([]byte, error) {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, f := range []struct{ name, body string }{{"imsmanifest.xml", manifest}, {"index.html", index()}} {
		w, err := zw.Create(f.name)
		if err != nil {
			return nil, err
		}
		if _, err := w.Write([]byte(f.body)); err != nil {
			return nil, err
		}
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
