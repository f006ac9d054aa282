package livingcourse_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lms-platform/lms/client"
	"github.com/lms-platform/lms/internal/apitest"
	"github.com/lms-platform/lms/internal/config"
	"github.com/lms-platform/lms/internal/kinds/richtext"
	"github.com/lms-platform/lms/internal/livingcourse"
	"github.com/lms-platform/lms/internal/webhooks"
)

// source is an external Markdown document with an ETag.
type source struct {
	mu       sync.Mutex
	doc      string
	requests int
	srv      *httptest.Server
}

func newSource(t *testing.T, doc string) *source {
	s := &source{doc: doc}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.requests++
		sum := sha256.Sum256([]byte(s.doc))
		etag := `"` + hex.EncodeToString(sum[:8]) + `"`
		if r.Header.Get("If-None-Match") == etag {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		w.Header().Set("ETag", etag)
		w.Header().Set("Content-Type", "text/markdown")
		w.Write([]byte(s.doc))
	}))
	t.Cleanup(s.srv.Close)
	return s
}

func (s *source) set(doc string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.doc = doc
}

func (s *source) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.requests
}

func newEnv(t *testing.T, backend string) *apitest.Env {
	return apitest.New(t, backend, apitest.Options{Configure: func(c *config.Config) { c.FetchAllowPrivate = true }})
}

// richTopic makes a course of c's user with a rich text topic.
func richTopic(t *testing.T, c *client.Client, markdown string) int64 {
	t.Helper()
	course := apitest.Must(c.PostAdminCourses(t.Context(), client.CourseBody{Title: "Handbook"}))(t)
	lesson := apitest.Must(c.PostAdminLessons(t.Context(), client.CreateLessonInputBody{CourseID: course.ID, Title: "Chapter"}))(t)
	return apitest.Must(c.PostAdminTopicsMultipart(t.Context(), client.PostAdminTopicsForm{Lesson: lesson.ID, Title: "Text",
		Topicable: richtext.Class, Markdown: client.Ptr(markdown)}))(t).ID
}

// announce posts a change notice for connection id, signed with secret
// at ts as message msg ("" secret: unsigned), to host ("": the default).
func announce(env *apitest.Env, host string, id int64, secret, msg string, ts time.Time) *apitest.Response {
	body := []byte(`{"ref":"main"}`)
	headers := map[string]string{}
	if secret != "" {
		sig, _ := webhooks.Sign(secret, msg, ts.Unix(), body)
		headers = map[string]string{"webhook-id": msg, "webhook-timestamp": strconv.FormatInt(ts.Unix(), 10), "webhook-signature": sig}
	}
	return env.Do(apitest.Request{Method: "POST", Path: livingcourse.WebhookPath(id), Host: host, Body: body,
		Type: "application/json", Headers: headers})
}

func markdownOf(t *testing.T, c *client.Client, topic int64) string {
	t.Helper()
	v := apitest.Must(c.GetAdminTopicsID(t.Context(), topic))(t)
	m, _ := v.Topicable.(map[string]any)
	s, _ := m["markdown"].(string)
	return s
}

