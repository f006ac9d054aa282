package liascript_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/lms-platform/lms/internal/apitest"
	kind "github.com/lms-platform/lms/internal/content/liascript"
	"github.com/lms-platform/lms/internal/fixtures"
	"github.com/lms-platform/lms/internal/interactive/interactivetest"
)

const lesson = "<!--\nauthor: Ada\nversion: 1.0\nlanguage: en\nnarrator: US English Female\nlogo: img/logo.png\n" +
	"import: https://github.com/liaTemplates/rextester\n-->\n\n# Soil\n\nIntro ![logo](img/logo.png)\n\n## Layers\n\nWhat is on top?\n\n" +
	"    [( )] Rock\n    [(X)] Humus\n\n## Water\n\n[[wet]]\n"

func num(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

type world struct {
	env     *apitest.Env
	tutor   *apitest.User
	course  float64
	lesson  float64
	learner *apitest.User
}

func newWorld(t *testing.T, env *apitest.Env) *world {
	t.Helper()
	tutor := env.As("tutor")
	course := env.Call(t, 201, "POST", "/api/admin/courses", tutor.Token, map[string]any{"title": "Lia", "status": "published"}).Number("data.id")
	les := env.Call(t, 201, "POST", "/api/admin/lessons", tutor.Token, map[string]any{"course_id": course, "title": "Lesson"}).Number("data.id")
	learner := env.NewUser("student")
	env.Call(t, 200, "POST", "/api/admin/courses/"+num(course)+"/access", env.As("admin").Token,
		map[string]any{"users": []map[string]any{{"id": learner.ID}}})
	return &world{env: env, tutor: tutor, course: course, lesson: les, learner: learner}
}

func (w *world) create(t *testing.T, fields map[string]any) *apitest.Response {
	b := map[string]any{"lesson": w.lesson, "title": "Lia", "topicable": kind.Class}
	for k, v := range fields {
		b[k] = v
	}
	return w.env.Do(apitest.Request{Method: "POST", Path: "/api/admin/topics", Token: w.tutor.Token, Body: b})
}

func TestUploadAndTopics(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		w := newWorld(t, env)
		res := env.Call(t, 201, "POST", "/api/admin/liascript", w.tutor.Token, map[string]any{"markdown": lesson})
		if res.String("data.structure.title") != "Soil" || res.String("data.structure.header.author") != "Ada" ||
			res.Number("data.structure.quizzes") != 2 || res.Number("data.structure.sections.1.quizzes") != 1 ||
			res.String("data.structure.header.imports.0") != "https://github.com/liaTemplates/rextester" {
			t.Fatalf("upload: %s", res.Body)
		}
		md := env.Do(apitest.Request{Method: "GET", Path: res.String("data.markdown_url")})
		if md.Status != 200 || string(md.Body) != lesson {
			t.Errorf("stored markdown: %d %q", md.Status, md.Body)
		}
		id := res.Number("data.id")
		// A .zip with its assets.
		zip := interactivetest.Zip(t, map[string]string{"course.md": lesson, "img/logo.png": "png"})
		body, ctype := interactivetest.Form(t, "file", "soil.zip", zip, nil)
		res = env.Do(apitest.Request{Method: "POST", Path: "/api/admin/liascript", Token: w.tutor.Token, Body: body, Type: ctype})
		if res.Status != 201 || res.Number("data.structure.quizzes") != 2 {
			t.Fatalf("zip: %d %s", res.Status, res.Body)
		}
		mdURL := res.String("data.markdown_url")
		asset := strings.Replace(mdURL[:strings.Index(mdURL, "?")], "course.md", "img/logo.png", 1)
		if env.Count(t, `SELECT COUNT(*) FROM liascript_courses`) != 2 || !env.BlobExists(t, strings.TrimPrefix(asset, "/api/files/")) {
			t.Errorf("asset not stored: %s", asset)
		}
		for name, b := range map[string][]byte{
			"two md":    interactivetest.Zip(t, map[string]string{"a.md": lesson, "b.md": lesson}),
			"no md":     interactivetest.Zip(t, map[string]string{"x.png": "x"}),
			"unsafe":    interactivetest.Zip(t, map[string]string{"course.md": lesson, "../x.png": "x"}),
			"not a zip": []byte("nope"),
		} {
			body, ctype := interactivetest.Form(t, "file", "c.zip", b, nil)
			if r := env.Do(apitest.Request{Method: "POST", Path: "/api/admin/liascript", Token: w.tutor.Token, Body: body, Type: ctype}); r.Status != 422 {
				t.Errorf("%s: %d %s", name, r.Status, r.Body)
			}
		}
		if r := env.Do(apitest.Request{Method: "POST", Path: "/api/admin/liascript", Token: w.learner.Token,
			Body: map[string]any{"markdown": lesson}}); r.Status != 403 {
			t.Errorf("learner upload: %d", r.Status)
		}
		if r := env.Do(apitest.Request{Method: "POST", Path: "/api/admin/liascript", Token: w.tutor.Token,
			Body: map[string]any{"markdown": "  "}}); r.Status != 422 {
			t.Errorf("empty: %d", r.Status)
		}

		// Topics: markdown, file or course; one of them.
		if r := w.create(t, map[string]any{"markdown": lesson}); r.Status != 201 || r.String("data.topicable.structure.title") != "Soil" ||
			r.String("data.topicable.completion") != "all" {
			t.Errorf("markdown topic: %d %s", r.Status, r.Body)
		}
		if r := w.create(t, map[string]any{"course": id, "liascriptCompletion": "sections"}); r.Status != 201 ||
			r.Number("data.topicable.course") != id || r.String("data.topicable.completion") != "sections" {
			t.Errorf("course topic: %d %s", r.Status, r.Body)
		}
		body, ctype = interactivetest.Form(t, "file", "soil.md", []byte(lesson),
			map[string]string{"lesson": num(w.lesson), "title": "File", "topicable": kind.Class})
		if r := env.Do(apitest.Request{Method: "POST", Path: "/api/admin/topics", Token: w.tutor.Token, Body: body, Type: ctype}); r.Status != 201 {
			t.Errorf("file topic: %d %s", r.Status, r.Body)
		}
		for name, f := range map[string]map[string]any{
			"no source":      {},
			"two sources":    {"markdown": lesson, "course": id},
			"unknown course": {"course": 999999},
			"bad completion": {"markdown": lesson, "liascriptCompletion": "never"},
		} {
			if r := w.create(t, f); r.Status != 422 {
				t.Errorf("%s: %d %s", name, r.Status, r.Body)
			}
		}
		if r := env.Do(apitest.Request{Method: "POST", Path: "/api/liascript/" + num(id) + "/preview", Token: w.tutor.Token}); r.Status != 200 ||
			r.String("data.structure.title") != "Soil" {
			t.Errorf("preview: %d %s", r.Status, r.Body)
		}
		if r := env.Do(apitest.Request{Method: "POST", Path: "/api/liascript/" + num(id) + "/preview", Token: w.learner.Token}); r.Status != 403 {
			t.Errorf("learner preview: %d", r.Status)
		}
	})
}

