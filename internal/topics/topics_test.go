package topics_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/lms-platform/lms/client"
	"github.com/lms-platform/lms/internal/apitest"
)

func TestCreateRichText(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		w := newWorld(t, env)
		apitest.Run(t, env, []apitest.Scenario{
			{Name: "author tutor creates", As: "tutor", Method: "POST", Path: "/api/admin/topics",
				Body: map[string]any{"lesson": w.lesson, "title": "Intro", "topicable": richClass, "summary": "s", "canSkip": true,
					"duration": 15, "html": `<p onclick="x()">Hi</p><script>alert(1)</script><a href="javascript:alert(1)">l</a>`},
				Status: 201, Events: []string{"CourseContentChanged"},
				JSON: map[string]any{"data.lesson_id": w.lesson, "data.course_id": w.course, "data.title": "Intro", "data.order": 1,
					"data.active": true, "data.preview": false, "data.can_skip": true, "data.duration": "15", "data.summary": "s",
					"data.kind": "richtext", "data.topicable_type": richClass, "data.topicable.html": `<p>Hi</p>l`,
					"data.id": apitest.Present, "data.created_at": apitest.Present}},
			{Name: "markdown only is rendered", As: "admin", Method: "POST", Path: "/api/admin/topics",
				Body:   map[string]any{"lesson": w.lesson, "title": "Md", "topicable": richClass, "markdown": "# Head\n\n**bold**", "active": false},
				Status: 201, JSON: map[string]any{"data.order": 2, "data.active": false, "data.topicable.markdown": "# Head\n\n**bold**",
					"data.topicable.html": "<h1>Head</h1>\n<p><strong>bold</strong></p>\n"}},
			{Name: "generic value", As: "admin", Method: "POST", Path: "/api/admin/topics",
				Body:   map[string]any{"lesson": w.lesson, "title": "Gen", "topicable": richClass, "value": map[string]any{"html": "<b>x</b>"}, "order": 10},
				Status: 201, JSON: map[string]any{"data.order": 10, "data.topicable.html": "<b>x</b>"}},
			{Name: "student refused", As: "student", Method: "POST", Path: "/api/admin/topics",
				Body: map[string]any{"lesson": w.lesson, "title": "x", "topicable": richClass, "html": "x"}, Status: 403},
			{Name: "tutor of another course refused", As: "tutor", Method: "POST", Path: "/api/admin/topics",
				Body: map[string]any{"lesson": w.foreignLesson, "title": "x", "topicable": richClass, "html": "x"}, Status: 403},
			{Name: "anonymous refused", Method: "POST", Path: "/api/admin/topics",
				Body: map[string]any{"lesson": w.lesson, "title": "x", "topicable": richClass, "html": "x"}, Status: 401},
			{Name: "other tenant's token refused", As: "other-admin", Method: "POST", Path: "/api/admin/topics",
				Body: map[string]any{"lesson": w.lesson, "title": "x", "topicable": richClass, "html": "x"}, Status: 401},
			{Name: "unknown lesson", As: "admin", Method: "POST", Path: "/api/admin/topics",
				Body: map[string]any{"lesson": 999999, "title": "x", "topicable": richClass, "html": "x"}, Status: 404},
			{Name: "required fields", As: "admin", Method: "POST", Path: "/api/admin/topics", Body: map[string]any{"summary": "x"},
				Status: 422, JSON: map[string]any{"errors.lesson": apitest.Present, "errors.title": apitest.Present, "errors.topicable": apitest.Present}},
			{Name: "unknown class", As: "admin", Method: "POST", Path: "/api/admin/topics",
				Body: map[string]any{"lesson": w.lesson, "title": "x", "topicable": `App\Nope`}, Status: 422,
				JSON: map[string]any{"errors.topicable": apitest.Present}},
			{Name: "bad types", As: "admin", Method: "POST", Path: "/api/admin/topics",
				Body:   map[string]any{"lesson": "abc", "title": "x", "topicable": richClass, "html": "x", "active": "maybe"},
				Status: 422, JSON: map[string]any{"errors.lesson": apitest.Present, "errors.active": apitest.Present}},
			{Name: "content required", As: "admin", Method: "POST", Path: "/api/admin/topics",
				Body: map[string]any{"lesson": w.lesson, "title": "x", "topicable": richClass}, Status: 422,
				JSON: map[string]any{"errors.html": apitest.Present}},
			{Name: "malformed JSON", As: "admin", Method: "POST", Path: "/api/admin/topics", Body: []byte(`{"lesson":`),
				Headers: map[string]string{"Content-Type": "application/json"}, Status: 400},
			{Name: "unsupported body", As: "admin", Method: "POST", Path: "/api/admin/topics", Body: []byte(`x`),
				Headers: map[string]string{"Content-Type": "text/plain"}, Status: 415},
		})
		if n := env.Count(t, `SELECT COUNT(*) FROM topics`); n != 3 {
			t.Errorf("%d topics stored, want the 3 created", n)
		}
	})
}