// work runs the queued jobs of the platform.
func work(t *testing.T, env *apitest.Env) {
	t.Helper()
	for {
		ran, err := env.Server.Queue.Work(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if !ran {
			return
		}
	}
}

// Authors connect sources to topics they may edit and manage their own
// connections; admins manage every one; students none.
func TestConnectionsPerRole(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		src := newSource(t, "# One")
		admin, tutor, student := env.ClientAs("admin"), env.ClientAs("tutor"), env.ClientAs("student")
		otherTutor := env.Client("", env.NewUser("tutor").Token)
		adminTopic, tutorTopic := richTopic(t, admin, "old"), richTopic(t, tutor, "old")
		body := func(topics ...int64) client.ConnectionCreateInputBody {
			return client.ConnectionCreateInputBody{URL: src.srv.URL + "/doc.md", Topics: topics}
		}
		_, err := student.PostAdminLivingCourseConnections(t.Context(), body(tutorTopic))
		apitest.Refused(t, err, 403)
		_, err = student.GetAdminLivingCourseConnections(t.Context(), client.GetAdminLivingCourseConnectionsParams{})
		apitest.Refused(t, err, 403)
		_, err = tutor.PostAdminLivingCourseConnections(t.Context(), body(adminTopic))
		apitest.Refused(t, err, 403)
		for _, b := range []client.ConnectionCreateInputBody{
			{URL: "ftp://example.com/x.md", Topics: []int64{tutorTopic}}, // not http(s)
			body(tutorTopic, tutorTopic),                                 // a topic twice
		} {
			_, err := tutor.PostAdminLivingCourseConnections(t.Context(), b)
			apitest.Refused(t, err, 422)
		}
		mine := apitest.Must(tutor.PostAdminLivingCourseConnections(t.Context(), body(tutorTopic)))(t)
		if mine.Secret == nil || !strings.HasPrefix(*mine.Secret, "whsec_") || mine.WebhookPath != livingcourse.WebhookPath(mine.ID) {
			t.Fatalf("created: %+v", mine)
		}
		theirs := apitest.Must(admin.PostAdminLivingCourseConnections(t.Context(), body(adminTopic, tutorTopic)))(t)

		list := apitest.Must(tutor.GetAdminLivingCourseConnections(t.Context(), client.GetAdminLivingCourseConnectionsParams{}))(t)
		if len(list.Items) != 1 || list.Items[0].ID != mine.ID || list.Items[0].Secret != nil {
			t.Fatalf("tutor's list: %+v", list.Items)
		}
		if all := apitest.Must(admin.GetAdminLivingCourseConnections(t.Context(), client.GetAdminLivingCourseConnectionsParams{}))(t); len(all.Items) != 2 {
			t.Fatalf("admin's list: %+v", all.Items)
		}
		_, err = otherTutor.PostAdminLivingCourseConnectionsIDSecret(t.Context(), mine.ID)
		apitest.Refused(t, err, 404)
		err = tutor.DeleteAdminLivingCourseConnectionsID(t.Context(), theirs.ID)
		apitest.Refused(t, err, 404)
		err = student.DeleteAdminLivingCourseConnectionsID(t.Context(), mine.ID)
		apitest.Refused(t, err, 403)

		// A rotated secret replaces the old one at once.
		rotated := apitest.Must(tutor.PostAdminLivingCourseConnectionsIDSecret(t.Context(), mine.ID))(t)
		now := env.Clock.Now()
		if res := announce(env, "", mine.ID, *mine.Secret, "m1", now); res.Status != 401 {
			t.Fatalf("old secret after rotation: %d %s", res.Status, res.Body)
		}
		if res := announce(env, "", mine.ID, *rotated.Secret, "m1", now); res.Status != 202 {
			t.Fatalf("new secret: %d %s", res.Status, res.Body)
		}
		apitest.OK(t, admin.DeleteAdminLivingCourseConnectionsID(t.Context(), mine.ID))
		if res := announce(env, "", mine.ID, *rotated.Secret, "m2", now); res.Status != 401 {
			t.Fatalf("deleted connection: %d %s", res.Status, res.Body)
		}
	})
}

// A signed announcement queues a check that imports the changed document
// into the linked topics; an unchanged one (304, same hash) changes
// nothing. Bad, missing, stale and replayed signatures are refused
// before anything is queued, and another tenant knows no such connection.
func TestAnnouncementReimportsSource(t *testing.T) {
	for _, backend := range apitest.Backends(t) {
		t.Run(backend, func(t *testing.T) { announcementReimportsSource(t, newEnv(t, backend)) })
	}
}

func announcementReimportsSource(t *testing.T, env *apitest.Env) {
	src := newSource(t, "# Version 1\n\nHello.")
	admin := env.ClientAs("admin")
	a, b := richTopic(t, admin, "old a"), richTopic(t, admin, "old b")
	conn := apitest.Must(admin.PostAdminLivingCourseConnections(t.Context(), client.ConnectionCreateInputBody{
		URL: src.srv.URL + "/doc.md", Topics: []int64{a, b}}))(t)
	secret, now := *conn.Secret, env.Clock.Now()

	for name, res := range map[string]*apitest.Response{
		"missing": announce(env, "", conn.ID, "", "", now),
		"wrong":   announce(env, "", conn.ID, webhooks.NewSecret(), "x1", now),
		"stale":   announce(env, "", conn.ID, secret, "x2", now.Add(-5*time.Minute-time.Second)),
		"future":  announce(env, "", conn.ID, secret, "x3", now.Add(6*time.Minute)),
	} {
		if res.Status != 401 {
			t.Errorf("%s signature: %d %s", name, res.Status, res.Body)
		}
	}
	// The other tenant has no connection of that id: answered as a wrong
	// signature, so ids cannot be probed.
	env.As("other-admin")
	if res := announce(env, "other.test", conn.ID, secret, "x4", now); res.Status != 401 {
		t.Errorf("another tenant: %d %s", res.Status, res.Body)
	}
	work(t, env)
	if src.count() != 0 || markdownOf(t, admin, a) != "old a" {
		t.Fatalf("refused calls fetched %d times, topic %q", src.count(), markdownOf(t, admin, a))
	}

	res := announce(env, "", conn.ID, secret, "msg_1", now)
	if res.Status != 202 || res.Number("data.checks_today") != 1 || res.Number("data.checks_left") != 47 {
		t.Fatalf("announcement: %d %s", res.Status, res.Body)
	}
	if res := announce(env, "", conn.ID, secret, "msg_1", now); res.Status != 409 {
		t.Fatalf("replay: %d %s", res.Status, res.Body)
	}
	work(t, env)
	for _, topic := range []int64{a, b} {
		if got := markdownOf(t, admin, topic); got != "# Version 1\n\nHello." {
			t.Fatalf("topic %d after the check: %q", topic, got)
		}
	}
	list := apitest.Must(admin.GetAdminLivingCourseConnections(t.Context(), client.GetAdminLivingCourseConnectionsParams{}))(t)
	if c := list.Items[0]; c.Etag == "" || c.ContentHash == "" || c.LastChangedAt == nil || c.LastError != "" || c.ChecksToday != 1 {
		t.Fatalf("connection after the check: %+v", c)
	}

	// Unchanged: the source answers 304 and the topics stay.
	apitest.Must(admin.PutAdminTopicsID(t.Context(), a, client.PutAdminTopicsIDBody{Markdown: client.Ptr("edited here")}))(t)
	announce(env, "", conn.ID, secret, "msg_2", now)
	work(t, env)
	if got := markdownOf(t, admin, a); got != "edited here" || src.count() != 2 {
		t.Fatalf("unchanged source: topic %q after %d fetches", got, src.count())
	}
	src.set("# Version 2")
	announce(env, "", conn.ID, secret, "msg_3", now)
	work(t, env)
	if got := markdownOf(t, admin, b); got != "# Version 2" {
		t.Fatalf("changed source: %q", got)
	}
}

