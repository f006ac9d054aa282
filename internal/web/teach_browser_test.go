package web

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/csv"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/golang-jwt/jwt/v5"

	"github.com/lms-platform/lms/client"
	"github.com/lms-platform/lms/internal/apitest"
	"github.com/lms-platform/lms/internal/browsertest"
	"github.com/lms-platform/lms/internal/config"
	"github.com/lms-platform/lms/internal/kinds/interactive/interactivetest"
	"github.com/lms-platform/lms/internal/media/mediatest"
	"github.com/lms-platform/lms/internal/queue/queuetest"
)

func mustID(t *testing.T, s string) int64 {
	t.Helper()
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		t.Fatalf("not an id: %q", s)
	}
	return n
}

// oembedSite is an oEmbed provider on the loopback network: a page that
// names its description in its head, and the description of a video.
func oembedSite(t *testing.T) *httptest.Server {
	mux := http.NewServeMux()
	mux.HandleFunc("/watch", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `<html><head><link rel="alternate" type="application/json+oembed" href="/oembed?url=%s"></head><body>Tides</body></html>`,
			url.QueryEscape("http://"+r.Host+"/watch"))
	})
	mux.HandleFunc("/oembed", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"version": "1.0", "type": "video", "title": "Tides", "provider_name": "Shore films",
			"width": 640, "height": 360, "html": `<iframe src="http://` + r.Host + `/embed/1" width="640" height="360"></iframe>`})
	})
	mux.HandleFunc("/embed/1", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><html lang="en"><title>Tides</title><p>The tide comes in.</p></html>`)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// mp3 has ffmpeg make a tone of one second.
func mp3(t *testing.T) string {
	t.Helper()
	mediatest.NeedFFmpeg(t)
	out := filepath.Join(t.TempDir(), "waves.mp3")
	if b, err := exec.Command("ffmpeg", "-hide_banner", "-nostdin", "-y", "-f", "lavfi", "-i", "sine=frequency=330:duration=1",
		"-c:a", "libmp3lame", out).CombinedOutput(); err != nil {
		t.Fatalf("ffmpeg: %v\n%s", err, b)
	}
	return out
}

// ltiScore is the tool's side of AGS: a service token by a client
// assertion signed with the tool's key, a line item of the topic, and a
// completed, fully graded score of the learner.
func ltiScore(t *testing.T, env *apitest.Env, key *rsa.PrivateKey, tool *client.ExternalTool, topic, learner int64) {
	t.Helper()
	ctx := t.Context()
	anon := env.Client(env.Host, "")
	urls := apitest.Must(env.ClientAs("admin").GetAdminLTIPlatform(ctx))(t)
	now := env.Clock.Now()
	assertion, err := jwt.NewWithClaims(jwt.SigningMethodRS256, jwt.MapClaims{"iss": tool.ClientID, "sub": tool.ClientID,
		"aud": urls.Issuer + "/api/lti/token", "iat": now.Unix(), "exp": now.Add(time.Minute).Unix(),
		"jti": "walk-" + strconv.FormatInt(now.UnixNano(), 10)}).SignedString(key)
	if err != nil {
		t.Fatal(err)
	}
	form := url.Values{"grant_type": {"client_credentials"}, "client_assertion_type": {"urn:ietf:params:oauth:client-assertion-type:jwt-bearer"},
		"client_assertion": {assertion}, "scope": {"https://purl.imsglobal.org/spec/lti-ags/scope/lineitem https://purl.imsglobal.org/spec/lti-ags/scope/score"}}
	read := func(res *http.Response, err error, out any) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		if res.StatusCode >= 300 {
			t.Fatalf("%s: %d", res.Request.URL.Path, res.StatusCode)
		}
		if out != nil {
			if err := json.NewDecoder(res.Body).Decode(out); err != nil {
				t.Fatalf("%s: %v", res.Request.URL.Path, err)
			}
		}
	}
	var issued struct {
		AccessToken string `json:"access_token"`
	}
	res, err := anon.PostLTIToken(ctx, strings.NewReader(form.Encode()), "application/x-www-form-urlencoded")
	read(res, err, &issued)
	as := anon.WithToken(issued.AccessToken)
	var item struct {
		ID string `json:"id"`
	}
	res, err = as.PostLTIAgsIDLineitems(ctx, topic, strings.NewReader(`{"label":"Lab","scoreMaximum":10}`), "application/vnd.ims.lis.v2.lineitem+json")
	read(res, err, &item)
	itemID, err := strconv.ParseInt(path.Base(item.ID), 10, 64)
	if err != nil {
		t.Fatalf("line item %q", item.ID)
	}
	res, err = as.PostLTIAgsIDLineitemsIDScores(ctx, topic, itemID, strings.NewReader(fmt.Sprintf(`{"userId":"%d","scoreGiven":9,`+
		`"scoreMaximum":10,"activityProgress":"Completed","gradingProgress":"FullyGraded","timestamp":"%s"}`,
		learner, now.UTC().Format("2006-01-02T15:04:05.000Z07:00"))), "application/vnd.ims.lis.v1.score+json")
	read(res, err, nil)
}

// TestTeachWalkInBrowser is the walk in Chromium, from
// beginning to end: a tutor signs in, creates a course, adds through the
// "Add topic" flow one topic of each of the fifteen kinds (packages from
// the shared fixtures, media made here), publishes it and assigns a
// learner on the learners page. The learner, in a browser of their own,
// completes every topic as a learner does; the tutor then sees the
// learner finished at 100% in the progress table and downloads its CSV.
// Every page the tutor meets is checked with axe-core at 390 and
// 1280 px and kept as a screenshot.
func TestTeachWalkInBrowser(t *testing.T) {
	began := time.Now()
	env := apitest.New(t, "sqlite", apitest.Options{Configure: func(c *config.Config) {
		// The oEmbed provider of the test is on the loopback network.
		c.FetchAllowPrivate = true
	}})
	api := newCountingAPI(t, env.Server.Handler)
	f := newFront(t, api.srv.URL, "platform.test", frontOptions{clock: env.Clock})
	f.host = env.Host
	ctx := t.Context()
	tutor, learner := env.NewUser("tutor"), env.NewUser("student")
	_, frontPort, _ := strings.Cut(strings.TrimPrefix(f.srv.URL, "http://"), ":")
	origin := "http://" + env.Host + ":" + frontPort
	site := oembedSite(t)

	// The admin has registered an external tool (the stub of the LTI
	// tests, with a key the test holds for its grades).
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	der, _ := x509.MarshalPKIXPublicKey(&key.PublicKey)
	pub := string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}))
	_, apiPort, _ := strings.Cut(strings.TrimPrefix(env.HTTP.URL, "http://"), ":")
	var ext *client.ExternalTool
	toolSrv := newLTIStubTool(t, env, func() string { return "http://" + env.Host + ":" + apiPort + "/api/lti/authorize" },
		func() string { return ext.ClientID })
	_, toolPort, _ := strings.Cut(strings.TrimPrefix(toolSrv.srv.URL, "http://"), ":")
	toolOrigin := "http://tool.test:" + toolPort
	ext = apitest.Must(env.ClientAs("admin").PostAdminLTITools(ctx, client.ToolInput{Name: "Tide lab", LoginURL: toolOrigin + "/login",
		TargetLinkURI: toolOrigin + "/launch", RedirectUris: []string{toolSrv.srv.URL + "/launch"}, PublicKey: &pub}))(t)

	// One browser maps the tenant's host, the tool's, and the hosts
	// LiaScript's templates come from (a stand-in, as the machine has no
	// network).
	templates := newStandIn(t)
	rules := []string{"MAP " + env.Host + " 127.0.0.1", "MAP tool.test 127.0.0.1"}
	for _, h := range templateHosts {
		rules = append(rules, "MAP "+h+":443 "+templates.srv.Listener.Addr().String())
	}
	hosts := []chromedp.ExecAllocatorOption{chromedp.Flag("host-resolver-rules", strings.Join(rules, ", ")),
		chromedp.Flag("ignore-certificate-errors", true)}

	b := &browserRun{t: t, ctx: newBrowser(t, env.Host, hosts...)}
	pages := 0
	check := func(name string) {
		t.Helper()
		pages++
		for _, width := range pageWidths {
			b.run(fmt.Sprintf("%s at %d px", name, width), chromedp.EmulateViewport(width, 900))
			vs, err := browsertest.Axe(b.ctx)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			for _, v := range browsertest.Severe(vs) {
				t.Errorf("%s at %d px: %s", name, width, v)
			}
			var overflow bool
			b.run(name+" width", chromedp.Evaluate(`document.documentElement.scrollWidth > window.innerWidth + 1`, &overflow))
			if overflow {
				t.Errorf("%s at %d px: the page is wider than the screen", name, width)
			}
			b.screenshot(fmt.Sprintf("teach-%s-%d", name, width))
		}
		b.run(name+" desktop", chromedp.EmulateViewport(1280, 900))
	}

	b.run("sign in", signIn(origin, tutor), chromedp.WaitVisible(`a[href="/teach"][aria-current="page"]`, chromedp.ByQuery))
	check("dashboard")
	b.run("new course", chromedp.Click(`a[href="/teach/courses/new"]`, chromedp.ByQuery), chromedp.WaitVisible(`#title`, chromedp.ByID))
	check("course-new")
	b.run("create", chromedp.SendKeys(`#title`, "The shore", chromedp.ByID),
		chromedp.SendKeys(`#summary`, "Tides, pools and what lives there.", chromedp.ByID),
		chromedp.Click(`form[action="/teach/courses/new"] button[type=submit]`, chromedp.ByQuery),
		chromedp.WaitVisible(`#program`, chromedp.ByID))
	var loc string
	b.run("course id", chromedp.Location(&loc))
	course := strings.TrimPrefix(strings.Split(strings.TrimPrefix(loc, origin), "?")[0], "/teach/courses/")
	cid := mustID(t, course)
	b.run("add lesson", chromedp.SendKeys(`#lesson-title`, "Low tide", chromedp.ByID),
		chromedp.Submit(`#lesson-title`, chromedp.ByID), chromedp.WaitVisible(`.teach-lesson`, chromedp.ByQuery))

	// Each kind's topic, from the kinds' list; each returns to its page.
	topics := map[string]int64{}
	added := func(kind string) {
		t.Helper()
		var at string
		b.run(kind+" added", chromedp.WaitVisible(`#topic-view`, chromedp.ByID), chromedp.Location(&at))
		topics[kind] = mustID(t, strings.Split(strings.TrimPrefix(at, origin+"/teach/courses/"+course+"/topics/"), "?")[0])
		check("topic-" + kind + "-page")
	}
	form := func(kind string, actions ...chromedp.Action) {
		t.Helper()
		b.run(kind, chromedp.Navigate(origin+"/teach/courses/"+course+"/topics/new"), chromedp.WaitVisible(`.teach-kinds`, chromedp.ByQuery),
			chromedp.Click(`a.teach-kind[href*="kind=`+kind+`&"]`, chromedp.ByQuery), chromedp.WaitVisible(`#title`, chromedp.ByID))
		check("topic-" + kind)
		b.run(kind+" fields", actions...)
	}
	submit := chromedp.Click(`.teach-topic-form button[type=submit]`, chromedp.ByQuery)
	title := func(s string) chromedp.Action { return chromedp.SendKeys(`#title`, s, chromedp.ByID) }
	upload := func(file string) chromedp.Action {
		return chromedp.SetUploadFiles(`#upload`, []string{file}, chromedp.ByID)
	}
	temp := func(name string, data []byte) string {
		p := filepath.Join(t.TempDir(), name)
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}

	form("richtext", title("Reading the tide"), waitJS(`!!document.querySelector('.TinyMDE')`), chromedp.Click(`.TinyMDE`, chromedp.ByQuery),
		chromedp.SendKeys(`.TinyMDE`, "The sea comes in **twice** a day.", chromedp.ByQuery), submit)
	added("richtext")
	form("video", title("Waves"), upload(temp("waves.mp4", mediatest.MP4(t, 1))), submit)
	added("video")
	// The video waits for transcoding: its notice follows the state while
	// what the author types meanwhile stays (the page is not reloaded).
	b.run("typing", chromedp.SendKeys(`#title`, " at dusk", chromedp.ByID))
	queuetest.Run(t, env.Server.Queue)
	var typed string
	b.run("transcoded", waitJS(`/Ready/.test(document.getElementById('processing').textContent)`), chromedp.Value(`#title`, &typed, chromedp.ByID))
	if !strings.Contains(typed, " at dusk") || !strings.Contains(typed, "Waves") {
		t.Errorf("the title typed while the video was transcoded: %q", typed)
	}
	form("audio", title("Surf"), upload(mp3(t)), submit)
	added("audio")
	form("image", title("A crab"), upload(temp("crab.png", apitest.PNG(t))), submit)
	added("image")
	form("pdf", title("Tide table"), upload(temp("tides.pdf", []byte("%PDF-1.4\n1 0 obj<<>>endobj\ntrailer<<>>\n%%EOF\n"))), submit)
	added("pdf")
	form("oembed", title("Tides on film"), chromedp.SendKeys(`#url`, site.URL+"/watch", chromedp.ByID), submit)
	added("oembed")
	form("h5p", title("Three pools"), upload(fixture(t, "h5p/valid/valid3-3-images.h5p")), submit)
	added("h5p")
	// SCORM: four modules in one package; the SCO is chosen next.
	form("scorm", title("Modules"), upload(fixture(t, "scorm/PrerequisitesTest_SCORM12.zip")), submit,
		chromedp.WaitVisible(`input[name=sco]`, chromedp.ByQuery))
	check("topic-scorm-choice")
	b.run("choose the SCO", chromedp.Click(`.teach-topic-form input[name=sco]:nth-of-type(1)`, chromedp.ByQuery), submit)
	added("scorm")
	// cmi5: a package of one AU, which is taken without a choice.
	form("cmi5", title("Geology"), upload(fixture(t, "cmi5/single_au_basic_responsive.zip")), submit)
	added("cmi5")
	// LiaScript: the workshop completes once its two quizzes are solved.
	workshop := string(readFixture(t, "liascript/workshop.md"))
	form("liascript", title("Workshop"), chromedp.SetValue(`#markdown`, workshop, chromedp.ByID),
		chromedp.SetValue(`#completion`, "quizzes", chromedp.ByID), submit)
	added("liascript")
	// The tutor chooses the admin's registered tool by name; the form
	// also offers to choose content in the tool (deep linking, opened in a
	// new window).
	form("lti", title("Tide lab"), chromedp.WaitVisible(`#deep-link-form`, chromedp.ByID),
		chromedp.SetValue(`#tool`, id(ext.ID), chromedp.ByID), submit)
	added("lti")
	form("quiz", title("Tide quiz"), chromedp.SendKeys(`#gift`, "How many tides a day? {#2}\n\nThe moon makes tides. {T}", chromedp.ByID), submit)
	added("quiz")
	var answers []string
	b.run("answers", chromedp.Evaluate(`Array.from(document.querySelectorAll('.teach-answer')).map(function (e) { return e.textContent; })`, &answers))
	if fmt.Sprint(answers) != "[2 True]" {
		t.Errorf("the quiz's right answers: %q", answers)
	}
	form("project", title("Pool diary"), chromedp.SendKeys(`#instructions`, "Write what you saw.", chromedp.ByID),
		chromedp.SendKeys(`#accept`, "txt", chromedp.ByID), submit)
	added("project")
	form("interactive", title("Steps"), chromedp.SendKeys(`#height`, "480", chromedp.ByID),
		upload(temp("app.zip", interactivetest.Zip(t, stepsApp))), submit)
	added("interactive")
	// The document starts from the palette: its first component, Callout,
	// inserted as its example node.
	form("layout", title("Study page"),
		chromedp.Click(`#layout-palette summary`, chromedp.ByQuery),
		chromedp.Click(`#layout-palette button[data-layout-insert]`, chromedp.ByQuery),
		chromedp.SetValue(`#fallback`, "Look under stones.", chromedp.ByID), submit)
	added("layout")
	if len(topics) != len(topicKinds) {
		t.Fatalf("%d topics for %d kinds: %v", len(topics), len(topicKinds), topics)
	}
	for _, k := range topicKinds {
		if v := apitest.Must(env.Client(env.Host, tutor.Token).GetAdminTopicsID(ctx, topics[k.Name]))(t); v.Kind != k.Name {
			t.Errorf("the %s topic is a %s", k.Name, v.Kind)
		}
	}

	// Back on the course: the second topic moves up with its arrow (the
	// page without script), then the last is dragged above the first; the
	// page reloads once the move is saved.
	b.run("course", chromedp.Navigate(origin+"/teach/courses/"+course), chromedp.WaitVisible(`#program`, chromedp.ByID))
	var before, after, dropped []string
	titles := `Array.from(document.querySelectorAll('.teach-topic-title')).map(function (e) { return e.textContent; })`
	b.run("order", chromedp.Evaluate(titles, &before))
	b.run("move up", chromedp.Click(`.teach-topic:nth-child(2) button[aria-label^="Move up"]`, chromedp.ByQuery),
		chromedp.WaitVisible(`.notice-ok`, chromedp.ByQuery), chromedp.Evaluate(titles, &after))
	n := len(topicKinds)
	if len(before) != n || len(after) != n || after[0] != before[1] || after[1] != before[0] {
		t.Errorf("moving up: %q, then %q", before, after)
	}
	var lastID string
	b.run("drag", chromedp.Evaluate(`(function () {
		var items = document.querySelectorAll('.teach-topics > li');
		var last = items[items.length - 1], first = items[0];
		var dt = new DataTransfer();
		document.getElementById('program').classList.add('before-reload');
		last.dispatchEvent(new DragEvent('dragstart', {bubbles: true, dataTransfer: dt}));
		first.dispatchEvent(new DragEvent('dragover', {bubbles: true, cancelable: true, dataTransfer: dt,
			clientY: first.getBoundingClientRect().top + 1}));
		last.dispatchEvent(new DragEvent('dragend', {bubbles: true, dataTransfer: dt}));
		return last.id;
	})()`, &lastID))
	b.run("dropped", chromedp.WaitVisible(`#program:not(.before-reload) .teach-topics > li:first-child#`+lastID, chromedp.ByQuery),
		chromedp.Evaluate(titles, &dropped))
	if len(dropped) != n || dropped[0] != after[n-1] || dropped[1] != after[0] {
		t.Errorf("drag and drop: %q, then %q", after, dropped)
	}
	order := apitest.Must(env.Client(env.Host, tutor.Token).GetAdminCoursesIDProgram(ctx, cid))(t).Lessons[0].Topics
	if "topic-"+id(order[0].ID) != lastID {
		t.Errorf("the API's order after the drop: %+v", order)
	}

	// Publish, then assign the learner on the learners page.
	b.run("publish", chromedp.Navigate(origin+"/teach/courses/"+course), chromedp.WaitVisible(`#status`, chromedp.ByID),
		chromedp.SetValue(`#status`, "published", chromedp.ByID),
		chromedp.Click(`form[aria-labelledby="details-title"] button[type=submit]`, chromedp.ByQuery), chromedp.WaitVisible(`.notice-ok`, chromedp.ByQuery))
	check("course-edit")
	b.run("list", chromedp.Navigate(origin+"/teach/courses"), chromedp.WaitVisible(`.teach-table`, chromedp.ByQuery))
	check("courses")
	b.run("delete page", chromedp.Navigate(origin+"/teach/courses/"+course+"/delete"), chromedp.WaitVisible(`.teach-delete`, chromedp.ByQuery))
	check("course-delete")
	b.run("learners", chromedp.Navigate(origin+"/teach/courses/"+course+"/learners"), chromedp.WaitVisible(`#assign-users`, chromedp.ByID))
	check("learners")
	b.run("assign", chromedp.Evaluate(`document.querySelector('#assign-users option[value="`+id(learner.ID)+`"]').selected = true`, nil),
		chromedp.Click(`form[action$="/learners"] button[type=submit]`, chromedp.ByQuery),
		chromedp.WaitVisible(`#assigned-users tr[data-user="`+id(learner.ID)+`"]`, chromedp.ByQuery))
	check("learners-assigned")

	// The learner, in a browser of their own, completes each topic.
	lb := &browserRun{t: t, ctx: newBrowser(t, env.Host, hosts...)}
	lb.run("learner signs in", signIn(origin, learner), chromedp.WaitVisible(landed, chromedp.ByQuery))
	done := `#topic-status.status-1`
	open := func(kind, ready string) {
		t.Helper()
		lb.run("open "+kind, chromedp.Navigate(origin+"/learn/"+course+"/"+id(topics[kind])), chromedp.WaitVisible(ready, chromedp.ByQuery))
	}
	finish := func(kind string) {
		t.Helper()
		lb.run(kind+" complete", chromedp.WaitVisible(done, chromedp.ByQuery))
		lb.screenshot("teach-learner-" + kind)
	}
	// Reading to the end, and opening a picture, a document or an
	// embedded page, complete them.
	for _, kind := range []string{"richtext", "image", "pdf", "oembed", "layout"} {
		open(kind, `#topic h1`)
		finish(kind)
	}
	// Media complete once played to the end; the learner starts them (a
	// user's gesture, which the browser asks of a sound before it plays).
	for _, kind := range []string{"video", "audio"} {
		open(kind, `#topic-media`)
		lb.run(kind+" plays", chromedp.Evaluate(`document.getElementById('topic-media').play(), true`, nil,
			func(p *runtime.EvaluateParams) *runtime.EvaluateParams { return p.WithUserGesture(true) }))
		finish(kind)
	}
	// H5P: the slider's three pictures, slid to the end.
	open("h5p", `#h5p-frame`)
	lb.run("h5p loaded", waitJS(`document.getElementById('h5p-frame').dataset.loaded === '1'`))
	if err := browsertest.SlideH5PImages(lb.ctx, lb.frame(`#h5p-frame`), 2); err != nil {
		t.Fatalf("slide: %v", err)
	}
	finish("h5p")
	// The quiz, answered right and handed in.
	open("quiz", `#quiz-start`)
	lb.run("quiz", chromedp.Click(`#quiz-start`, chromedp.ByID), waitJS(`document.getElementById('quiz').dataset.state === 'open'`),
		chromedp.SendKeys(`#q1`, "2", chromedp.ByID), chromedp.Click(`label[for="q2-true"]`, chromedp.ByQuery),
		waitJS(`document.getElementById('saved-1').textContent === 'Saved' && document.getElementById('saved-2').textContent === 'Saved' && document.getElementById('quiz').dataset.saving === '0'`),
		chromedp.Click(`#quiz-end`, chromedp.ByID))
	finish("quiz")
	// The project: a file handed in on the page.
	open("project", `#project-file`)
	lb.run("hand in", chromedp.SetUploadFiles(`#project-file`, []string{temp("diary.txt", []byte("Two crabs, one starfish.\n"))}, chromedp.ByID),
		chromedp.Click(`form[action$="/project"] button[type=submit]`, chromedp.ByQuery))
	finish("project")
	// The app: its steps walked, then its own word that it is done.
	open("interactive", `#app-frame`)
	lb.run("app ready", waitJS(`Number(document.getElementById('app-frame').dataset.reported || 0) >= 1`))
	app := lb.frame(`#app-frame`)
	lb.run("app init", waitJS(`document.getElementById('range').textContent !== 'waiting'`, chromedp.WithPollingInFrame(app)))
	for _, button := range []string{"next", "next", "next", "done"} {
		var before int
		lb.run("reports", chromedp.Evaluate(`Number(document.getElementById('app-frame').dataset.reported || 0)`, &before))
		lb.run("press "+button, waitJS(`(document.getElementById('`+button+`').click(), true)`, chromedp.WithPollingInFrame(app)),
			waitJS(`Number(document.getElementById('app-frame').dataset.reported || 0) > `+strconv.Itoa(before)))
	}
	finish("interactive")
	// LiaScript: both quizzes of its quiz section solved in its runtime.
	open("liascript", `#lia-frame`)
	lia := lb.frame(`#lia-frame`)
	lb.run("to the quiz", waitJS(`(function () {
		var link = Array.prototype.find.call(document.querySelectorAll('.lia-toc__link'), function (a) { return a.textContent.trim() === 'Quizfrage?'; });
		if (link) { link.click(); }
		return !!link;
	})()`, chromedp.WithPollingInFrame(lia)),
		waitJS(`document.querySelectorAll('main .lia-quiz').length === 2`, chromedp.WithPollingInFrame(lia)))
	lb.run("answer", waitJS(`(function () {
		var quizzes = document.querySelectorAll('main .lia-quiz');
		var text = quizzes[0].querySelector('input');
		text.value = 'Ja';
		text.dispatchEvent(new Event('input', {bubbles: true}));
		quizzes[0].querySelector('.lia-quiz__check').click();
		var boxes = quizzes[1].querySelectorAll('input[type=checkbox]');
		boxes[0].click(); boxes[1].click();
		quizzes[1].querySelector('.lia-quiz__check').click();
		return true;
	})()`, chromedp.WithPollingInFrame(lia)),
		waitJS(`Array.prototype.every.call(document.querySelectorAll('main .lia-quiz'), function (q) { return q.classList.contains('solved'); })`,
			chromedp.WithPollingInFrame(lia)))
	finish("liascript")
	// SCORM completes only through its runtime: each module, in the
	// player, reports itself done with a passing score (the pages of this
	// package do not talk to the runtime themselves), as
	// TestScormFixturesCompleteInBrowser does.
	p := &scormPlay{t: t, env: env, api: api, ctx: lb.ctx, origin: origin, learner: learner, front: f, course: seeded{course: cid}}
	p.open(topics["scorm"])
	p.passModules(4)
	p.completes("scorm", topics["scorm"])
	lb.screenshot("teach-learner-scorm")
	// cmi5: the AU paged through, its quiz passed with its own button,
	// left by its exit button.
	cb := &cmi5Browser{t: t, ctx: lb.ctx, origin: origin, content: "http://" + env.Host + ":" + f.contentPort}
	frame, _ := cb.start(cid, topics["cmi5"])
	var aus int
	cb.frameValue("pages", frame, `document.querySelectorAll('.navmenuitem').length`, &aus)
	for i := 1; i < aus; i++ {
		cb.run("next page", chromedp.Click(`.footerbar`, chromedp.ByQuery, chromedp.FromNode(frame)))
		cb.inFrame("page "+strconv.Itoa(i), frame, `document.querySelectorAll('.navmenuitem.seen').length === `+strconv.Itoa(i+1)+` && `+settled)
	}
	cb.run("quiz", chromedp.Click(`button[onclick="course.autopass()"]`, chromedp.ByQuery, chromedp.FromNode(frame)),
		chromedp.Click(`button[onclick="course.submitAnswers()"]`, chromedp.ByQuery, chromedp.FromNode(frame)))
	cb.inFrame("passed", frame, `document.getElementById('score-passed').classList.contains('visible') && `+settled)
	cb.exit(frame, `#score-panel .exit-button`, cid, topics["cmi5"])
	finish("cmi5")
	// LTI: launched from the page into the tool; the tool's grade, sent
	// back through AGS as a tool does (no browser is part of that),
	// completes it.
	open("lti", `#lti-start`)
	var sub string
	lb.run("launch", chromedp.Click(`#lti-start`, chromedp.ByID), chromedp.WaitVisible(`#tool-launched`, chromedp.ByID),
		chromedp.Text(`#tool-launched`, &sub, chromedp.ByID))
	if sub != id(learner.ID) {
		t.Fatalf("the tool launched %q", sub)
	}
	ltiScore(t, env, key, ext, topics["lti"], learner.ID)
	open("lti", `#lti-start`)
	finish("lti")

	// The tutor's progress table: the learner finished, at 100%, every
	// topic complete; the CSV says the same.
	env.DeliverEvents()
	row := `#gradebook tr[data-user="` + id(learner.ID) + `"]`
	b.run("progress", chromedp.Navigate(origin+"/teach/courses/"+course+"/progress"), chromedp.WaitVisible(row+`[data-status="finished"]`, chromedp.ByQuery))
	check("progress")
	var table struct {
		Row   string `json:"row"`
		Cells int    `json:"cells"`
		Done  int    `json:"done"`
	}
	b.run("row", chromedp.Evaluate(`(function (r) { return {row: r.textContent, cells: r.querySelectorAll('td[data-topic]').length,
		done: r.querySelectorAll('td[data-topic][data-topic-status="1"]').length}; })(document.querySelector('`+row+`'))`, &table))
	if !strings.Contains(table.Row, "100%") || table.Cells != len(topicKinds) || table.Done != len(topicKinds) {
		t.Errorf("the learner's row: %+v", table)
	}
	var export string
	b.run("export body", evaluate(`fetch(document.querySelector('a[href*="/progress/export"]').href).then(function (r) { return r.text(); })`, &export))
	rows, err := csv.NewReader(strings.NewReader(strings.TrimPrefix(export, "\ufeff"))).ReadAll()
	if err != nil || len(rows) != 2 {
		t.Fatalf("the export: %v %q", err, export)
	}
	got := map[string]string{}
	for i, h := range rows[0] {
		got[h] = rows[1][i]
	}
	if got["email"] != learner.Email || got["status"] != "finished" || got["percent"] != "100" ||
		got["finished_topics"] != strconv.Itoa(len(topicKinds)) || got["total_topics"] != strconv.Itoa(len(topicKinds)) {
		t.Errorf("the export's row: %v", got)
	}
	// The course list says the same of the course.
	var listed string
	b.run("course list", chromedp.Navigate(origin+"/teach/courses"), chromedp.WaitVisible(`.teach-table`, chromedp.ByQuery),
		chromedp.Evaluate(`(function (a) { var tr = a.closest('tr'); return tr.querySelector('[data-learners]').dataset.learners + ' ' +
			tr.querySelector('[data-finished]').dataset.finished + ' ' + tr.querySelector('[data-percent]').dataset.percent; })(
			document.querySelector('.teach-table a[href="/teach/courses/`+course+`"]'))`, &listed))
	if listed != "1 1 100" {
		t.Errorf("the course list's learners, finished and percent: %q", listed)
	}
	t.Logf("%d tutor pages checked with axe-core at %v px; the walk took %s", pages, pageWidths, time.Since(began).Round(time.Second))
}
