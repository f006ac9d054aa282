package h5p_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/url"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/lms-platform/lms/client"
	"github.com/lms-platform/lms/internal/apitest"
	"github.com/lms-platform/lms/internal/h5p/h5ppackage"
)

var trueFalseFixture = filepath.Join(fixtureDir, "hub", "H5P.TrueFalse.h5p")

// installTrueFalse stores the TrueFalse fixture as a content of env's
// default tenant and returns its id.
func installTrueFalse(t testing.TB, env *apitest.Env) int64 {
	t.Helper()
	raw := readFixture(t, trueFalseFixture)
	p, err := h5ppackage.Open(bytes.NewReader(raw), int64(len(raw)), h5ppackage.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if err := h5ppackage.Validate(p, h5ppackage.Options{}); err != nil {
		t.Fatal(err)
	}
	tenant, release := env.OpenTenant(env.Tenant)
	defer release()
	ctx := context.Background()
	store := env.Server.H5P.Store
	if _, err := store.Install(ctx, tenant, p, true); err != nil {
		t.Fatal(err)
	}
	c, err := store.SaveContent(ctx, tenant, p, 1)
	if err != nil {
		t.Fatal(err)
	}
	return c.ID
}

func TestPlayModel(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		id := installTrueFalse(t, env)
		sid := strconv.FormatInt(id, 10)
		student := env.As("student")
		playPath := "/h5p/contents/" + sid + "/play?contextId=course-7"

		// The header is the wire's; the model is read through the client.
		res := get(env, env.Host, playPath, student.Token, nil)
		if res.Status != 200 || res.Header.Get("Cache-Control") != "no-store" {
			t.Fatalf("play: %d %q %s", res.Status, res.Header.Get("Cache-Control"), res.Body)
		}
		ctx, learner := t.Context(), env.UserClient(student)
		course7 := client.Ptr("course-7")
		model := apitest.Must(learner.GetH5PContentsIDPlay(ctx, sid, client.GetH5PContentsIDPlayParams{ContextID: course7}))(t)
		mainLibrary, _ := model.Metadata.(map[string]any)["mainLibrary"].(string)
		if model.ContentID != sid || !strings.HasPrefix(model.Library, "H5P.TrueFalse ") ||
			model.Params == nil || mainLibrary != "H5P.TrueFalse" ||
			model.ContentURL != "/h5p/content/"+sid || model.SaveFreq != float64(5) ||
			model.User.ID != strconv.FormatInt(student.ID, 10) || model.User.Mail != student.Email {
			t.Errorf("play model: %+v", model)
		}
		ajax := model.Ajax.ContentUserData
		if !strings.Contains(ajax, "_token="+url.QueryEscape(student.Token)) || !strings.Contains(ajax, "contextId=course-7") ||
			!strings.Contains(model.Ajax.SetFinished, "_token=") {
			t.Errorf("ajax without proxy: %+v", model.Ajax)
		}
		scripts, styles := model.Scripts, model.Styles
		if len(scripts) == 0 || len(styles) == 0 {
			t.Fatalf("no scripts or styles: %+v", model)
		}
		checkOrder(t, env, scripts)

		// Raw: no "_token" anywhere in the answer, which the client's
		// fields cannot say.
		proxied := get(env, env.Host, playPath, student.Token, map[string]string{"X-Lms-Session-Proxy": "1"})
		if proxied.Status != 200 || strings.Contains(string(proxied.Body), student.Token) ||
			strings.Contains(string(proxied.Body), "_token") {
			t.Errorf("behind the session proxy the token is in the model: %s", proxied.Body)
		}
		anon := get(env, env.Host, "/h5p/contents/"+sid+"/play", "", nil)
		if anon.Status != 200 || anon.Get("data.saveFreq") != false || strings.Contains(string(anon.Body), "_token") ||
			anon.String("data.user.id") != "anonymous" {
			t.Errorf("anonymous play: %d %s", anon.Status, anon.Body)
		}
		_, err := env.ClientAs("").GetH5PContentsIDPlay(ctx, "999999", client.GetH5PContentsIDPlayParams{})
		apitest.Refused(t, err, 404)
		readOnly := apitest.Must(learner.GetH5PContentsIDPlay(ctx, sid, client.GetH5PContentsIDPlayParams{ReadOnlyState: client.Ptr("yes")}))(t)
		if readOnly.SaveFreq != false {
			t.Errorf("readOnlyState: saveFreq %v", readOnly.SaveFreq)
		}

		// Preloaded state, and another user's state through asUserId.
		apitest.OK(t, learner.PostH5PContentUserDataIDIDID(ctx, sid, "state", "0", client.PostH5PContentUserDataIDIDIDParams{ContextID: course7},
			client.StateForm{Data: `{"answer":true}`, Preload: client.Ptr("1")}))
		preloaded := apitest.Must(learner.GetH5PContentsIDPlay(ctx, sid, client.GetH5PContentsIDPlayParams{ContextID: course7}))(t)
		if preloaded.ContentUserData["0"]["state"] != `{"answer":true}` {
			t.Errorf("preloaded state: %v", preloaded.ContentUserData)
		}
		asUser := client.GetH5PContentsIDPlayParams{ContextID: course7, AsUserID: client.Ptr(strconv.FormatInt(student.ID, 10))}
		_, err = env.ClientAs("tutor").GetH5PContentsIDPlay(ctx, sid, asUser)
		apitest.Refused(t, err, 403)
		other := apitest.Must(env.ClientAs("admin").GetH5PContentsIDPlay(ctx, sid, asUser))(t)
		if other.ContentUserData["0"]["state"] != `{"answer":true}` || other.SaveFreq != false {
			t.Errorf("asUserId with h5p_read: %+v", other)
		}
	})
}

