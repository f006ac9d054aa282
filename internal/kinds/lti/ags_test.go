package lti_test

import (
	"context"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/lms-platform/lms/client"
	"github.com/lms-platform/lms/internal/apitest"
	"github.com/lms-platform/lms/internal/kinds/lti"
)

// agsWorld is one tenant with a course holding an lti topic of a tool
// whose key the test holds: the test is the tool, calling our grade
// services on the wire as a tool does.
type agsWorld struct {
	env     *apitest.Env
	admin   *client.Client
	key     *rsa.PrivateKey
	tool    *client.ExternalTool
	course  int64
	lesson  int64
	topic   int64
	learner *apitest.User
	jti     int
}

const toolRedirect = "https://tool.example/launch"

func newAGSWorld(t *testing.T, env *apitest.Env) *agsWorld {
	t.Helper()
	ctx := context.Background()
	w := &agsWorld{env: env, admin: env.ClientAs("admin"), key: mustKey(t), learner: env.NewUser("student")}
	der, err := x509.MarshalPKIXPublicKey(&w.key.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	pub := string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}))
	w.tool = apitest.Must(w.admin.PostAdminLTITools(ctx, client.ToolInput{Name: "Graded tool",
		LoginURL: "https://tool.example/login", TargetLinkURI: toolRedirect, RedirectUris: []string{toolRedirect},
		PublicKey: &pub}))(t)
	published := "published"
	w.course = apitest.Must(w.admin.PostAdminCourses(ctx, client.CourseBody{Title: "Graded", Status: &published}))(t).ID
	w.lesson = apitest.Must(w.admin.PostAdminLessons(ctx, client.CreateLessonInputBody{Title: "L", CourseID: w.course}))(t).ID
	w.topic = w.addTopic(t, "Lab of week 1", nil)
	apitest.Must(w.admin.PostAdminCoursesIDAccess(ctx, w.course, client.AssignInputBody{Users: []client.GrantBody{{ID: w.learner.ID}}}))(t)
	return w
}

// addTopic adds an lti topic of the tool to the lesson.
func (w *agsWorld) addTopic(t *testing.T, title string, scoreMaximum *float64) int64 {
	t.Helper()
	return apitest.Must(w.admin.PostAdminTopics(context.Background(), client.PostAdminTopicsBody{Lesson: w.lesson, Title: title,
		Topicable: lti.Class, Tool: &w.tool.ID, ScoreMaximum: scoreMaximum}))(t).ID
}

// launch is the learner's launch of topic, to the id_token our
// authorization endpoint posts to the tool; it returns the token's claims.
func (w *agsWorld) launch(t *testing.T, topic int64) jwt.MapClaims {
	t.Helper()
	b := newBrowser(w.env)
	start := apitest.Must(b.client(w.env.Host, w.learner.Token).PostLTILaunchesID(context.Background(), topic))(t)
	login, err := url.Parse(start.URL)
	if err != nil {
		t.Fatal(err)
	}
	q := url.Values{"scope": {"openid"}, "response_type": {"id_token"}, "response_mode": {"form_post"},
		"client_id": {w.tool.ClientID}, "redirect_uri": {toolRedirect}, "login_hint": {login.Query().Get("login_hint")},
		"lti_message_hint": {login.Query().Get("lti_message_hint")}, "state": {"s"}, "nonce": {"n"}}
	_, fields := autoPost(t, b.do(t, "GET", "http://"+w.env.Host+lti.AuthorizePath+"?"+q.Encode(), ""))
	claims := jwt.MapClaims{}
	if _, _, err := jwt.NewParser().ParseUnverified(fields.Get("id_token"), claims); err != nil {
		t.Fatal(err)
	}
	return claims
}