func TestProgress(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		w := newWorld(t, env)
		report := func(topic float64, body map[string]any) *apitest.Response {
			return env.Do(apitest.Request{Method: "POST", Path: "/api/liascript/progress/" + num(topic), Token: w.learner.Token, Body: body})
		}
		complete := func(topic float64) bool {
			return env.Count(t, `SELECT COUNT(*) FROM topic_progress WHERE topic_id = $1 AND user_id = $2 AND finished_at IS NOT NULL`,
				int64(topic), w.learner.ID) == 1
		}
		// all: three sections visited and both quizzes solved.
		topic := w.create(t, map[string]any{"markdown": lesson}).Number("data.id")
		steps := []map[string]any{
			{"visited": []int{0, 1}},
			{"quizzes": []map[string]any{{"quiz": 0, "solved": false}}},
			{"quizzes": []map[string]any{{"quiz": 0, "solved": true}}},
			{"visited": []int{2}},
		}
		for _, s := range steps {
			if r := report(topic, s); r.Status != 200 || r.Get("data.completed") != false || complete(topic) {
				t.Fatalf("%v: %d %s", s, r.Status, r.Body)
			}
		}
		r := report(topic, map[string]any{"quizzes": []map[string]any{{"quiz": 1, "solved": true}}})
		if r.Status != 200 || r.Get("data.completed") != true || !complete(topic) {
			t.Fatalf("last quiz: %d %s", r.Status, r.Body)
		}
		// sections: visits are enough.
		topic = w.create(t, map[string]any{"markdown": lesson, "liascriptCompletion": "sections"}).Number("data.id")
		if r := report(topic, map[string]any{"visited": []int{0, 1, 2}}); r.Get("data.completed") != true || !complete(topic) {
			t.Errorf("sections: %s", r.Body)
		}
		// quizzes: solved quizzes are enough.
		topic = w.create(t, map[string]any{"markdown": lesson, "liascriptCompletion": "quizzes"}).Number("data.id")
		if r := report(topic, map[string]any{"quizzes": []map[string]any{{"quiz": 0, "solved": true}, {"quiz": 1, "solved": true}}}); r.Get("data.completed") != true {
			t.Errorf("quizzes: %s", r.Body)
		}
		for _, bad := range []map[string]any{{"visited": []int{3}}, {"visited": []int{-1}}, {"quizzes": []map[string]any{{"quiz": 2, "solved": true}}}} {
			if r := report(topic, bad); r.Status != 422 {
				t.Errorf("%v: %d %s", bad, r.Status, r.Body)
			}
		}
		outsider := env.NewUser("student")
		if r := env.Do(apitest.Request{Method: "POST", Path: "/api/liascript/progress/" + num(topic), Token: outsider.Token,
			Body: map[string]any{"visited": []int{0}}}); r.Status != 403 {
			t.Errorf("outsider: %d", r.Status)
		}
		// The real workshop course: 33 sections, 2 quizzes, a quiz answered.
		topic = w.create(t, map[string]any{"markdown": string(fixtures.Read(t, "liascript/workshop.md"))}).Number("data.id")
		r = report(topic, map[string]any{"visited": []int{7}, "quizzes": []map[string]any{{"quiz": 1, "solved": true}}})
		if r.Status != 200 || r.Number("data.sections") != 33 || r.Number("data.quizzes") != 2 || r.Get("data.completed") != false {
			t.Errorf("workshop: %d %s", r.Status, r.Body)
		}
		// 120 per minute: the reports above and more until the limit.
		sent := 0
		for ; sent < 130; sent++ {
			if r := report(topic, map[string]any{"visited": []int{0}}); r.Status == 429 {
				break
			}
		}
		if sent == 130 || sent < 100 {
			t.Errorf("limit after %d more reports", sent)
		}
	})
}
