package certificates_test

import (
	"bytes"
	"context"
	"os/exec"
	"strings"
	"testing"

	"github.com/lms-platform/lms/client"
	"github.com/lms-platform/lms/internal/apitest"
	"github.com/lms-platform/lms/internal/config"
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
		ctx := t.Context()
		admin := env.ClientAs("admin")
		studentUser := env.NewUser("student")
		student, other := env.UserClient(studentUser), env.UserClient(env.NewUser("student"))
		apitest.Must(admin.PatchAdminUsersID(ctx, studentUser.ID, client.UserChangeBody{FirstName: client.Ptr("Zofia 王"),
			LastName: client.Ptr("Żółkiewska 小明")}))(t)
		courseID := apitest.Must(admin.PostAdminCourses(ctx, client.CourseBody{Title: "Statystyka 统计学"}))(t).ID

		finished := emit(t, env, events.Event{Name: events.CourseFinished, UserID: studentUser.ID,
			Payload: map[string]any{"course_id": courseID}})
		env.DeliverEvents()

		mine := func(c *client.Client) *client.Page[client.Certificate] {
			t.Helper()
			return apitest.Must(c.GetCertificates(ctx, client.GetCertificatesParams{}))(t)
		}
		list := mine(student)
		if list.Meta.Total != 1 || list.Items[0].CourseID != courseID || list.Items[0].CourseTitle != "Statystyka 统计学" {
			t.Fatalf("certificates: %+v", list)
		}
		cert := list.Items[0]
		text := pdfText(t, download(t, env, cert.URL))
		for _, want := range []string{"Certificate of completion", "Zofia 王 Żółkiewska 小明", "Statystyka 统计学"} {
			if !strings.Contains(text, want) {
				t.Errorf("the certificate's text lacks %q:\n%s", want, text)
			}
		}
		if n := mine(other).Meta.Total; n != 0 {
			t.Errorf("another learner sees %v certificates", n)
		}

		// A redelivered event makes nothing new.
		redeliver(t, env, finished)
		env.DeliverEvents()
		if again := mine(student); len(again.Items) == 0 || !again.Items[0].UpdatedAt.Equal(cert.UpdatedAt) {
			t.Errorf("redelivery made the certificate again: %+v", again)
		}

		// Admins list and regenerate from the current template.
		_, err := student.GetAdminCertificates(ctx, client.GetAdminCertificatesParams{})
		apitest.Refused(t, err, 403)
		all := apitest.Must(admin.GetAdminCertificates(ctx, client.GetAdminCertificatesParams{UserID: &studentUser.ID}))(t)
		if len(all.Items) == 0 {
			t.Fatalf("admin list: %+v", all)
		}
		id := all.Items[0].ID
		apitest.Must(admin.PostAdminMessageTemplates(ctx, client.CreateTemplateInputBody{Event: "CourseFinished",
			Channel: "pdf", Recipient: "user", Subject: "Dyplom ukończenia",
			Text: "{{.User.LastName}}\n{{.Course.Title}}\n{{.Platform.Name}}"}))(t)
		_, err = student.PostAdminCertificatesIDRegenerate(ctx, id)
		apitest.Refused(t, err, 403)
		regen := apitest.Must(admin.PostAdminCertificatesIDRegenerate(ctx, id))(t)
		if regen.URL == cert.URL {
			t.Errorf("regenerated certificate kept its file: %+v", regen)
		}
		text = pdfText(t, download(t, env, regen.URL))
		if !strings.Contains(text, "Dyplom ukończenia") || !strings.Contains(text, "Żółkiewska 小明") {
			t.Errorf("regenerated text:\n%s", text)
		}
		// Raw: the signed link as a browser follows it.
		if res := env.Do(apitest.Request{Method: "GET", Path: cert.URL}); res.Status != 404 {
			t.Errorf("the replaced PDF is still served: %d", res.Status)
		}
		_, err = env.Client("", env.As("other-admin").Token).GetCertificates(ctx, client.GetCertificatesParams{})
		apitest.Refused(t, err, 401)
	})
}

// The PDF service answers only the internal token. Raw: an internal route
// outside the API, checked by its header.
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

// download fetches a certificate's signed link as a browser does (raw: a
// file, not an API answer).
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

// On a machine without Debian's fonts (the font lookup pointed at an empty
// directory) a certificate with a Polish and a Chinese name is still
// made, in the fonts shipped in the binary.
func TestCertificateWithoutSystemFonts(t *testing.T) {
	for _, backend := range apitest.Backends(t) {
		t.Run(backend, func(t *testing.T) {
			env := apitest.New(t, backend, apitest.Options{Configure: func(c *config.Config) { c.PDFFonts = t.TempDir() }})
			ctx := t.Context()
			admin := env.ClientAs("admin")
			learner := env.NewUser("student")
			apitest.Must(admin.PatchAdminUsersID(ctx, learner.ID, client.UserChangeBody{FirstName: client.Ptr("Łucja"),
				LastName: client.Ptr("Żółć 李娜")}))(t)
			courseID := apitest.Must(admin.PostAdminCourses(ctx, client.CourseBody{Title: "Chemia 化学"}))(t).ID
			emit(t, env, events.Event{Name: events.CourseFinished, UserID: learner.ID, Payload: map[string]any{"course_id": courseID}})
			env.DeliverEvents()
			list := apitest.Must(env.UserClient(learner).GetCertificates(ctx, client.GetCertificatesParams{}))(t)
			if len(list.Items) != 1 {
				t.Fatalf("certificates: %+v", list)
			}
			text := pdfText(t, download(t, env, list.Items[0].URL))
			for _, want := range []string{"Łucja Żółć 李娜", "Chemia 化学"} {
				if !strings.Contains(text, want) {
					t.Errorf("the certificate's text lacks %q:\n%s", want, text)
				}
			}
		})
	}
}