// token is a service token for scopes, by a client assertion signed
// with the tool's key.
func (w *agsWorld) token(t *testing.T, scopes ...string) (int, tokenAnswer) {
	t.Helper()
	now := w.env.Clock.Now()
	w.jti++
	assertion := sign(t, jwt.MapClaims{"iss": w.tool.ClientID, "sub": w.tool.ClientID, "aud": "http://" + w.env.Host + lti.TokenPath,
		"iat": now.Unix(), "exp": now.Add(time.Minute).Unix(), "jti": "jti-" + strconv.Itoa(w.jti)}, "tool-key", w.key)
	form := url.Values{"grant_type": {"client_credentials"}, "client_assertion_type": {"urn:ietf:params:oauth:client-assertion-type:jwt-bearer"},
		"client_assertion": {assertion}, "scope": {strings.Join(scopes, " ")}}
	res := w.env.Do(apitest.Request{Method: "POST", Path: lti.TokenPath, Body: form.Encode(), Type: "application/x-www-form-urlencoded"})
	var out tokenAnswer
	if err := json.Unmarshal(res.Body, &out); err != nil {
		t.Fatalf("token: %d %s", res.Status, res.Body)
	}
	return res.Status, out
}

func (w *agsWorld) bearer(t *testing.T, scopes ...string) string {
	t.Helper()
	status, tok := w.token(t, scopes...)
	if status != 200 {
		t.Fatalf("token for %v: %d %+v", scopes, status, tok)
	}
	return tok.AccessToken
}

// ags calls a grade service on the wire: an absolute URL of ours, the
// service token, a body of the service's media type.
func (w *agsWorld) ags(t *testing.T, method, rawURL, bearer, media, body string) *apitest.Response {
	t.Helper()
	u, err := url.Parse(rawURL)
	if err != nil || u.Host != w.env.Host {
		t.Fatalf("not a URL of ours: %s", rawURL)
	}
	req := apitest.Request{Method: method, Path: u.RequestURI(), Headers: map[string]string{"Authorization": "Bearer " + bearer}}
	if body != "" {
		req.Body, req.Type = body, media
	}
	return w.env.Do(req)
}

func (w *agsWorld) container(topic int64) string {
	return "http://" + w.env.Host + "/api/lti/ags/" + strconv.FormatInt(topic, 10) + "/lineitems"
}

// ids are the ids of a container's answer.
func ids(t *testing.T, res *apitest.Response) []string {
	t.Helper()
	var items []lti.LineItem
	if err := json.Unmarshal(res.Body, &items); err != nil || res.Status != 200 {
		t.Fatalf("container: %d %s", res.Status, res.Body)
	}
	out := []string{}
	for _, it := range items {
		out = append(out, it.ID)
	}
	return out
}

// TestAGSLaunchLineItem: the launch of an lti topic carries the line item
// of its resource link (made on the first launch, the same on the next),
// with the topic's title and maximum, or 100; and the token endpoint
// grants every AGS scope, lineitem.readonly included.
func TestAGSLaunchLineItem(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		w := newAGSWorld(t, env)
		claims := w.launch(t, w.topic)
		endpoint, _ := claims[lti.ClaimAGSEndpoint].(map[string]any)
		item, _ := endpoint["lineitem"].(string)
		if !strings.HasPrefix(item, w.container(w.topic)+"/") || endpoint["lineitems"] != w.container(w.topic) {
			t.Fatalf("AGS claim: %v", endpoint)
		}
		scopes, _ := endpoint["scope"].([]any)
		for _, sc := range []string{lti.ScopeLineItem, lti.ScopeLineItemRead, lti.ScopeScore, lti.ScopeResultRead} {
			if !slices.Contains(scopes, any(sc)) {
				t.Errorf("the claim offers no %s: %v", sc, scopes)
			}
		}
		if again := w.launch(t, w.topic)[lti.ClaimAGSEndpoint].(map[string]any)["lineitem"]; again != item {
			t.Fatalf("the second launch claims %v, the first %s", again, item)
		}
		// The read-only scope alone is granted, and reads the line item.
		status, tok := w.token(t, lti.ScopeLineItemRead)
		if status != 200 || tok.Scope != lti.ScopeLineItemRead {
			t.Fatalf("lineitem.readonly token: %d %+v", status, tok)
		}
		if status, all := w.token(t, lti.ScopeLineItem, lti.ScopeLineItemRead, lti.ScopeScore, lti.ScopeResultRead); status != 200 ||
			len(strings.Fields(all.Scope)) != 4 {
			t.Fatalf("every scope: %d %+v", status, all)
		}
		res := w.ags(t, "GET", item, tok.AccessToken, "", "")
		var li lti.LineItem
		if err := json.Unmarshal(res.Body, &li); err != nil || res.Status != 200 ||
			res.Header.Get("Content-Type") != "application/vnd.ims.lis.v2.lineitem+json" || li.ID != item ||
			li.Label != "Lab of week 1" || li.ScoreMaximum != 100 || li.ResourceLinkID != strconv.FormatInt(w.topic, 10) {
			t.Fatalf("the claimed line item: %d %s %s", res.Status, res.Header.Get("Content-Type"), res.Body)
		}
		// A topic's own maximum.
		twenty := 20.0
		other := w.addTopic(t, "Essay", &twenty)
		res = w.ags(t, "GET", w.launch(t, other)[lti.ClaimAGSEndpoint].(map[string]any)["lineitem"].(string), tok.AccessToken, "", "")
		if err := json.Unmarshal(res.Body, &li); err != nil || li.ScoreMaximum != 20 || li.Label != "Essay" {
			t.Fatalf("line item of a topic with score_maximum 20: %s", res.Body)
		}
	})
}

