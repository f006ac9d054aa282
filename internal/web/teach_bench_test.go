package web

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/lms-platform/lms/client"
	"github.com/lms-platform/lms/internal/apitest"
)

// BenchmarkTeachCoursePage renders the edit page of a course of 20
// lessons of 10 topics each, as its tutor, in process, with the API on
// the same machine (its own HTTP server on SQLite). The goal is under 50
// ms a page; it reports ms/page and fails above the goal.
func BenchmarkTeachCoursePage(b *testing.B) {
	env := apitest.New(b, "sqlite", apitest.Options{})
	api := newCountingAPI(b, env.Server.Handler)
	f := newFront(b, api.srv.URL, "platform.test", frontOptions{clock: env.Clock})
	f.host = env.Host
	tutor := env.NewUser("tutor")
	ctx := b.Context()
	tc := env.Client(env.Host, tutor.Token)
	course := apitest.Must(tc.PostAdminCourses(ctx, client.CourseBody{Title: "Big course", Tags: []string{"bench"}}))(b).ID
	for l := range 20 {
		lesson := apitest.Must(tc.PostAdminLessons(ctx, client.CreateLessonInputBody{CourseID: course,
			Title: fmt.Sprintf("Lesson %d", l+1)}))(b).ID
		for tp := range 10 {
			apitest.Must(tc.PostAdminTopics(ctx, client.PostAdminTopicsBody{Lesson: lesson, Title: fmt.Sprintf("Topic %d.%d", l+1, tp+1),
				Topicable: richTextClass, Markdown: client.Ptr("Some **text** to read, long enough to be a paragraph of a lesson.")}))(b)
		}
	}
	path := "/teach/courses/" + id(course)
	get := func() *httptest.ResponseRecorder {
		r := httptest.NewRequest(http.MethodGet, path, nil)
		r.Host = env.Host
		r.AddCookie(&http.Cookie{Name: sessionCookie, Value: tutor.Token})
		w := httptest.NewRecorder()
		f.web.ServeHTTP(w, r)
		return w
	}
	if w := get(); w.Code != http.StatusOK || strings.Count(w.Body.String(), `class="teach-topic"`) != 200 {
		b.Fatalf("the page: %d, %d topics", w.Code, strings.Count(w.Body.String(), `class="teach-topic"`))
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if w := get(); w.Code != http.StatusOK {
			b.Fatalf("status %d", w.Code)
		}
	}
	ms := float64(b.Elapsed().Milliseconds()) / float64(b.N)
	b.ReportMetric(ms, "ms/page")
	if ms > 50 {
		b.Fatalf("the course page took %.1f ms, over the goal of 50 ms", ms)
	}
}
