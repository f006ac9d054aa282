package lti_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"html"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lms-platform/lms/client"
	"github.com/lms-platform/lms/internal/apitest"
	"github.com/lms-platform/lms/internal/config"
	"github.com/lms-platform/lms/internal/kinds/lti"
	"github.com/lms-platform/lms/internal/nodetest"
	"github.com/lms-platform/lms/internal/sqldb"
)

// ltijsDir is the test-only node project of the interop test; `make test`
// installs it (npm ci).
var ltijsDir = filepath.Join("testdata", "ltijs")

// needLtijs skips the interop test where node, the installed ltijs or a
// PostgreSQL server (ltijs keeps its state there through ltijs-sequelize)
// is missing; under CI=true each is a failure.
func needLtijs(t *testing.T) (node, pgURL string) {
	t.Helper()
	node = nodetest.Need(t, "ltijs interop", ltijsDir, "ltijs", "ltijs-sequelize")
	pgURL = os.Getenv("LMS_TEST_PG_URL")
	if pgURL == "" {
		nodetest.Missing(t, "ltijs interop", "LMS_TEST_PG_URL is not set: ltijs-sequelize keeps the tool's state in PostgreSQL")
	}
	return node, pgURL
}

// ltijsTool is the ltijs tool running in node.
type ltijsTool struct {
	*nodetest.Process
	origin string
}

// startLtijs runs tool.js with its own PostgreSQL database and waits for
// it to listen.
func startLtijs(t *testing.T, node, pgURL string) *ltijsTool {
	t.Helper()
	ctx := context.Background()
	b := make([]byte, 5)
	rand.Read(b)
	name := "ltijs_" + hex.EncodeToString(b)
	if err := sqldb.CreateDatabase(ctx, pgURL, name); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := sqldb.DropDatabase(ctx, pgURL, name); err != nil {
			t.Logf("drop %s: %v", name, err)
		}
	})
	pg, err := url.Parse(pgURL)
	if err != nil {
		t.Fatal(err)
	}
	password, _ := pg.User.Password()
	key := make([]byte, 24)
	rand.Read(key)
	tool := &ltijsTool{Process: nodetest.Start(t, node, ltijsDir, "tool.js", "LTIJS_PG_DATABASE="+name, "LTIJS_PG_USER="+pg.User.Username(),
		"LTIJS_PG_PASSWORD="+password, "LTIJS_PG_HOST="+pg.Hostname(), "LTIJS_PG_PORT="+pg.Port(),
		"LTIJS_KEY="+hex.EncodeToString(key))}
	ev := tool.Next(t, "listening")
	tool.origin = "http://localhost:" + strconv.Itoa(int(ev["port"].(float64)))
	return tool
}

