package web

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/lms-platform/lms/internal/apitest"
	"github.com/lms-platform/lms/internal/browsertest"
)

// hostileH5PScript is the library script of the hostile H5P package: on
// attach it tries what a tutor's package could do to the learner playing
// it, keeps its findings as its own state (through its play grant, as any
// H5P content saves state) and then completes, as a legitimate content
// would.
const hostileH5PScript = `
H5P.Hostile = (function ($) {
  function Hostile(params, contentId) {
    H5P.EventDispatcher.call(this);
    this.params = params;
    this.contentId = contentId;
  }
  Hostile.prototype = Object.create(H5P.EventDispatcher.prototype);
  Hostile.prototype.constructor = Hostile;
  Hostile.prototype.attach = function ($container) {
    var self = this, FRONT = self.params.front, OTHER = self.params.other, found = {};
    $container.html('<p id="hostile">running</p>');
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
    var grant = window.LmsH5PEmbed && window.LmsH5PEmbed.token();
    var bearer = { headers: { Authorization: 'Bearer ' + grant } };
    var creds = { credentials: 'include' };
    found.grant = grant ? 'held' : 'none';
    attempt('cookie', function () { return document.cookie; });
    attempt('top_document', function () { return window.top.document.body.innerHTML; });
    attempt('top_location', function () { return window.top.location.href; });
    attempt('top_storage', function () { return window.top.localStorage.getItem('front-secret'); });
    attempt('own_storage', function () { return localStorage.getItem('front-secret'); });
    attempt('origin', function () { return window.location.origin; });
    Promise.all([
      fetched('bff_here', '/bff/api/profile/me', creds),
      fetched('bff_front', FRONT + '/bff/api/profile/me', creds),
      fetched('h5p_front', FRONT + '/h5p/contents', creds),
      fetched('h5p_front_play', FRONT + '/h5p/contents/' + OTHER + '/play', creds),
      fetched('grant_api_here', '/api/profile/me', bearer),
      fetched('grant_bff_front', FRONT + '/bff/api/profile/me', bearer),
      fetched('grant_other_play', '/h5p/contents/' + OTHER + '/play', bearer),
      fetched('grant_other_file', '/h5p/content/' + OTHER + '/content.json', bearer),
      fetched('grant_other_state', '/h5p/contentUserData/' + OTHER + '/state/0', bearer),
      fetched('grant_list', '/h5p/contents', bearer),
      fetched('grant_whoami', '/h5p/whoami', bearer)
    ]).then(function () {
      attempt('top_navigation', function () { window.top.location.href = FRONT + '/my?hijacked=1'; return 'done'; });
      $.ajax({ url: '/h5p/contentUserData/' + self.contentId + '/findings/0', method: 'POST',
        data: { data: JSON.stringify(found), preload: 0, invalidate: 0 } }).always(function () {
        self.triggerXAPICompleted(1, 1, true);
        document.getElementById('hostile').textContent = 'done';
      });
    });
  };
  return Hostile;
})(H5P.jQuery);
`