// checkOrder checks that every library's scripts come after those of the
// libraries it preloads.
func checkOrder(t *testing.T, env *apitest.Env, scripts []string) {
	t.Helper()
	first := map[string]int{}
	for i, s := range scripts {
		dir := strings.Split(strings.TrimPrefix(s, "/h5p/libraries/"), "/")[0]
		if _, ok := first[dir]; !ok {
			first[dir] = i
		}
	}
	tenant, release := env.OpenTenant(env.Tenant)
	defer release()
	libs, err := env.Server.H5P.Store.Libraries(context.Background(), tenant)
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, l := range libs {
		at, ok := first[l.Ref().Dir()]
		if !ok {
			continue
		}
		var j h5ppackage.LibraryJSON
		if err := json.Unmarshal(l.JSON, &j); err != nil {
			t.Fatal(err)
		}
		for _, d := range j.PreloadedDependencies {
			if dep, ok := first[d.Dir()]; ok {
				checked++
				if dep > at {
					t.Errorf("%s comes before its dependency %s: %v", l.Ref().Dir(), d.Dir(), scripts)
				}
			}
		}
	}
	if checked == 0 {
		t.Errorf("no dependency among the scripts: %v", scripts)
	}
	if _, ok := first["H5P.TrueFalse-1.6"]; !ok {
		t.Errorf("the main library's scripts are missing: %v", scripts)
	}
}

func TestContentUserData(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		id := installTrueFalse(t, env)
		sid := strconv.FormatInt(id, 10)
		student, other := env.As("student"), env.NewUser("student")
		path := func(ctx string) string {
			p := "/h5p/contentUserData/" + sid + "/state/0"
			if ctx != "" {
				p += "?contextId=" + ctx
			}
			return p
		}
		post := func(token, p, form string) *apitest.Response {
			return env.Do(apitest.Request{Method: "POST", Path: p, Token: token, Body: form,
				Type: "application/x-www-form-urlencoded"})
		}
		// The saves are raw: the H5P player posts URL-encoded forms, which
		// the client does not send; the loads and the JSON delete go
		// through it.
		ctx, learner := t.Context(), env.UserClient(student)
		load := func(c *client.Client, contextID string) any {
			t.Helper()
			params := client.GetH5PContentUserDataIDIDIDParams{}
			if contextID != "" {
				params.ContextID = &contextID
			}
			return apitest.Must(c.GetH5PContentUserDataIDIDID(ctx, sid, "state", "0", params))(t)
		}
		if got := load(learner, ""); got != false {
			t.Errorf("no state yet: %v", got)
		}
		for _, body := range []string{"data=first&preload=1&invalidate=0", "data=second&preload=1&invalidate=1"} {
			if res := post(student.Token, path(""), body); res.Status != 200 || res.Get("success") != true {
				t.Fatalf("save: %d %s", res.Status, res.Body)
			}
		}
		if got := load(learner, ""); got != "second" {
			t.Errorf("after two saves: %v", got)
		}
		if n := env.Count(t, `SELECT COUNT(*) FROM h5p_content_user_data WHERE content_id = $1 AND context_id = ''`, id); n != 1 {
			t.Errorf("two saves made %d rows", n)
		}
		if res := post(student.Token, path("c1"), "data=in-c1"); res.Status != 200 {
			t.Fatalf("save in context: %d %s", res.Status, res.Body)
		}
		if got := load(learner, "c1"); got != "in-c1" {
			t.Errorf("context c1: %v", got)
		}
		if got := load(learner, ""); got != "second" {
			t.Errorf("no context after a save in c1: %v", got)
		}
		if got := load(env.UserClient(other), ""); got != false {
			t.Errorf("another user sees the state: %v", got)
		}
		if got := load(env.ClientAs(""), ""); got != false {
			t.Errorf("anonymous load: %v", got)
		}
		if res := post("", path(""), "data=x"); res.Status != 401 {
			t.Errorf("anonymous save: %d %s", res.Status, res.Body)
		}
		apitest.OK(t, learner.PostH5PContentUserDataIDIDID(ctx, sid, "state", "0",
			client.PostH5PContentUserDataIDIDIDParams{ContextID: client.Ptr("c1")}, client.StateForm{Data: "0"}))
		if got := load(learner, "c1"); got != false {
			t.Errorf("after data=0: %v", got)
		}
		if res := post(student.Token, "/h5p/contentUserData/999999/state/0", "data=x"); res.Status != 404 {
			t.Errorf("unknown content: %d", res.Status)
		}

		// Results: one per content and user.
		for _, score := range []string{"1", "2"} {
			res := post(student.Token, "/h5p/finishedData", "contentId="+sid+"&score="+score+
				"&maxScore=2&opened=1700000000&finished=1700000060&time=60")
			if res.Status != 200 {
				t.Fatalf("finishedData: %d %s", res.Status, res.Body)
			}
		}
		if res := post(other.Token, "/h5p/finishedData", "contentId="+sid+"&score=0&maxScore=2"); res.Status != 200 {
			t.Fatalf("finishedData: %d %s", res.Status, res.Body)
		}
		if res := post(student.Token, "/h5p/finishedData", "contentId=999999&score=0&maxScore=2"); res.Status != 404 {
			t.Errorf("result of unknown content: %d %s", res.Status, res.Body)
		}
		if res := post("", "/h5p/finishedData", "contentId="+sid+"&score=0&maxScore=2"); res.Status != 401 {
			t.Errorf("anonymous finishedData: %d", res.Status)
		}
		if n := env.Count(t, `SELECT COUNT(*) FROM h5p_results WHERE content_id = $1 AND user_id = $2`, id, student.ID); n != 1 {
			t.Errorf("two results made %d rows", n)
		}
		result := apitest.Must(learner.GetH5PFinishedData(ctx, client.GetH5PFinishedDataParams{ContentID: &sid}))(t)
		if result.Score != 2 || result.MaxScore != 2 || result.Finished != 1700000060 || result.Time != 60 {
			t.Errorf("result: %+v", result)
		}

		// Deleting the content removes its states and results.
		tenant, release := env.OpenTenant(env.Tenant)
		err := env.Server.H5P.Store.DeleteContent(context.Background(), tenant, id)
		release()
		if err != nil {
			t.Fatal(err)
		}
		if n := env.Count(t, `SELECT COUNT(*) FROM h5p_content_user_data WHERE content_id = $1`, id) +
			env.Count(t, `SELECT COUNT(*) FROM h5p_results WHERE content_id = $1`, id); n != 0 {
			t.Errorf("%d states and results left after deleting the content", n)
		}
	})
}