// At most 48 checks per connection per day, and 60 calls a minute per
// connection; another connection keeps its own counts.
func TestDailyCapAndRateLimit(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		admin := env.ClientAs("admin")
		topic := richTopic(t, admin, "x")
		create := func() (int64, string) {
			c := apitest.Must(admin.PostAdminLivingCourseConnections(t.Context(), client.ConnectionCreateInputBody{
				URL: "https://example.com/doc.md", Topics: []int64{topic}}))(t)
			return c.ID, *c.Secret
		}
		id, secret := create()
		now := env.Clock.Now()
		for i := 1; i <= livingcourse.MaxChecksPerDay; i++ {
			if res := announce(env, "", id, secret, "m"+strconv.Itoa(i), now); res.Status != 202 {
				t.Fatalf("announcement %d: %d %s", i, res.Status, res.Body)
			}
		}
		capped := announce(env, "", id, secret, "m49", now)
		if capped.Status != 429 || capped.Header.Get("Retry-After") == "" || !strings.Contains(capped.String("message"), "48") {
			t.Fatalf("49th check: %d %s", capped.Status, capped.Body)
		}
		// The refused check left no receipt: the same message is refused
		// by the cap again, not as a replay.
		if res := announce(env, "", id, secret, "m49", now); res.Status != 429 || !strings.Contains(res.String("message"), "48") {
			t.Fatalf("the capped message again: %d %s", res.Status, res.Body)
		}
		for i := 51; i <= 60; i++ {
			announce(env, "", id, secret, "m"+strconv.Itoa(i), now)
		}
		limited := announce(env, "", id, secret, "m61", now)
		if limited.Status != 429 || limited.String("message") != "Too Many Attempts." {
			t.Fatalf("61st call in a minute: %d %s", limited.Status, limited.Body)
		}
		other, otherSecret := create()
		if res := announce(env, "", other, otherSecret, "m1", now); res.Status != 202 {
			t.Fatalf("another connection: %d %s", res.Status, res.Body)
		}
		// The next day (and minute) the connection may be checked again.
		env.Clock.Advance(24 * time.Hour)
		if res := announce(env, "", id, secret, "next-day", env.Clock.Now()); res.Status != 202 || res.Number("data.checks_today") != 1 {
			t.Fatalf("next day: %d %s", res.Status, res.Body)
		}
	})
}

// The check fetches through the outbound-fetch guard: without
// LMS_FETCH_ALLOW_PRIVATE a source on this machine is never asked, the
// topic keeps its text, and the connection says why.
func TestCheckThroughFetchGuard(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		src := newSource(t, "# From this machine")
		admin := env.ClientAs("admin")
		topic := richTopic(t, admin, "kept")
		conn := apitest.Must(admin.PostAdminLivingCourseConnections(t.Context(), client.ConnectionCreateInputBody{
			URL: src.srv.URL + "/doc.md", Topics: []int64{topic}}))(t)
		if res := announce(env, "", conn.ID, *conn.Secret, "m1", env.Clock.Now()); res.Status != 202 {
			t.Fatalf("announcement: %d %s", res.Status, res.Body)
		}
		work(t, env)
		list := apitest.Must(admin.GetAdminLivingCourseConnections(t.Context(), client.GetAdminLivingCourseConnectionsParams{}))(t)
		if src.count() != 0 || markdownOf(t, admin, topic) != "kept" || len(list.Items) != 1 ||
			list.Items[0].LastError != "The address resolves to this machine (loopback)." || list.Items[0].LastChangedAt != nil {
			t.Fatalf("the guard let %d requests through; topic %q; connection %+v", src.count(), markdownOf(t, admin, topic), list.Items)
		}
	})
}