// TestLtijsTool launches a real third-party tool, ltijs, from an lti topic
// of our platform: ltijs validates our launch with its own checks, gets
// service tokens with its client assertion (lineitem.readonly among
// them), lists the line items of the launch's resource link with its
// filters, posts a completed score on the line item the launch claims and
// reads the result back, all without a line item of its own; the topic
// is then complete for the learner and the score recorded. Its deep
// linking answer asks for a line item, which the topic it makes gets.
func TestLtijsTool(t *testing.T) {
	node, pgURL := needLtijs(t)
	for _, backend := range apitest.Backends(t) {
		t.Run(backend, func(t *testing.T) {
			tool := startLtijs(t, node, pgURL)
			env := apitest.New(t, backend, apitest.Options{Configure: func(c *config.Config) { c.FetchAllowPrivate = true }})
			// The platform is the tenant at 127.0.0.1, which node reaches as
			// it is named.
			env.AddTenant("127.0.0.1")
			_, port, _ := strings.Cut(strings.TrimPrefix(env.HTTP.URL, "http://"), ":")
			w := &twoTenants{env: env, originA: "http://127.0.0.1:" + port}
			w.adminA, _ = env.Login("127.0.0.1", "admin@127.0.0.1", "admin-password")
			rec, err := env.Server.Registry.ByHost(context.Background(), "127.0.0.1")
			if err != nil {
				t.Fatal(err)
			}
			if err := env.Server.AddUser(context.Background(), rec, "learner@a.test", "secret-password", "student"); err != nil {
				t.Fatal(err)
			}
			w.student, w.studentID = env.Login("127.0.0.1", "learner@a.test", "secret-password")
			// A learner with a name: the tool is told it (share_name).
			apitest.Must(w.clientA(w.student).PutProfileMe(context.Background(), client.ProfileBody{FirstName: ptrTo("Grace"),
				LastName: ptrTo("Hopper")}))(t)

			// The admin adds ltijs as an external tool with its URLs, and
			// ltijs registers our platform with ours.
			ctx := context.Background()
			admin := w.clientA(w.adminA)
			added := apitest.Must(admin.PostAdminLTITools(ctx, client.ToolInput{Name: "ltijs", LoginURL: tool.origin + "/login",
				TargetLinkURI: tool.origin + "/", RedirectUris: []string{tool.origin + "/"}, JwksURL: ptrTo(tool.origin + "/keys"),
				ShareName: ptrTo(true)}))(t)
			urls := apitest.Must(admin.GetAdminLTIPlatform(ctx))(t)
			tool.Send(t, map[string]any{"issuer": urls.Issuer, "client_id": added.ClientID,
				"authorization_url": urls.AuthorizationURL, "jwks_url": urls.JwksURL, "token_url": w.originA + lti.TokenPath})
			tool.Next(t, "registered")

			published := "published"
			courseID := apitest.Must(admin.PostAdminCourses(ctx, client.CourseBody{Title: "Course with ltijs", Status: &published}))(t).ID
			lesson := apitest.Must(admin.PostAdminLessons(ctx, client.CreateLessonInputBody{Title: "L", CourseID: courseID}))(t).ID
			w.topic = apitest.Must(admin.PostAdminTopics(ctx, client.PostAdminTopicsBody{Lesson: lesson, Title: "Graded by ltijs",
				Topicable: lti.Class, Tool: &added.ID, Custom: map[string]string{"chapter": "3"}}))(t).ID
			apitest.Must(admin.PostAdminCoursesIDAccess(ctx, courseID, client.AssignInputBody{Users: []client.GrantBody{{ID: w.studentID}}}))(t)

			seen := w.launchLtijs(t)
			launch, _ := seen["launch"].(map[string]any)
			if seen["scored"] != true {
				t.Fatalf("ltijs did not score: %v", seen)
			}
			custom, _ := launch["custom"].(map[string]any)
			resource, _ := launch["resource"].(map[string]any)
			lmsContext, _ := launch["context"].(map[string]any)
			roles, _ := launch["roles"].([]any)
			for what, ok := range map[string]bool{
				"iss":            launch["iss"] == w.originA,
				"sub":            launch["user"] == strconv.FormatInt(w.studentID, 10),
				"client id":      launch["clientId"] == added.ClientID,
				"deployment id":  launch["deploymentId"] == added.DeploymentID,
				"message type":   launch["messageType"] == lti.MessageResourceReq,
				"version":        launch["version"] == lti.Version,
				"roles":          slices.Contains(roles, any(lti.RoleLearner)) && len(roles) == 1,
				"resource link":  resource["id"] == strconv.FormatInt(w.topic, 10) && resource["title"] == "Graded by ltijs",
				"context":        lmsContext["id"] == strconv.FormatInt(courseID, 10),
				"custom":         custom["chapter"] == "3",
				"target link":    launch["targetLinkUri"] == tool.origin+"/",
				"name shared":    launch["name"] == "Grace Hopper",
				"e-mail private": !hasKey(launch, "email"),
				"AGS endpoint":   launch["lineitems"] == w.originA+"/api/lti/ags/"+strconv.FormatInt(w.topic, 10)+"/lineitems",
				"AGS line item":  strings.HasPrefix(fmt.Sprint(launch["lineitem"]), w.originA+"/api/lti/ags/"+strconv.FormatInt(w.topic, 10)+"/lineitems/"),
			} {
				if !ok {
					t.Errorf("ltijs saw a wrong %s: %v", what, launch)
				}
			}

			// ltijs found the claimed line item bound to the resource link,
			// none of a tag nobody used, and the learner's result.
			bound, _ := seen["bound"].(map[string]any)["lineItems"].([]any)
			untagged, _ := seen["untagged"].(map[string]any)["lineItems"].([]any)
			results, _ := seen["results"].(map[string]any)["scores"].([]any)
			if len(bound) != 1 || bound[0].(map[string]any)["id"] != launch["lineitem"] ||
				bound[0].(map[string]any)["resourceLinkId"] != strconv.FormatInt(w.topic, 10) || len(untagged) != 0 {
				t.Fatalf("ltijs listed %v, and %v with a made-up tag", bound, untagged)
			}
			if len(results) != 1 || results[0].(map[string]any)["resultScore"] != float64(8) ||
				results[0].(map[string]any)["userId"] != strconv.FormatInt(w.studentID, 10) {
				t.Fatalf("ltijs read the results %v", results)
			}
			// The score completed the topic for the learner.
			progress := apitest.Must(w.clientA(w.student).GetCoursesProgressID(ctx, courseID))(t)
			if len(progress.Topics) != 1 || progress.Topics[0].Status != 1 {
				t.Fatalf("progress after the score: %+v", progress)
			}
			tenant, release := env.OpenTenant(rec)
			defer release()
			// The score went on the claimed line item: there is no other.
			var others int
			if err := tenant.DB.QueryRowContext(ctx, `SELECT COUNT(*) FROM lti_line_items WHERE NOT claimed`).Scan(&others); err != nil || others != 0 {
				t.Fatalf("%d line items besides the claimed one: %v", others, err)
			}
			// Deep linking: the admin asks ltijs for content for the lesson;
			// its signed answer becomes an lti topic at the item's URL.
			made := w.deepLinkLtijs(t, lesson, added.ID)
			var content string
			if err := tenant.DB.QueryRowContext(context.Background(), `SELECT content FROM topics WHERE id = $1`, made).Scan(&content); err != nil {
				t.Fatal(err)
			}
			link, _ := lti.ParseLink(json.RawMessage(content))
			if link.URL != tool.origin+"/?exercise=2" || link.Custom["picked"] != "yes" || link.ScoreMaximum != 5 {
				t.Fatalf("the topic ltijs linked: %s", content)
			}
			var items int
			if err := tenant.DB.QueryRowContext(context.Background(), `SELECT COUNT(*) FROM lti_line_items WHERE topic_id = $1
				AND claimed AND label = 'Exercise 2' AND score_maximum = 5 AND tag = 'exercise'`, made).Scan(&items); err != nil || items != 1 {
				t.Fatalf("the line item ltijs asked for: %d %v", items, err)
			}
			var given, maximum float64
			if err := tenant.DB.QueryRowContext(context.Background(), `SELECT score_given, score_maximum FROM lti_scores
				WHERE user_id = $1`, w.studentID).Scan(&given, &maximum); err != nil || given != 8 || maximum != 10 {
				t.Fatalf("score: %v/%v %v", given, maximum, err)
			}
		})
	}
}