func TestCreateFiles(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		w := newWorld(t, env)
		res := createPDF(t, w, w.tutor, w.lesson)
		if res.String("data.kind") != "pdf" || res.String("data.topicable.content_type") != "application/pdf" ||
			res.Number("data.topicable.size") != float64(len(pdfData)) || res.String("data.topicable.name") != "notes.pdf" {
			t.Errorf("pdf topic: %s", res.Body)
		}
		if res.Get("data.topicable.path") != nil {
			t.Errorf("the blob key is shown: %s", res.Body)
		}
		got := fetch(t, env, res.String("data.topicable.url"), nil)
		if got.Status != 200 || !bytes.Equal(got.Body, pdfData) || got.Header.Get("Content-Type") != "application/pdf" ||
			!strings.HasPrefix(got.Header.Get("Content-Disposition"), "inline") {
			t.Errorf("serving the pdf: %d %v", got.Status, got.Header)
		}

		// The generic field name value and a video site URL.
		body, ct := multipartBody(t, text("lesson", id(w.lesson)), text("title", "Pic"), text("topicable", imageClass),
			file("value", "pic.png", pngData))
		res = send(t, env, 201, "POST", "/api/admin/topics", w.admin, body, ct)
		if res.String("data.topicable.content_type") != "image/png" {
			t.Errorf("image via value: %s", res.Body)
		}
		res = send(t, env, 201, "POST", "/api/admin/topics", w.admin, map[string]any{"lesson": w.lesson, "title": "Clip",
			"topicable": videoClass, "videoSiteUrl": "https://video.example/watch?v=1"}, "")
		if res.String("data.topicable.url") != "https://video.example/watch?v=1" || res.String("data.topicable.processing") != "ready" {
			t.Errorf("embedded video: %s", res.Body)
		}
		body, ct = multipartBody(t, text("lesson", id(w.lesson)), text("title", "Movie"), text("topicable", videoClass),
			file("file", "movie.mp4", mp4Data))
		res = send(t, env, 201, "POST", "/api/admin/topics", w.admin, body, ct)
		if res.String("data.topicable.processing") != "queued" || res.String("data.topicable.content_type") != "video/mp4" {
			t.Errorf("uploaded video: %s", res.Body)
		}
		stored := len(blobKeys(t, env, ""))
		topics := env.Count(t, `SELECT COUNT(*) FROM topics`)

		// Refusals store nothing.
		refuseAs := func(u *apitest.User, name string, status int, parts ...part) {
			t.Helper()
			body, ct := multipartBody(t, parts...)
			res := send(t, env, status, "POST", "/api/admin/topics", u, body, ct)
			if res.String("message") == "" {
				t.Errorf("%s: no message: %s", name, res.Body)
			}
			if n := len(blobKeys(t, env, "")); n != stored {
				t.Errorf("%s: %d files stored, want %d", name, n, stored)
			}
			if n := env.Count(t, `SELECT COUNT(*) FROM topics`); n != topics {
				t.Errorf("%s: %d topics, want %d", name, n, topics)
			}
		}
		refuse := func(name string, status int, parts ...part) {
			t.Helper()
			refuseAs(w.admin, name, status, parts...)
		}
		base := func(class string) []part {
			return []part{text("lesson", id(w.lesson)), text("title", "x"), text("topicable", class)}
		}
		refuse("png content named .pdf", 422, append(base(pdfClass), file("file", "fake.pdf", pngData))...)
		refuse("exe named .png", 422, append(base(imageClass), file("file", "a.png", []byte("MZ\x90\x00binary")))...)
		refuse("wrong extension", 422, append(base(pdfClass), file("file", "notes.docx", pdfData))...)
		refuse("svg with script", 422, append(base(imageClass), file("file", "a.svg",
			[]byte(`<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>`)))...)
		refuse("no file", 422, base(pdfClass)...)
		refuse("unknown lesson", 404, text("lesson", "999999"), text("title", "x"), text("topicable", pdfClass),
			file("file", "notes.pdf", pdfData))
		refuseAs(w.tutor, "lesson of a course the tutor does not author", 403, text("lesson", id(w.foreignLesson)), text("title", "x"),
			text("topicable", pdfClass), file("file", "notes.pdf", pdfData))

		// An oversized image is refused while it streams in.
		reader, ct := bigUpload(map[string]string{"lesson": id(w.lesson), "title": "Big", "topicable": imageClass},
			"file", "big.png", 10<<20+1)
		res = send(t, env, 413, "POST", "/api/admin/topics", w.admin, reader, ct)
		if !strings.Contains(res.String("message"), "10 MiB") {
			t.Errorf("oversized: %s", res.Body)
		}
		if n := len(blobKeys(t, env, "")); n != stored {
			t.Errorf("oversized: %d files stored, want %d", n, stored)
		}
		// At the cap it is taken (a PNG signature, then zeros).
		reader, ct = bigUpload(map[string]string{"lesson": id(w.lesson), "title": "Big", "topicable": imageClass},
			"file", "big.png", 10<<20)
		send(t, env, 201, "POST", "/api/admin/topics", w.admin, reader, ct)
	})
}

