package web

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/lms-platform/lms/internal/apitest"
	"github.com/lms-platform/lms/internal/demo/cmi5demo"
	"github.com/lms-platform/lms/internal/device"
	"github.com/lms-platform/lms/internal/kinds/scorm"
)

// hostileScript is what a hostile package runs against whoever opens it:
// it tries to read the frontend's cookies, page and storage, to call
// /bff/ and the API with the viewer's credentials, and to approve a
// device login (code CODE, started by the package's author) as the
// viewer; then it records its findings as the SCO's suspend_data, with
// an ordinary SCORM commit, through the runtime found in window.parent
// (the lms API) or the cmi5 LRS. FRONT is the frontend's origin.
// Each finding is "read:...", "status:N:..." or "blocked:ErrorName".
const hostileScript = `
var FRONT = %q, CODE = %q;
var found = {};
function settle(p) {
  return Promise.race([p, new Promise(function (r) { setTimeout(function () { r('timeout'); }, 5000); })]);
}
function attempt(name, fn) {
  try { found[name] = 'read:' + String(fn()).slice(0, 60); } catch (e) { found[name] = 'blocked:' + e.name; }
}
function fetched(name, url, opts) {
  found[name] = 'timeout';
  return settle(fetch(url, opts).then(function (r) {
    return r.text().then(function (t) { found[name] = 'status:' + r.status + ':' + t.replace(/\s+/g, ' ').slice(0, 40); });
  }, function (e) { found[name] = 'blocked:' + e.name; }));
}
function formPost(action) {
  return settle(new Promise(function (done) {
    var sink = document.createElement('iframe');
    sink.name = 'sink' + Math.random().toString(36).slice(2);
    sink.onload = function () { done(); };
    document.body.appendChild(sink);
    var f = document.createElement('form');
    f.method = 'post'; f.action = action; f.target = sink.name;
    var i = document.createElement('input');
    i.name = 'code'; i.value = CODE; f.appendChild(i);
    document.body.appendChild(f);
    f.submit();
  }));
}
function probe() {
  attempt('cookie', function () { return document.cookie; });
  attempt('top_document', function () { return window.top.document.body.innerHTML; });
  attempt('top_location', function () { return window.top.location.href; });
  attempt('top_storage', function () { return window.top.localStorage.getItem('front-secret'); });
  attempt('own_storage', function () { return localStorage.getItem('front-secret'); });
  attempt('origin', function () { return window.location.origin; });
  var creds = { credentials: 'include' };
  return Promise.all([
    fetched('bff_here', '/bff/api/profile/me', creds),
    fetched('bff_front', FRONT + '/bff/api/profile/me', creds),
    fetched('api_front', FRONT + '/bff/api/courses/progress', creds),
    fetched('device_page', FRONT + '/device?code=' + CODE, creds),
    fetched('approve_here', '/device/approve', { method: 'POST', credentials: 'include', body: new URLSearchParams({ code: CODE }) }),
    fetched('approve_front', FRONT + '/device/approve', { method: 'POST', credentials: 'include', mode: 'no-cors',
      body: new URLSearchParams({ code: CODE }) }),
    formPost(FRONT + '/device/approve'),
    formPost('/device/approve')
  ]).then(function () {
    // Last: take the viewer's window somewhere else.
    attempt('top_navigation', function () { window.top.location.href = FRONT + '/my?hijacked=1'; return 'done'; });
    return found;
  });
}
`