// hasKey reports whether ltijs's JSON has the key: it drops claims the
// launch did not carry.
func hasKey(m map[string]any, key string) bool {
	_, ok := m[key]
	return ok
}

// launchLtijs is the learner's browser: the launch of the topic, the
// tool's login, our authorization endpoint's form posted to the tool,
// and the tool's page, with cookies kept as a browser keeps them. It
// returns what the tool's page answered.
func (w *twoTenants) launchLtijs(t *testing.T) map[string]any {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	browser := &http.Client{Jar: jar, Timeout: 2 * time.Minute}
	// ltijs checks our id_token's iat against its own clock (ten seconds
	// at most), and we check the times of its client assertion against
	// ours: our test clock is set to now just before the launch.
	w.env.Clock.Set(time.Now())
	// The launch sets the cookie our authorization endpoint asks for in
	// the browser that called it.
	start := apitest.Must(w.inBrowser(t, browser, w.student).PostLTILaunchesID(context.Background(), w.topic))(t)
	// The tool's login redirects to our authorization endpoint, which
	// answers the auto-submitting form.
	page, err := browser.Get(start.URL)
	if err != nil {
		t.Fatal(err)
	}
	body := readAll(t, page)
	if page.StatusCode != 200 || page.Request.URL.Path != lti.AuthorizePath {
		t.Fatalf("login at the tool led to %s: %d %s", page.Request.URL, page.StatusCode, body)
	}
	fields := url.Values{}
	for _, m := range formField.FindAllStringSubmatch(body, -1) {
		fields.Set(m[1], html.UnescapeString(m[2]))
	}
	action := html.UnescapeString(formAction.FindStringSubmatch(body)[1])
	res, err := browser.PostForm(action, fields)
	if err != nil {
		t.Fatal(err)
	}
	answer := readAll(t, res)
	var out map[string]any
	if json.Unmarshal([]byte(answer), &out) != nil || res.StatusCode != 200 {
		t.Fatalf("the tool's page: %d %s", res.StatusCode, answer)
	}
	return out
}

