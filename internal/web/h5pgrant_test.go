package web

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/lms-platform/lms/client"
	"github.com/lms-platform/lms/internal/apitest"
	"github.com/lms-platform/lms/internal/kinds/layout"
)

// TestH5PPlayGrant checks the play grant of an H5P topic on the real API
// and H5P service, through the content origin: it plays its content and
// keeps its user's state and result of it, and nothing else opens to it:
// not another content, not another user's state, not the API, not /bff/.
func TestH5PPlayGrant(t *testing.T) {
	eachBackend(t, func(t *testing.T, backend string) {
		s := newStack(t, backend, frontOptions{})
		admin := s.env.As("admin").Token
		c := seedCourse(t, s.env, s.env.Host, admin, "Grants")
		pkg := fixture(t, "h5p/valid/valid3-3-images.h5p")
		topicA := h5pTopic(t, s.env, s.env.Host, admin, c.lesson, pkg)
		topicB := h5pTopic(t, s.env, s.env.Host, admin, c.lesson, pkg)
		u, v := s.env.NewUser("student"), s.env.NewUser("student")

		// The topic page asks for the grant through /bff/ with the session.
		grantOf := func(token string, topic int64) (grant, content string) {
			r := s.must(req{method: "POST", path: "/bff/api/courses/progress/" + id(topic) + "/h5p/grant", token: token},
				http.StatusCreated)
			grant, _ = r.get("data.grant").(string)
			content, _ = r.get("data.content_id").(string)
			if !strings.HasPrefix(grant, "lms_h5pplay.") || content == "" {
				t.Fatalf("grant: %s", r.body)
			}
			return grant, content
		}
		gu, contentA := grantOf(u.Token, topicA)
		gv, _ := grantOf(v.Token, topicA)
		_, contentB := grantOf(u.Token, topicB)
		if contentA == contentB {
			t.Fatal("two uploads, one content")
		}
		bearer := func(g string) map[string]string { return map[string]string{"Authorization": "Bearer " + g} }
		ctx := "?contextId=topic-" + id(topicA)

		// Its content plays as its user, the grant in no URL.
		r := s.must(req{path: "/h5p/contents/" + contentA + "/play" + ctx, content: true, headers: bearer(gu)}, http.StatusOK)
		if r.get("data.user.id") != id(u.ID) || strings.Contains(r.text(), "_token") || strings.Contains(r.text(), gu) {
			t.Fatalf("play model: %.400s", r.body)
		}
		state := url.Values{"data": {`{"progress":3}`}, "preload": {"1"}, "invalidate": {"0"}}
		s.must(req{method: "POST", path: "/h5p/contentUserData/" + contentA + "/state/0" + ctx, content: true, headers: bearer(gu),
			form: state}, http.StatusOK)
		r = s.must(req{path: "/h5p/contentUserData/" + contentA + "/state/0" + ctx, content: true, headers: bearer(gu)}, http.StatusOK)
		if !strings.Contains(r.text(), "progress") {
			t.Fatalf("own state: %s", r.body)
		}
		// Another user's grant sees its own user's state only.
		r = s.must(req{path: "/h5p/contentUserData/" + contentA + "/state/0" + ctx, content: true, headers: bearer(gv)}, http.StatusOK)
		if strings.Contains(r.text(), "progress") {
			t.Fatalf("another user's state: %s", r.body)
		}
		result := url.Values{"contentId": {contentA}, "score": {"3"}, "maxScore": {"3"}, "opened": {"1"}, "finished": {"2"}, "time": {"1"}}
		s.must(req{method: "POST", path: "/h5p/finishedData", content: true, headers: bearer(gu), form: result}, http.StatusOK)
		s.must(req{path: "/h5p/finishedData?contentId=" + contentA, content: true, headers: bearer(gu)}, http.StatusOK)

		// Another content: refused on every play route.
		result.Set("contentId", contentB)
		for _, q := range []req{
			{path: "/h5p/contents/" + contentB + "/play"},
			{path: "/h5p/contentUserData/" + contentB + "/state/0"},
			{method: "POST", path: "/h5p/contentUserData/" + contentB + "/state/0", form: state},
			{path: "/h5p/finishedData?contentId=" + contentB},
			{method: "POST", path: "/h5p/finishedData", form: result},
			{path: "/h5p/content/" + contentB + "/content.json"},
		} {
			q.content, q.headers = true, bearer(gu)
			s.must(q, http.StatusForbidden)
		}
		// Every other route of the H5P service refuses it, even for its
		// content; another user's state may not be asked for.
		for _, p := range []string{"/h5p/whoami", "/h5p/contents", "/h5p/contents/" + contentA, "/h5p/contents/" + contentA + "/download",
			"/h5p/contents/" + contentA + "/edit", "/h5p/libraries", "/h5p/params/" + contentA, "/h5p/ajax?action=libraries"} {
			s.must(req{path: p, content: true, headers: bearer(gu)}, http.StatusForbidden)
		}
		s.must(req{path: "/h5p/contents/" + contentA + "/play?asUserId=" + id(v.ID), content: true, headers: bearer(gu)},
			http.StatusForbidden)
		// The API and the frontend take it for nothing.
		for _, p := range []string{"/api/profile/me", "/api/courses/progress/" + id(c.course)} {
			if res := s.env.Do(apitest.Request{Method: "GET", Path: p, Token: gu}); res.Status != http.StatusUnauthorized {
				t.Fatalf("%s with a grant: %d", p, res.Status)
			}
		}
		if res := s.env.Do(apitest.Request{Method: "POST", Path: "/api/courses/progress/" + id(topicA) + "/h5p", Token: gu,
			Body: map[string]any{"statement": map[string]any{"verb": map[string]any{"id": "http://adlnet.gov/expapi/verbs/completed"}}}}); res.Status != http.StatusUnauthorized {
			t.Fatalf("progress with a grant: %d", res.Status)
		}
		s.must(req{path: "/bff/api/profile/me", token: gu}, http.StatusUnauthorized)
		s.must(req{path: "/bff/api/profile/me", headers: bearer(gu)}, http.StatusUnauthorized)
		// A grant altered to name another user or content is no grant.
		forged := strings.Replace(gu, "lms_h5pplay."+id(u.ID)+".", "lms_h5pplay."+id(v.ID)+".", 1)
		r = s.must(req{path: "/h5p/contents/" + contentA + "/play" + ctx, content: true, headers: bearer(forged)}, http.StatusOK)
		if r.get("data.user.id") != "anonymous" {
			t.Fatalf("a forged grant plays as %v", r.get("data.user.id"))
		}
		forged = strings.Replace(gu, "."+contentA+".", "."+contentB+".", 1)
		r = s.must(req{path: "/h5p/contents/" + contentB + "/play", content: true, headers: bearer(forged)}, http.StatusOK)
		if r.get("data.user.id") != "anonymous" {
			t.Fatalf("a forged grant plays as %v", r.get("data.user.id"))
		}
		// A layout topic's grant plays an H5P content its H5PFrames name,
		// as its user, and no other content.
		doc := []client.PostAdminTopicsBodyDocumentItem{{Component: "H5PFrame",
			Props: map[string]any{"content_id": contentA, "title": "Images"}}}
		lay := apitest.Must(s.env.Client("", admin).PostAdminTopics(t.Context(), client.PostAdminTopicsBody{Lesson: c.lesson,
			Title: "Layout", Topicable: layout.Class, Document: doc, Fallback: client.Ptr("# Layout\n\nImages to compare.")}))(t)
		layoutGrant := "/bff/api/courses/progress/" + id(lay.ID) + "/h5p/grant"
		r = s.must(req{method: "POST", path: layoutGrant + "?content_id=" + contentA, token: u.Token}, http.StatusCreated)
		gl, _ := r.get("data.grant").(string)
		if r.get("data.content_id") != contentA {
			t.Fatalf("layout grant: %s", r.body)
		}
		r = s.must(req{path: "/h5p/contents/" + contentA + "/play", content: true, headers: bearer(gl)}, http.StatusOK)
		if r.get("data.user.id") != id(u.ID) {
			t.Fatalf("layout grant plays as %v", r.get("data.user.id"))
		}
		s.must(req{path: "/h5p/contents/" + contentB + "/play", content: true, headers: bearer(gl)}, http.StatusForbidden)
		s.must(req{method: "POST", path: layoutGrant + "?content_id=" + contentB, token: u.Token}, http.StatusUnprocessableEntity)
		s.must(req{method: "POST", path: layoutGrant, token: u.Token}, http.StatusUnprocessableEntity)
		// An H5P topic's grant names its own content only.
		s.must(req{method: "POST", path: "/bff/api/courses/progress/" + id(topicA) + "/h5p/grant?content_id=" + contentB,
			token: u.Token}, http.StatusUnprocessableEntity)

		// Only learners of the topic get one, and only for H5P topics.
		s.must(req{method: "POST", path: "/bff/api/courses/progress/" + id(c.reading) + "/h5p/grant", token: u.Token},
			http.StatusUnprocessableEntity)
		s.must(req{method: "POST", path: "/bff/api/courses/progress/" + id(topicA) + "/h5p/grant"}, http.StatusUnauthorized)
		// It expires after two hours: anonymous then.
		s.env.Clock.Advance(2*time.Hour + time.Minute)
		r = s.must(req{path: "/h5p/contents/" + contentA + "/play" + ctx, content: true, headers: bearer(gu)}, http.StatusOK)
		if r.get("data.user.id") != "anonymous" {
			t.Fatalf("an expired grant plays as %v", r.get("data.user.id"))
		}
		s.must(req{method: "POST", path: "/h5p/contentUserData/" + contentA + "/state/0" + ctx, content: true,
			headers: bearer(gu), form: state}, http.StatusUnauthorized)
	})
}