// hostileSCO is a SCORM 1.2 package of one SCO that runs hostileScript,
// then records its findings and completes through the SCORM API.
func hostileSCO(t *testing.T, front, code string) []byte {
	t.Helper()
	page := `<!doctype html><html><head><meta charset="utf-8"><title>Hostile</title></head><body><p id="status">running</p><script>` +
		fmt.Sprintf(hostileScript, front, code) + `
probe().then(function (found) {
  var api = window.parent.API;
  api.LMSInitialize('');
  api.LMSSetValue('cmi.suspend_data', JSON.stringify(found));
  api.LMSSetValue('cmi.core.lesson_status', 'completed');
  api.LMSCommit('');
  api.LMSFinish('');
  window.hostileDone = true;
  document.getElementById('status').textContent = 'done';
});
</script></body></html>`
	files := map[string]string{
		"index.html": page,
		"imsmanifest.xml": `<?xml version="1.0" encoding="UTF-8"?>
<manifest identifier="hostile" version="1" xmlns="http://www.imsproject.org/xsd/imscp_rootv1p1p2"
  xmlns:adlcp="http://www.adlnet.org/xsd/adlcp_rootv1p2">
  <metadata><schema>ADL SCORM</schema><schemaversion>1.2</schemaversion></metadata>
  <organizations default="org"><organization identifier="org"><title>Hostile</title>
    <item identifier="item" identifierref="res"><title>Hostile page</title></item>
  </organization></organizations>
  <resources>
    <resource identifier="res" type="webcontent" adlcp:scormtype="sco" href="index.html"><file href="index.html"/></resource>
  </resources>
</manifest>`,
	}
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	for name, body := range files {
		w, _ := zw.Create(name)
		w.Write([]byte(body))
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// checkFindings asserts that every attempt of hostileScript failed.
func checkFindings(t *testing.T, found map[string]string, contentOrigin string) {
	t.Helper()
	t.Logf("the package found: %v", found)
	blocked := func(name string) {
		t.Helper()
		if !strings.HasPrefix(found[name], "blocked:") {
			t.Errorf("%s: the package got %q", name, found[name])
		}
	}
	// The frontend's cookies are httpOnly, and the content origin sets
	// none: the package sees an empty document.cookie.
	if c := found["cookie"]; c != "read:" {
		t.Errorf("document.cookie: %q", c)
	}
	if found["origin"] != "read:"+contentOrigin {
		t.Errorf("the package ran on %q, not on the content origin %s", found["origin"], contentOrigin)
	}
	blocked("top_document")
	blocked("top_location")
	blocked("top_storage")
	blocked("top_navigation")
	if found["own_storage"] != "read:null" {
		t.Errorf("the frontend's localStorage from the package: %q", found["own_storage"])
	}
	// On its own origin the frontend's routes are not there; towards the
	// frontend's origin the browser shows the package nothing.
	for _, name := range []string{"bff_here", "approve_here"} {
		if !strings.HasPrefix(found[name], "status:404:") {
			t.Errorf("%s: %q", name, found[name])
		}
	}
	blocked("bff_front")
	blocked("api_front")
	blocked("device_page")
	if found["approve_front"] != "status:0:" {
		t.Errorf("approve_front: %q", found["approve_front"])
	}
}

// TestHostileScormInBrowser is issue 33's attack in Chromium: an author
// starts a device login (broad scopes) and uploads a SCORM package whose
// page tries everything against whoever opens it; an admin opens the
// topic. The package runs on the content origin: it reads no cookie,
// page or storage of the frontend, reaches no /bff/ or API route with
// the admin's credentials, and cannot approve the device, whose login
// stays pending (the frontend never asked the API to approve). Its
// legitimate SCORM tracking works: the commit with its findings and
// lesson_status arrives, and the topic completes.
func TestHostileScormInBrowser(t *testing.T) {
	p := newScormPlayAs(t, "admin")
	env := p.env
	codes := env.Call(t, 200, "POST", "/api/auth/device/code", "", map[string]any{"client_name": "lmsctl",
		"scopes": []string{"courses:read", "courses:write", "users:read"}})
	dc, uc := codes.String("data.device_code"), codes.String("data.user_code")
	if dc == "" || uc == "" {
		t.Fatalf("device code: %s", codes.Body)
	}
	contentOrigin := "http://" + env.Host + ":" + p.front.contentPort
	topic := p.scormTopic("Hostile", p.uploadBytes("hostile.zip", hostileSCO(t, p.origin, uc)), 0)

	// A secret in the frontend's storage, which the package must not read.
	p.run("storage", chromedp.Navigate(p.origin+"/my"), chromedp.WaitVisible(`main`, chromedp.ByQuery),
		chromedp.Evaluate(`localStorage.setItem('front-secret', 'admin-only'), true`, nil))
	token, sco := p.open(topic)
	var ok bool
	p.until("the package has tried", `F.sco.hostileDone === true`, &ok)

	res := env.Do(apitest.Request{Method: "GET", Path: "/api/scorm/tracks/" + sco, Headers: map[string]string{scorm.TokenHeader: token}})
	if res.Status != http.StatusOK {
		t.Fatalf("stored track: %d %s", res.Status, res.Body)
	}
	cmi, _ := res.Get("data.cmi").(map[string]any)
	if st := cmi["cmi.core.lesson_status"]; st != "completed" {
		t.Errorf("the package's commit: lesson_status %v: %s", st, res.Body)
	}
	var found map[string]string
	suspend, _ := cmi["cmi.suspend_data"].(string)
	if err := json.Unmarshal([]byte(suspend), &found); err != nil {
		t.Fatalf("the package's findings: %v: %s", err, res.Body)
	}
	checkFindings(t, found, contentOrigin)
	p.completes("the package's commit", topic)

	// The device login was not approved; the frontend never asked.
	if poll := pollDevice(t, env, dc); poll.String("error") != device.CodePending {
		t.Errorf("the device login after the package ran: %d %s", poll.Status, poll.Body)
	}
	if n := p.api.count("/api/auth/device/requests/" + uc + "/approve"); n != 0 {
		t.Errorf("the frontend asked the API to approve %d times", n)
	}
	// The viewer's window stayed on the topic.
	var here string
	p.run("location", chromedp.Location(&here))
	if !strings.HasPrefix(here, p.origin+"/learn/") {
		t.Errorf("the topic page was navigated to %s", here)
	}
}

// hostileAU is the demo's cmi5 package with hostileScript run first in
// its AU's page; the AU then starts as usual (au.js), so its own LRS
// calls show that the legitimate tracking works. The findings are left
// in the page as data-hostile.
func hostileAU(t *testing.T, front, code string) []byte {
	t.Helper()
	data, err := cmi5demo.Package()
	if err != nil {
		t.Fatal(err)
	}
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	zw := zip.NewWriter(&out)
	for _, f := range zr.File {
		rc, _ := f.Open()
		b, _ := io.ReadAll(rc)
		rc.Close()
		if f.Name == "index.html" {
			probe := `<script>` + fmt.Sprintf(hostileScript, front, code) + `
probe().then(function (found) {
  document.body.dataset.hostile = JSON.stringify(found);
  var s = document.createElement('script'); s.src = 'au.js'; document.body.appendChild(s);
});
</script>`
			if !bytes.Contains(b, []byte(`<script src="au.js"></script>`)) {
				t.Fatal("the demo AU's page changed")
			}
			b = bytes.Replace(b, []byte(`<script src="au.js"></script>`), []byte(probe), 1)
		}
		w, _ := zw.Create(f.Name)
		w.Write(b)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

// TestHostileCmi5InBrowser is TestHostileScormInBrowser for a cmi5 AU:
// launched into the topic's frame, it runs on the content origin, its
// endpoint and fetch URL there too; every attempt against the admin who
// opened it fails, the device login stays pending, and the AU's own
// statements (initialized, passed) reach the LRS.
func TestHostileCmi5InBrowser(t *testing.T) {
	env, f, admin, c := cmi5Site(t, "Hostile AU")
	viewer := env.NewUser("admin")
	b := newCmi5Browser(t, env, f, viewer)
	codes := env.Call(t, 200, "POST", "/api/auth/device/code", "", map[string]any{"client_name": "lmsctl",
		"scopes": []string{"courses:read", "courses:write", "users:read"}})
	dc, uc := codes.String("data.device_code"), codes.String("data.user_code")
	topic := demoTopic(t, env, admin.Token, c.lesson, hostileAU(t, b.origin, uc))

	b.run("storage", chromedp.Navigate(b.origin+"/my"), chromedp.WaitVisible(`main`, chromedp.ByQuery),
		chromedp.Evaluate(`localStorage.setItem('front-secret', 'admin-only'), true`, nil))
	frame, launch := b.startUntil(c.course, topic, `document.body.dataset.ready === '1'`)
	var raw string
	b.frameValue("the AU has tried", frame, `document.body.dataset.hostile`, &raw)
	var found map[string]string
	if err := json.Unmarshal([]byte(raw), &found); err != nil {
		t.Fatalf("findings %q: %v", raw, err)
	}
	checkFindings(t, found, b.content)

	// Its own tracking works: the answer is judged and stored.
	b.run("answer", chromedp.Click(`#a-spaced`, chromedp.ByID, chromedp.FromNode(frame)))
	b.inFrame("judged", frame, `document.body.dataset.busy === '0' && document.getElementById('status').textContent.indexOf('passed') >= 0`)
	if n := len(statements(t, env, admin.Token, url.Values{"registration": {launch.Get("registration")}, "verb": {verbPassed}})); n != 1 {
		t.Errorf("passed statements: %d", n)
	}
	if poll := pollDevice(t, env, dc); poll.String("error") != device.CodePending {
		t.Errorf("the device login after the AU ran: %d %s", poll.Status, poll.Body)
	}
	var here string
	b.run("location", chromedp.Location(&here))
	if !strings.HasPrefix(here, b.origin+"/learn/") {
		t.Errorf("the topic page was navigated to %s", here)
	}
}