func TestReadAndList(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		w := newWorld(t, env)
		own := createRich(t, w, w.tutor, w.lesson, "Alpha topic")
		createRich(t, w, w.tutor, w.lesson2, "Beta topic")
		foreign := createRich(t, w, w.admin, w.foreignLesson, "Gamma")
		apitest.Run(t, env, []apitest.Scenario{
			{Name: "admin reads", As: "admin", Method: "GET", Path: "/api/admin/topics/" + id(own), Status: 200,
				JSON: map[string]any{"data.id": own, "data.title": "Alpha topic", "data.topicable.html": "<p>Alpha topic</p>"}},
			{Name: "author reads", As: "tutor", Method: "GET", Path: "/api/admin/topics/" + id(own), Status: 200},
			{Name: "tutor cannot read another's", As: "tutor", Method: "GET", Path: "/api/admin/topics/" + id(foreign), Status: 403},
			{Name: "student cannot read", As: "student", Method: "GET", Path: "/api/admin/topics/" + id(own), Status: 403},
			{Name: "unknown id", As: "admin", Method: "GET", Path: "/api/admin/topics/999999", Status: 404},
			{Name: "admin lists all", As: "admin", Method: "GET", Path: "/api/admin/topics", Status: 200,
				JSON: map[string]any{"meta.total": 3, "data.0.kind": "richtext"}},
			{Name: "tutor lists own courses", As: "tutor", Method: "GET", Path: "/api/admin/topics", Status: 200,
				JSON: map[string]any{"meta.total": 2}},
			{Name: "filter by lesson", As: "admin", Method: "GET", Path: "/api/admin/topics?lesson_id=" + id(w.lesson2), Status: 200,
				JSON: map[string]any{"meta.total": 1, "data.0.title": "Beta topic"}},
			{Name: "filter by course", As: "admin", Method: "GET", Path: "/api/admin/topics?course_id=" + id(w.foreignCourse), Status: 200,
				JSON: map[string]any{"meta.total": 1, "data.0.id": foreign}},
			{Name: "filter by title", As: "admin", Method: "GET", Path: "/api/admin/topics?title=TOPIC", Status: 200,
				JSON: map[string]any{"meta.total": 2}},
			{Name: "title filter escapes wildcards", As: "admin", Method: "GET", Path: "/api/admin/topics?title=%25", Status: 200,
				JSON: map[string]any{"meta.total": 0}},
			{Name: "filter by class", As: "admin", Method: "GET", Path: "/api/admin/topics?topicable_type=" + pdfClass, Status: 200,
				JSON: map[string]any{"meta.total": 0}},
			{Name: "pages", As: "admin", Method: "GET", Path: "/api/admin/topics?per_page=2&page=2", Status: 200,
				JSON: map[string]any{"meta.total": 3, "meta.last_page": 2, "meta.current_page": 2}},
			{Name: "student cannot list", As: "student", Method: "GET", Path: "/api/admin/topics", Status: 403},
			{Name: "types", As: "tutor", Method: "GET", Path: "/api/admin/topics/types", Status: 200,
				JSON: map[string]any{"data.0.class": richClass, "data.0.kind": "richtext", "data.1.kind": "pdf", "data.1.extensions.0": ".pdf"}},
			{Name: "student cannot list types", As: "student", Method: "GET", Path: "/api/admin/topics/types", Status: 403},
			{Name: "create form", As: "tutor", Method: "GET", Path: "/api/admin/topics/create", Status: 200,
				JSON: map[string]any{"data.defaults.active": true, "data.types.0.class": richClass}},
			{Name: "student gets no create form", As: "student", Method: "GET", Path: "/api/admin/topics/create", Status: 403},
			{Name: "edit form", As: "tutor", Method: "GET", Path: "/api/admin/topics/" + id(own) + "/edit", Status: 200,
				JSON: map[string]any{"data.topic.id": own, "data.types.0.class": richClass}},
			{Name: "no edit form of another's topic", As: "tutor", Method: "GET", Path: "/api/admin/topics/" + id(foreign) + "/edit", Status: 403},
			{Name: "anonymous", Method: "GET", Path: "/api/admin/topics", Status: 401},
		})
	})
}

