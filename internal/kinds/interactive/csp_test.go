package interactive_test

import (
	"testing"

	"github.com/lms-platform/lms/client"
	"github.com/lms-platform/lms/internal/apitest"
	"github.com/lms-platform/lms/internal/kinds/richtext"
)

// TestUnknownReportsDoNotCount: reports about no topic of ours answer 404
// without using up the limit (60 a minute per address) of the reports of
// played apps.
func TestUnknownReportsDoNotCount(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		w := newWorld(t, env)
		pkg := w.pkg(t)
		topic := w.created(t, client.PostAdminTopicsBody{Package: &pkg})
		lesson := apitest.Must(w.author.PostAdminTopics(t.Context(), client.PostAdminTopicsBody{Lesson: w.lesson,
			Title: "Text", Topicable: richtext.Class, Markdown: client.Ptr("Hello")}))(t).ID
		report := `{"csp-report":{"document-uri":"http://school.test/a.html","blocked-uri":"eval","effective-directive":"script-src"}}`
		send := func(query string) *apitest.Response {
			return env.Do(apitest.Request{Method: "POST", Path: "/api/csp-report" + query, Body: report, Type: "application/csp-report"})
		}
		unknown := []string{"", "?topic=0", "?topic=x", "?topic=999999", "?topic=" + num(lesson)}
		for i := range 70 {
			if r := send(unknown[i%len(unknown)]); r.Status != 404 {
				t.Fatalf("unknown report %d (%q): %d %s", i, unknown[i%len(unknown)], r.Status, r.Body)
			}
		}
		for i := range 60 {
			if r := send("?topic=" + num(topic)); r.Status != 200 {
				t.Fatalf("report %d of the app: %d %s", i, r.Status, r.Body)
			}
		}
		if r := send("?topic=" + num(topic)); r.Status != 429 {
			t.Errorf("61st report of the app: %d", r.Status)
		}
	})
}