// TestAGSLineItemService: the container's filters and pages, and a line
// item's GET, PUT and DELETE, each with its scope.
func TestAGSLineItemService(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		w := newAGSWorld(t, env)
		claimed := w.launch(t, w.topic)[lti.ClaimAGSEndpoint].(map[string]any)["lineitem"].(string)
		write, read := w.bearer(t, lti.ScopeLineItem), w.bearer(t, lti.ScopeLineItemRead)
		items := w.container(w.topic)
		add := func(body string) string {
			res := w.ags(t, "POST", items, write, "application/vnd.ims.lis.v2.lineitem+json", body)
			var li lti.LineItem
			if err := json.Unmarshal(res.Body, &li); err != nil || res.Status != 201 ||
				res.Header.Get("Content-Type") != "application/vnd.ims.lis.v2.lineitem+json" {
				t.Fatalf("add %s: %d %s %s", body, res.Status, res.Header.Get("Content-Type"), res.Body)
			}
			return li.ID
		}
		topic := strconv.FormatInt(w.topic, 10)
		quiz := add(`{"label":"Quiz","scoreMaximum":10,"tag":"quiz","resourceId":"r1","resourceLinkId":"` + topic + `"}`)
		quiz2 := add(`{"label":"Quiz 2","scoreMaximum":10,"tag":"quiz"}`)
		essay := add(`{"label":"Essay","scoreMaximum":50,"resourceId":"r2"}`)
		for query, want := range map[string][]string{
			"":                           {claimed, quiz, quiz2, essay},
			"?resource_link_id=" + topic: {claimed, quiz},
			"?resource_link_id=999":      {},
			"?tag=quiz":                  {quiz, quiz2},
			"?resource_id=r2":            {essay},
			"?tag=quiz&resource_id=r1":   {quiz},
			"?resource_link_id=" + topic + "&tag=none": {},
		} {
			if got := ids(t, w.ags(t, "GET", items+query, read, "", "")); !slices.Equal(got, want) {
				t.Errorf("container%s: %v, want %v", query, got, want)
			}
		}
		// Pages of two, the next one in the Link header, until none.
		var seen []string
		next := items + "?limit=2"
		for pages := 0; next != ""; pages++ {
			if pages > 2 {
				t.Fatal("the pages do not end")
			}
			res := w.ags(t, "GET", next, read, "", "")
			if res.Header.Get("Content-Type") != "application/vnd.ims.lis.v2.lineitemcontainer+json" {
				t.Fatalf("container type: %s", res.Header.Get("Content-Type"))
			}
			page := ids(t, res)
			if len(page) > 2 {
				t.Fatalf("a page of %d", len(page))
			}
			seen = append(seen, page...)
			next = ""
			if link := res.Header.Get("Link"); link != "" {
				url, rel, _ := strings.Cut(link, ">; ")
				if rel != `rel="next"` {
					t.Fatalf("Link: %s", link)
				}
				next = strings.TrimPrefix(url, "<")
			}
		}
		if want := []string{claimed, quiz, quiz2, essay}; !slices.Equal(seen, want) {
			t.Fatalf("paged: %v, want %v", seen, want)
		}

		// PUT replaces; it needs the lineitem scope and a valid body.
		if res := w.ags(t, "PUT", quiz2, read, "application/vnd.ims.lis.v2.lineitem+json", `{"label":"x","scoreMaximum":1}`); res.Status != 403 {
			t.Fatalf("PUT with the read-only scope: %d", res.Status)
		}
		if res := w.ags(t, "PUT", quiz2, write, "application/vnd.ims.lis.v2.lineitem+json", `{"label":"Quiz 2"}`); res.Status != 400 ||
			!strings.Contains(res.String("message"), "scoreMaximum") {
			t.Fatalf("PUT without scoreMaximum: %d %s", res.Status, res.Body)
		}
		res := w.ags(t, "PUT", quiz2, write, "application/vnd.ims.lis.v2.lineitem+json", `{"label":"Quiz two","scoreMaximum":12,"tag":"final"}`)
		if res.Status != 200 || res.String("label") != "Quiz two" || res.Number("scoreMaximum") != 12 || res.String("tag") != "final" ||
			res.Header.Get("Content-Type") != "application/vnd.ims.lis.v2.lineitem+json" {
			t.Fatalf("PUT: %d %s %s", res.Status, res.Header.Get("Content-Type"), res.Body)
		}
		if got := w.ags(t, "GET", quiz2, read, "", ""); got.String("label") != "Quiz two" {
			t.Fatalf("GET after PUT: %s", got.Body)
		}
		// The optional fields are kept as sent (in UTC), and a PUT without
		// them clears them; a malformed date or an end before the start is
		// refused with its reason, and nothing changes.
		dated := add(`{"label":"Lab","scoreMaximum":5,"startDateTime":"2026-12-01T09:00:00+01:00",` +
			`"endDateTime":"2026-12-08T17:30:00Z","gradesReleased":false}`)
		if got := w.ags(t, "GET", dated, read, "", ""); got.String("startDateTime") != "2026-12-01T08:00:00Z" ||
			got.String("endDateTime") != "2026-12-08T17:30:00Z" || got.Get("gradesReleased") != false {
			t.Fatalf("dated line item: %s", got.Body)
		}
		for body, reason := range map[string]string{
			`{"label":"Lab","scoreMaximum":5,"startDateTime":"1 December"}`:        "startDateTime",
			`{"label":"Lab","scoreMaximum":5,"endDateTime":"2026-12-08T17:30:00"}`: "endDateTime",
			`{"label":"Lab","scoreMaximum":5,"startDateTime":"2026-12-09T00:00:00Z",` +
				`"endDateTime":"2026-12-08T00:00:00Z"}`: "before its startDateTime",
		} {
			if res := w.ags(t, "PUT", dated, write, "application/vnd.ims.lis.v2.lineitem+json", body); res.Status != 400 ||
				!strings.Contains(res.String("message"), reason) {
				t.Errorf("PUT %s: %d %s, want 400 naming %q", body, res.Status, res.Body, reason)
			}
		}
		if got := w.ags(t, "GET", dated, read, "", ""); got.String("endDateTime") != "2026-12-08T17:30:00Z" {
			t.Fatalf("a refused PUT changed the line item: %s", got.Body)
		}
		w.ags(t, "PUT", dated, write, "application/vnd.ims.lis.v2.lineitem+json", `{"label":"Lab","scoreMaximum":5}`)
		if got := w.ags(t, "GET", dated, read, "", ""); got.Get("startDateTime") != nil || got.Get("gradesReleased") != nil {
			t.Fatalf("PUT without the optional fields kept them: %s", got.Body)
		}
		// DELETE removes a tool's line item; the resource link's stays.
		if res := w.ags(t, "DELETE", quiz2, read, "", ""); res.Status != 403 {
			t.Fatalf("DELETE with the read-only scope: %d", res.Status)
		}
		if res := w.ags(t, "DELETE", quiz2, write, "", ""); res.Status != 204 {
			t.Fatalf("DELETE: %d %s", res.Status, res.Body)
		}
		if res := w.ags(t, "GET", quiz2, read, "", ""); res.Status != 404 {
			t.Fatalf("GET of a deleted line item: %d", res.Status)
		}
		if res := w.ags(t, "DELETE", claimed, write, "", ""); res.Status != 403 {
			t.Fatalf("DELETE of the resource link's line item: %d", res.Status)
		}
		// Another tool's topic is not found with this tool's token.
		other := apitest.Must(w.admin.PostAdminLTITools(context.Background(), client.ToolInput{Name: "Other",
			LoginURL: "https://other.example/login", TargetLinkURI: "https://other.example/", RedirectUris: []string{"https://other.example/"},
			JwksURL: ptrTo("https://other.example/keys")}))(t)
		foreign := apitest.Must(w.admin.PostAdminTopics(context.Background(), client.PostAdminTopicsBody{Lesson: w.lesson,
			Title: "Other tool", Topicable: lti.Class, Tool: &other.ID}))(t).ID
		if res := w.ags(t, "GET", w.container(foreign), read, "", ""); res.Status != 404 {
			t.Fatalf("another tool's container: %d", res.Status)
		}
	})
}