// hostileH5P builds a minimal valid H5P package whose one library runs
// hostileH5PScript, told the frontend's origin and another content's id.
func hostileH5P(t *testing.T, front, other string) []byte {
	t.Helper()
	params, _ := json.Marshal(map[string]string{"front": front, "other": other})
	files := []struct{ name, body string }{
		{"h5p.json", `{"title":"Hostile","mainLibrary":"H5P.Hostile","language":"en","embedTypes":["iframe"],
"preloadedDependencies":[{"machineName":"H5P.Hostile","majorVersion":1,"minorVersion":0}]}`},
		{"content/content.json", string(params)},
		{"H5P.Hostile-1.0/library.json", `{"title":"Hostile","machineName":"H5P.Hostile","majorVersion":1,"minorVersion":0,
"patchVersion":0,"runnable":1,"preloadedJs":[{"path":"hostile.js"}]}`},
		{"H5P.Hostile-1.0/hostile.js", hostileH5PScript},
	}
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	for _, f := range files {
		w, _ := zw.Create(f.name)
		w.Write([]byte(f.body))
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestHostileH5PInBrowser plays a hostile H5P package as a signed-in
// learner in Chromium: its script runs on the content origin, reads no
// cookie, cannot reach the topic page, gets 404 for /bff/ there and no
// answer from the frontend's /bff/ and /h5p/, and its play grant opens
// neither the API nor another content; its completion, sent the way every
// H5P content sends it, still completes the topic.
func TestHostileH5PInBrowser(t *testing.T) {
	env := apitest.New(t, "sqlite", apitest.Options{})
	api := newCountingAPI(t, env.Server.Handler)
	f := newFront(t, api.srv.URL, "platform.test", frontOptions{clock: env.Clock})
	f.host = env.Host
	admin := env.As("admin").Token
	c := seedCourse(t, env, env.Host, admin, "Hostile H5P")
	_, frontPort, _ := strings.Cut(strings.TrimPrefix(f.srv.URL, "http://"), ":")
	origin := "http://" + env.Host + ":" + frontPort
	contentOrigin := "http://" + env.Host + ":" + f.contentPort

	learner := env.NewUser("student")
	grantOf := func(topic int64) *apitest.Response {
		t.Helper()
		g := env.Do(apitest.Request{Method: "POST", Path: "/api/courses/progress/" + id(topic) + "/h5p/grant", Token: learner.Token})
		if g.Status != http.StatusCreated {
			t.Fatalf("grant: %d %s", g.Status, g.Body)
		}
		return g
	}
	// Another content the learner may play, which the package targets.
	legit := h5pTopic(t, env, env.Host, admin, c.lesson, fixture(t, "h5p/valid/valid3-3-images.h5p"))
	other := grantOf(legit).String("data.content_id")
	path := filepath.Join(t.TempDir(), "hostile.h5p")
	if err := os.WriteFile(path, hostileH5P(t, origin, other), 0o600); err != nil {
		t.Fatal(err)
	}
	hostile := h5pTopic(t, env, env.Host, admin, c.lesson, path)

	ctx := browsertest.New(t, 3*time.Minute, browsertest.MapHosts(env.Host), browsertest.SameProcessFrames())
	run := func(what string, actions ...chromedp.Action) {
		t.Helper()
		if err := chromedp.Run(ctx, actions...); err != nil {
			t.Fatalf("%s: %v\n%s", what, err, browsertest.Show(ctx, `location.href + "\n" + document.body.innerText.slice(0, 2000)`))
		}
	}
	run("sign in", chromedp.Navigate(origin+"/login"), chromedp.WaitVisible(`#email`, chromedp.ByID),
		chromedp.SendKeys(`#email`, learner.Email, chromedp.ByID),
		chromedp.SendKeys(`#password`, learner.Password, chromedp.ByID),
		chromedp.Submit(`#password`, chromedp.ByID),
		chromedp.WaitVisible(landed, chromedp.ByQuery),
		chromedp.Evaluate(`localStorage.setItem('front-secret', 'learner-only'), true`, nil))

	page := origin + "/learn/" + id(c.course) + "/" + id(hostile)
	run("hostile topic", chromedp.Navigate(page), chromedp.WaitVisible(`#h5p-frame`, chromedp.ByID))
	var src string
	run("frame src", chromedp.Evaluate(`document.getElementById('h5p-frame').src`, &src))
	if !strings.HasPrefix(src, contentOrigin+"/h5p/embed/play/") || strings.Contains(src, "lms_h5pplay") {
		t.Fatalf("the H5P frame is at %s", src)
	}
	var done bool
	run("the package completes", browsertest.Until(`!!document.querySelector('#topic-status.status-1')`, &done))

	// Its findings, read with a grant of the same learner.
	g := grantOf(hostile)
	r := f.must(req{path: "/h5p/contentUserData/" + g.String("data.content_id") + "/findings/0", content: true,
		headers: map[string]string{"Authorization": "Bearer " + g.String("data.grant")}}, http.StatusOK)
	raw, _ := r.get("data").(string)
	var found map[string]string
	if err := json.Unmarshal([]byte(raw), &found); err != nil {
		t.Fatalf("the package's findings: %v: %s", err, r.body)
	}
	t.Logf("the package found: %v", found)
	if found["grant"] != "held" {
		t.Errorf("the package played without its grant: %v", found["grant"])
	}
	if found["cookie"] != "read:" {
		t.Errorf("document.cookie: %q", found["cookie"])
	}
	if found["origin"] != "read:"+contentOrigin {
		t.Errorf("the package ran on %q, not on the content origin %s", found["origin"], contentOrigin)
	}
	if found["own_storage"] != "read:null" {
		t.Errorf("the frontend's localStorage from the package: %q", found["own_storage"])
	}
	want := map[string]string{"top_document": "blocked:", "top_location": "blocked:", "top_storage": "blocked:",
		"top_navigation": "blocked:", "bff_front": "blocked:", "h5p_front": "blocked:", "h5p_front_play": "blocked:",
		"grant_bff_front": "blocked:", "bff_here": "status:404:", "grant_api_here": "status:404:",
		"grant_other_play": "status:403:", "grant_other_file": "status:403:", "grant_other_state": "status:403:",
		"grant_list": "status:403:", "grant_whoami": "status:403:"}
	for name, prefix := range want {
		if !strings.HasPrefix(found[name], prefix) {
			t.Errorf("%s: the package got %q, want %s...", name, found[name], prefix)
		}
	}
	var here string
	run("location", chromedp.Location(&here))
	if here != page {
		t.Errorf("the topic page was navigated to %s", here)
	}
}
