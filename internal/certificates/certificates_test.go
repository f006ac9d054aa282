package certificates_test

import (
	"bytes"
	"context"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/lms-platform/lms/internal/apitest"
	"github.com/lms-platform/lms/internal/events"
	"github.com/lms-platform/lms/internal/sqldb"
)

// pdfText is the text of a PDF as poppler's pdftotext reads it: what a
// reader searches and copies, so it proves the fonts carry a ToUnicode map.
func pdfText(t *testing.T, pdf []byte) string {
	t.Helper()
	if !bytes.HasPrefix(pdf, []byte("%PDF-")) {
		t.Fatalf("not a PDF: %.40q", pdf)
	}
	cmd := exec.Command("pdftotext", "-q", "-", "-")
	cmd.Stdin = bytes.NewReader(pdf)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("pdftotext (Debian package poppler-utils): %v", err)
	}
	return string(out)
}

func TestCertificateOfFinishedCourse(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		admin := env.As("admin")
		student := env.NewUser("student")
		other := env.NewUser("student")
		env.Call(t, 200, "PATCH", "/api/admin/users/"+strconv.FormatInt(student.ID, 10), admin.Token,
			map[string]any{"first_name": "Zofia 王", "last_name": "Żółkiewska 小明"})
		course := env.Call(t, 201, "POST", "/api/admin/courses", admin.Token, map[string]any{"title": "Statystyka 统计学"})
		courseID := int64(course.Number("data.id"))

		finished := emit(t, env, events.Event{Name: events.CourseFinished, UserID: student.ID,
			Payload: map[string]any{"course_id": courseID}})
		env.DeliverEvents()

		list := env.Call(t, 200, "GET", "/api/certificates", student.Token, nil)
		if list.Number("meta.total") != 1 || list.Number("data.0.course_id") != float64(courseID) ||
			list.String("data.0.course_title") != "Statystyka 统计学" {
			t.Fatalf("certificates: %s", list.Body)
		}
		text := pdfText(t, download(t, env, list.String("data.0.url")))
		for _, want := range []string{"Certificate of completion", "Zofia 王 Żółkiewska 小明", "Statystyka 统计学"} {
			if !strings.Contains(text, want) {
				t.Errorf("the certificate's text lacks %q:\n%s", want, text)
			}
		}
		if n := env.Call(t, 200, "GET", "/api/certificates", other.Token, nil).Number("meta.total"); n != 0 {
			t.Errorf("another learner sees %v certificates", n)
		}

		// A redelivered event makes nothing new.
		first := list.String("data.0.updated_at")
		redeliver(t, env, finished)
		env.DeliverEvents()
		if again := env.Call(t, 200, "GET", "/api/certificates", student.Token, nil); again.String("data.0.updated_at") != first {
			t.Errorf("redelivery made the certificate again: %s", again.Body)
		}

		// Admins list and regenerate from the current template.
		env.Call(t, 403, "GET", "/api/admin/certificates", student.Token, nil)
		all := env.Call(t, 200, "GET", "/api/admin/certificates?user_id="+strconv.FormatInt(student.ID, 10), admin.Token, nil)
		id := strconv.Itoa(int(all.Number("data.0.id")))
		env.Call(t, 201, "POST", "/api/admin/message-templates", admin.Token, map[string]any{"event": "CourseFinished",
			"channel": "pdf", "recipient": "user", "subject": "Dyplom ukończenia",
			"text": "{{.User.LastName}}\n{{.Course.Title}}\n{{.Platform.Name}}"})
		env.Call(t, 403, "POST", "/api/admin/certificates/"+id+"/regenerate", student.Token, nil)
		regen := env.Call(t, 200, "POST", "/api/admin/certificates/"+id+"/regenerate", admin.Token, nil)
		if regen.String("data.url") == list.String("data.0.url") {
			t.Errorf("regenerated certificate kept its file: %s", regen.Body)
		}
		text = pdfText(t, download(t, env, regen.String("data.url")))
		if !strings.Contains(text, "Dyplom ukończenia") || !strings.Contains(text, "Żółkiewska 小明") {
			t.Errorf("regenerated text:\n%s", text)
		}
		if res := env.Do(apitest.Request{Method: "GET", Path: list.String("data.0.url")}); res.Status != 404 {
			t.Errorf("the replaced PDF is still served: %d", res.Status)
		}
		env.Call(t, 401, "GET", "/api/certificates", env.As("other-admin").Token, nil)
	})
}

// The PDF service answers only the internal token.
func TestPDFServiceNeedsInternalToken(t *testing.T) {
	env := apitest.New(t, "sqlite", apitest.Options{})
	doc := map[string]any{"title": "Zaświadczenie", "lines": []string{"Łukasz 李"}}
	if res := env.Do(apitest.Request{Method: "POST", Path: "/pdf/documents", Body: doc}); res.Status != 401 {
		t.Fatalf("without the token: %d %s", res.Status, res.Body)
	}
	if res := env.Do(apitest.Request{Method: "POST", Path: "/pdf/documents", Body: doc, Token: env.As("admin").Token}); res.Status != 401 {
		t.Fatalf("with a user's token: %d", res.Status)
	}
	res := env.Do(apitest.Request{Method: "POST", Path: "/pdf/documents", Body: doc,
		Headers: map[string]string{"X-Internal-Token": env.Server.Config.InternalKey}})
	if res.Status != 200 || res.Header.Get("Content-Type") != "application/pdf" {
		t.Fatalf("with the token: %d %s", res.Status, res.Body)
	}
	if text := pdfText(t, res.Body); !strings.Contains(text, "Zaświadczenie") || !strings.Contains(text, "Łukasz 李") {
		t.Errorf("text:\n%s", text)
	}
	bad := env.Do(apitest.Request{Method: "POST", Path: "/pdf/documents", Body: map[string]any{"title": ""},
		Headers: map[string]string{"X-Internal-Token": env.Server.Config.InternalKey}})
	if bad.Status != 422 {
		t.Errorf("an empty title: %d", bad.Status)
	}
}

func download(t *testing.T, env *apitest.Env, url string) []byte {
	t.Helper()
	res := env.Do(apitest.Request{Method: "GET", Path: url})
	if res.Status != 200 || res.Header.Get("Content-Type") != "application/pdf" {
		t.Fatalf("download %s: %d %s", url, res.Status, res.Header.Get("Content-Type"))
	}
	return res.Body
}

func emit(t *testing.T, env *apitest.Env, ev events.Event) int64 {
	t.Helper()
	tenant, release := env.OpenTenant(env.Tenant)
	defer release()
	ctx := context.Background()
	if err := tenant.Tx(ctx, func(tx *sqldb.Tx) error { return events.Emit(ctx, tx, env.Clock.Now(), ev) }); err != nil {
		t.Fatal(err)
	}
	return env.LastEventID()
}

// redeliver marks an event pending again, as after a crash between its
// listeners and the record of its delivery.
func redeliver(t *testing.T, env *apitest.Env, id int64) {
	t.Helper()
	tenant, release := env.OpenTenant(env.Tenant)
	defer release()
	if err := events.Redeliver(context.Background(), tenant.DB, env.Clock.Now(), id, id); err != nil {
		t.Fatal(err)
	}
}