func TestRuntimeFiles(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		id := installTrueFalse(t, env)
		sid := strconv.FormatInt(id, 10)
		// The model through the client; its files are served raw.
		play := apitest.Must(env.ClientAs("").GetH5PContentsIDPlay(t.Context(), sid, client.GetH5PContentsIDPlayParams{}))(t)
		scripts := play.Scripts
		if len(scripts) == 0 {
			t.Fatalf("no scripts: %+v", play)
		}
		full := get(env, env.Host, scripts[0], "", nil)
		if full.Status != 200 || full.Header.Get("Content-Type") != "text/javascript; charset=utf-8" ||
			full.Header.Get("X-Content-Type-Options") != "nosniff" || len(full.Body) < 10 {
			t.Fatalf("script %s: %d %v", scripts[0], full.Status, full.Header)
		}
		part := get(env, env.Host, scripts[0], "", map[string]string{"Range": "bytes=2-9"})
		if part.Status != 206 || !bytes.Equal(part.Body, full.Body[2:10]) {
			t.Errorf("range: %d %q, want %q", part.Status, part.Body, full.Body[2:10])
		}
		styles := play.Styles
		if res := get(env, env.Host, styles[0], "", nil); res.Status != 200 || res.Header.Get("Content-Type") != "text/css; charset=utf-8" {
			t.Errorf("style %s: %d %q", styles[0], res.Status, res.Header.Get("Content-Type"))
		}

		img := "/h5p/content/" + sid + "/images/file-582dbbc081261.jpg"
		res := get(env, env.Host, img, "", map[string]string{"Range": "bytes=0-3"})
		if res.Status != 206 || res.Header.Get("Content-Type") != "image/jpeg" || !bytes.Equal(res.Body, []byte{0xff, 0xd8, 0xff, res.Body[3]}) {
			t.Errorf("content image: %d %q % x", res.Status, res.Header.Get("Content-Type"), res.Body)
		}
		for _, p := range []string{
			"/h5p/content/" + sid + "/images/missing.jpg",
			"/h5p/content/" + sid + "/..%2F..%2Flibraries%2F" + strings.TrimPrefix(scripts[0], "/h5p/libraries/"),
			"/h5p/libraries/..%2Fcontent%2F" + sid + "/images/file-582dbbc081261.jpg",
			"/h5p/content/" + sid + "/images/..%2F..%2F" + sid + "/images/file-582dbbc081261.jpg",
		} {
			if res := get(env, env.Host, p, "", nil); res.Status == 200 || !slices.Contains([]int{400, 404}, res.Status) {
				t.Errorf("%s: %d, want 400 or 404", p, res.Status)
			}
		}
	})
}