// TestForeignTenantIDs checks that ids of another tenant's topics are
// unknown here, whoever asks.
func TestForeignTenantIDs(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		w := newWorld(t, env)
		createRich(t, w, w.admin, w.lesson, "Here")
		// The other tenant gets more topics, so it has ids this one lacks.
		otherAdmin := env.As("other-admin")
		otherLesson := otherTenantLesson(t, env)
		var last int64
		for range 3 {
			last = apitest.Must(env.Client("other.test", otherAdmin.Token).PostAdminTopics(t.Context(), client.PostAdminTopicsBody{
				Lesson: otherLesson, Title: "There", Topicable: richClass, HTML: client.Ptr("x")}))(t).ID
		}
		for _, path := range []string{"/api/admin/topics/" + id(last), "/api/admin/topics/" + id(last) + "/edit",
			"/api/admin/topics/" + id(last) + "/resources"} {
			send(t, env, 404, "GET", path, w.admin, nil, "")
		}
		send(t, env, 404, "PATCH", "/api/admin/topics/"+id(last), w.admin, map[string]any{"title": "x"}, "")
		send(t, env, 404, "POST", "/api/admin/topics/"+id(last)+"/clone", w.admin, nil, "")
		// The other tenant's lesson id is unknown here too.
		send(t, env, 404, "POST", "/api/admin/topics", w.admin, map[string]any{"lesson": otherLesson, "title": "x",
			"topicable": richClass, "html": "x"}, "")
	})
}

// otherTenantLesson makes lessons on the tenant at other.test (created by
// env.As("other-admin")) until one has an id the default tenant lacks.
func otherTenantLesson(t *testing.T, env *apitest.Env) int64 {
	t.Helper()
	rec, err := env.Server.Registry.ByHost(context.Background(), "other.test")
	if err != nil {
		t.Fatal(err)
	}
	tn, release := env.OpenTenant(rec)
	defer release()
	ctx := context.Background()
	now := env.Clock.Now()
	var course, lesson int64
	if err := tn.DB.QueryRowContext(ctx, `INSERT INTO courses (title, created_at, updated_at) VALUES ('Other', $1, $1)
		RETURNING id`, now).Scan(&course); err != nil {
		t.Fatal(err)
	}
	for range 10 {
		if err := tn.DB.QueryRowContext(ctx, `INSERT INTO lessons (course_id, title, created_at, updated_at)
			VALUES ($1, 'L', $2, $2) RETURNING id`, course, now).Scan(&lesson); err != nil {
			t.Fatal(err)
		}
	}
	return lesson
}
