package httpx

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// Patterns that the ServeMux alone refuses as conflicting are served
// through a shared general pattern, each with its own path values.
func TestOverlapMux(t *testing.T) {
	mux := http.NewServeMux()
	m := newOverlapMux(mux)
	answer := func(name string, keys ...string) func(http.ResponseWriter, *http.Request) {
		return func(w http.ResponseWriter, r *http.Request) {
			out := name
			for _, k := range keys {
				out += " " + k + "=" + r.PathValue(k)
			}
			w.Write([]byte(out))
		}
	}
	m.HandleFunc("GET /api/courses/{id}/edit", answer("edit", "id"))
	m.HandleFunc("GET /api/courses/{course}/program", answer("program", "course"))
	m.HandleFunc("GET /api/courses/search/tags", answer("tags"))
	m.HandleFunc("GET /api/courses/search/{category_id}", answer("search", "category_id"))
	m.HandleFunc("GET /api/courses/{id}/access", answer("access", "id"))
	m.HandleFunc("GET /api/courses/progress/{course_id}", answer("progress", "course_id"))
	m.HandleFunc("POST /api/courses/search/{category_id}", answer("post-search", "category_id"))
	for path, want := range map[string]string{
		"/api/courses/7/edit":       "edit id=7",
		"/api/courses/7/program":    "program course=7",
		"/api/courses/7/access":     "access id=7",
		"/api/courses/search/tags":  "tags",
		"/api/courses/search/12":    "search category_id=12",
		"/api/courses/search/a%20b": "search category_id=a b",
		"/api/courses/progress/3":   "progress course_id=3",
	} {
		rec := httptest.NewRecorder()
		m.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
		if rec.Code != 200 || rec.Body.String() != want {
			t.Errorf("GET %s: %d %q, want %q", path, rec.Code, rec.Body.String(), want)
		}
	}
	for _, path := range []string{"/api/courses/7/other", "/api/courses/search/12/x", "/api/courses/search/"} {
		rec := httptest.NewRecorder()
		m.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
		if rec.Code != 404 {
			t.Errorf("GET %s: %d, want 404", path, rec.Code)
		}
	}
	rec := httptest.NewRecorder()
	m.ServeHTTP(rec, httptest.NewRequest("POST", "/api/courses/search/5", nil))
	if rec.Body.String() != "post-search category_id=5" {
		t.Errorf("POST search: %q", rec.Body.String())
	}
	defer func() {
		if recover() == nil {
			t.Error("registering a pattern twice did not panic")
		}
	}()
	m.HandleFunc("GET /api/courses/search/tags", answer("again"))
}