func ptrTo[T any](v T) *T { return &v }

// score is a score body for the learner.
func score(userID int64, given float64, at string) string {
	return `{"userId":"` + strconv.FormatInt(userID, 10) + `","scoreGiven":` + strconv.FormatFloat(given, 'f', -1, 64) +
		`,"scoreMaximum":10,"activityProgress":"Completed","gradingProgress":"FullyGraded","timestamp":"` + at + `"}`
}

// TestAGSScores: a score is checked by the Score service's rules (400
// naming the rule), kept with its timestamp, and one older than the kept
// one is ignored; the results service answers the kept scores in pages.
func TestAGSScores(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		w := newAGSWorld(t, env)
		item := w.launch(t, w.topic)[lti.ClaimAGSEndpoint].(map[string]any)["lineitem"].(string)
		scorer := w.bearer(t, lti.ScopeScore)
		post := func(body string) *apitest.Response {
			return w.ags(t, "POST", item+"/scores", scorer, "application/vnd.ims.lis.v1.score+json", body)
		}
		user := strconv.FormatInt(w.learner.ID, 10)
		for _, tc := range []struct{ name, body, says string }{
			{"no timestamp", `{"userId":"` + user + `","activityProgress":"Completed","gradingProgress":"FullyGraded"}`, "timestamp"},
			{"not a time", score(w.learner.ID, 1, "yesterday"), "ISO 8601"},
			{"no sub-second part", score(w.learner.ID, 1, "2026-01-02T10:00:00Z"), "sub-second"},
			{"no zone", score(w.learner.ID, 1, "2026-01-02T10:00:00.000"), "ISO 8601"},
			{"unknown activityProgress", `{"userId":"` + user + `","activityProgress":"Done","gradingProgress":"FullyGraded",` +
				`"timestamp":"2026-01-02T10:00:00.000Z"}`, "activityProgress"},
			{"unknown gradingProgress", `{"userId":"` + user + `","activityProgress":"Completed","gradingProgress":"Graded",` +
				`"timestamp":"2026-01-02T10:00:00.000Z"}`, "gradingProgress"},
			{"scoreGiven without scoreMaximum", `{"userId":"` + user + `","scoreGiven":3,"activityProgress":"Completed",` +
				`"gradingProgress":"FullyGraded","timestamp":"2026-01-02T10:00:00.000Z"}`, "scoreMaximum"},
			{"negative scoreGiven", score(w.learner.ID, -1, "2026-01-02T10:00:00.000Z"), "scoreGiven"},
			{"no userId", `{"activityProgress":"Completed","gradingProgress":"FullyGraded","timestamp":"2026-01-02T10:00:00.000Z"}`, "userId"},
			{"not JSON", `{"userId":`, "JSON"},
		} {
			if res := post(tc.body); res.Status != 400 || !strings.Contains(res.String("message"), tc.says) {
				t.Errorf("%s: %d %s, want 400 saying %q", tc.name, res.Status, res.Body, tc.says)
			}
		}
		if n := env.Count(t, `SELECT COUNT(*) FROM lti_scores`); n != 0 {
			t.Fatalf("refused scores kept %d rows", n)
		}
		// The newer score is kept, with its timestamp; an older one after
		// it changes nothing, a later one replaces it.
		newer, _ := time.Parse(time.RFC3339Nano, "2026-01-02T10:00:00.250+02:00")
		if res := post(score(w.learner.ID, 8, "2026-01-02T10:00:00.250+02:00")); res.Status != 204 {
			t.Fatalf("score: %d %s", res.Status, res.Body)
		}
		if res := post(score(w.learner.ID, 3, "2026-01-02T10:00:00.249+02:00")); res.Status != 204 {
			t.Fatalf("older score: %d %s", res.Status, res.Body)
		}
		if n := env.Count(t, `SELECT COUNT(*) FROM lti_scores WHERE score_given = 8 AND timestamp_ns = $1`, newer.UnixNano()); n != 1 {
			t.Fatal("the older score replaced the newer one, or the timestamp was not kept")
		}
		results := func(query string, bearer string) []lti.Result {
			t.Helper()
			res := w.ags(t, "GET", item+"/results"+query, bearer, "", "")
			var out []lti.Result
			if err := json.Unmarshal(res.Body, &out); err != nil || res.Status != 200 ||
				res.Header.Get("Content-Type") != "application/vnd.ims.lis.v2.resultcontainer+json" {
				t.Fatalf("results%s: %d %s", query, res.Status, res.Body)
			}
			return out
		}
		if res := w.ags(t, "GET", item+"/results", scorer, "", ""); res.Status != 403 {
			t.Fatalf("results without result.readonly: %d", res.Status)
		}
		reader := w.bearer(t, lti.ScopeResultRead)
		got := results("", reader)
		if len(got) != 1 || got[0].UserID != user || *got[0].ResultScore != 8 || *got[0].ResultMaximum != 10 ||
			got[0].ScoreOf != item || got[0].ID != item+"/results/"+user {
			t.Fatalf("results: %+v", got)
		}
		if res := post(score(w.learner.ID, 9, "2026-01-02T08:00:01.000Z")); res.Status != 204 {
			t.Fatalf("a later score: %d %s", res.Status, res.Body)
		}
		if got := results("?user_id="+user, reader); len(got) != 1 || *got[0].ResultScore != 9 {
			t.Fatalf("the later score: %+v", got)
		}
		// A second learner; pages of one, the next in the Link header.
		second := env.NewUser("student")
		apitest.Must(w.admin.PostAdminCoursesIDAccess(context.Background(), w.course,
			client.AssignInputBody{Users: []client.GrantBody{{ID: second.ID}}}))(t)
		if res := post(score(second.ID, 4, "2026-01-02T10:00:00.000Z")); res.Status != 204 {
			t.Fatalf("second learner's score: %d %s", res.Status, res.Body)
		}
		res := w.ags(t, "GET", item+"/results?limit=1", reader, "", "")
		link := res.Header.Get("Link")
		if !strings.HasSuffix(link, `>; rel="next"`) || !strings.Contains(res.String("0.userId"), user) {
			t.Fatalf("first page: %s %s", link, res.Body)
		}
		res = w.ags(t, "GET", strings.TrimSuffix(strings.TrimPrefix(link, "<"), `>; rel="next"`), reader, "", "")
		if res.String("0.userId") != strconv.FormatInt(second.ID, 10) || res.Header.Get("Link") != "" {
			t.Fatalf("second page: %s %s", res.Header.Get("Link"), res.Body)
		}
		if got := results("?user_id=0", reader); len(got) != 0 {
			t.Fatalf("results of nobody: %+v", got)
		}
	})
}