// inBrowser is a typed client of tenant A whose calls browser makes,
// keeping the cookies they answer.
func (w *twoTenants) inBrowser(t *testing.T, browser *http.Client, token string) *client.Client {
	t.Helper()
	c, err := client.New(w.originA, browser)
	if err != nil {
		t.Fatal(err)
	}
	return c.WithToken(token)
}

var jwtField = regexp.MustCompile(`name="JWT" value="([^"]*)"`)

// deepLinkLtijs is the admin's browser asking ltijs for content for a
// lesson: our request, the tool's login, our authorization endpoint's
// form posted to the tool, and the tool's self-posting answer brought to
// our return URL. It returns the id of the topic made.
func (w *twoTenants) deepLinkLtijs(t *testing.T, lesson, tool int64) int64 {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	browser := &http.Client{Jar: jar, Timeout: 2 * time.Minute}
	w.env.Clock.Set(time.Now())
	start := apitest.Must(w.inBrowser(t, browser, w.adminA).PostLTIDeepLinks(context.Background(),
		client.DeepLinkInputBody{Lesson: lesson, Tool: tool}))(t)
	page, err := browser.Get(start.URL)
	if err != nil {
		t.Fatal(err)
	}
	body := readAll(t, page)
	fields := url.Values{}
	for _, m := range formField.FindAllStringSubmatch(body, -1) {
		fields.Set(m[1], html.UnescapeString(m[2]))
	}
	res, err := browser.PostForm(html.UnescapeString(formAction.FindStringSubmatch(body)[1]), fields)
	if err != nil {
		t.Fatal(err)
	}
	answer := readAll(t, res)
	action, token := formAction.FindStringSubmatch(answer), jwtField.FindStringSubmatch(answer)
	if res.StatusCode != 200 || action == nil || token == nil {
		t.Fatalf("ltijs's deep linking answer: %d %s", res.StatusCode, answer)
	}
	if html.UnescapeString(action[1]) != w.originA+lti.DeepLinkReturnPath {
		t.Fatalf("ltijs answers to %s", action[1])
	}
	res, err = browser.PostForm(w.originA+lti.DeepLinkReturnPath, url.Values{"JWT": {html.UnescapeString(token[1])}})
	if err != nil {
		t.Fatal(err)
	}
	if done := readAll(t, res); res.StatusCode != 200 || !strings.Contains(done, "1 topic(s) added") {
		t.Fatalf("our return: %d %s", res.StatusCode, done)
	}
	recA, _ := w.env.Server.Registry.ByHost(context.Background(), "127.0.0.1")
	tenant, release := w.env.OpenTenant(recA)
	defer release()
	var id int64
	if err := tenant.DB.QueryRowContext(context.Background(), `SELECT id FROM topics WHERE lesson_id = $1 AND title = $2`,
		lesson, "Exercise picked in ltijs").Scan(&id); err != nil {
		t.Fatal(err)
	}
	return id
}
