package notify_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lms-platform/lms/client"
	"github.com/lms-platform/lms/internal/apitest"
	"github.com/lms-platform/lms/internal/apperr"
	"github.com/lms-platform/lms/internal/events"
	"github.com/lms-platform/lms/internal/notify"
	"github.com/lms-platform/lms/internal/sqldb"
)

// Every event whose row in the Events table names a channel has a default,
// and each renders for its event with every part filled.
func TestDefaultTemplatesRender(t *testing.T) {
	want := map[string][]string{
		events.AccountBlocked: {"email/user"}, events.AccountConfirmed: {"email/user"},
		events.AccountDeleted: {"email/user"}, events.AccountDeletionRequested: {"email/user"},
		events.AccountMustBeEnableByAdmin: {"email/user", "email/admins"}, events.AccountRegistered: {"email/user"},
		events.ForgotPassword: {"email/user"}, events.PasswordChanged: {"email/user"},
		events.UserAddedToGroup: {"email/user"}, events.UserRemovedFromGroup: {"email/user"},
		events.CourseFinished: {"email/user", "pdf/user"},
	}
	got := map[string][]string{}
	for _, s := range notify.Slots() {
		got[s.Event] = append(got[s.Event], s.Channel+"/"+s.Recipient)
		tpl, ok := notify.Default(s)
		if !ok || !tpl.Enabled || tpl.Custom {
			t.Fatalf("%s: default %+v", s, tpl)
		}
		d := notify.Sample(s.Event)
		d.User.Name = `Zoë <b>"Ż"</b> 王`
		r, err := notify.Render(tpl, d)
		if err != nil {
			t.Fatalf("%s: %v", s, err)
		}
		if r.Subject == "" || strings.Contains(r.Subject, "\n") || r.Text == "" {
			t.Errorf("%s: rendered %+v", s, r)
		}
		if s.Channel == notify.Email && r.HTML == "" {
			t.Errorf("%s: no HTML part", s)
		}
		if strings.Contains(r.HTML, "<b>") {
			t.Errorf("%s: the HTML part prints a value unescaped: %s", s, r.HTML)
		}
		if err := notify.Check(tpl); err != nil {
			t.Errorf("%s: the default fails its own check: %v", s, err)
		}
	}
	for event, slots := range want {
		if strings.Join(got[event], " ") != strings.Join(slots, " ") {
			t.Errorf("%s has templates %v, want %v", event, got[event], slots)
		}
	}
	if len(got) != len(want) {
		t.Errorf("templates exist for %d events, want %d: %v", len(got), len(want), got)
	}
}

// A template that cannot render is Invalid and names the part and the
// problem; none of them runs away with time or memory.
func TestTemplateChecks(t *testing.T) {
	base := notify.Template{Slot: notify.Slot{Event: events.PasswordChanged, Channel: notify.Email, Recipient: notify.ToUser},
		Subject: "Hi", Text: "Text", HTML: "<p>x</p>", Enabled: true}
	cases := []struct {
		name, field, want string
		edit              func(*notify.Template)
	}{
		{"unknown field", "text", "Nope", func(tp *notify.Template) { tp.Text = "{{.User.Nope}}" }},
		{"parse error", "subject", "unclosed action", func(tp *notify.Template) { tp.Subject = "{{.User.Name" }},
		{"range over a number", "html", "range over a number", func(tp *notify.Template) { tp.HTML = "{{range 1000000000}}{{end}}" }},
		{"define", "text", "define", func(tp *notify.Template) { tp.Text = `{{define "x"}}{{template "x"}}{{end}}` }},
		{"template call", "text", "template calls", func(tp *notify.Template) { tp.Text = `{{template "text"}}` }},
		{"huge printf", "text", "printf widths", func(tp *notify.Template) { tp.Text = `{{printf "%0999999999d" 1}}` }},
		{"output cap", "text", "more than 256 KiB", func(tp *notify.Template) {
			tp.Text = strings.Repeat(`{{printf "%999s" ""}}`, 300)
		}},
		{"empty subject", "subject", "required", func(tp *notify.Template) { tp.Subject = " " }},
		{"no such slot", "event", "No template", func(tp *notify.Template) { tp.Event = events.Login }},
		{"html in a pdf", "html", "no HTML part", func(tp *notify.Template) { tp.Event, tp.Channel = events.CourseFinished, notify.Pdf }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tpl := base
			c.edit(&tpl)
			err := notify.Check(tpl)
			e := apperr.As(err)
			if e == nil || e.Kind != apperr.Invalid {
				t.Fatalf("Check = %v, want Invalid", err)
			}
			if msgs := e.Fields[c.field]; len(msgs) == 0 || !strings.Contains(msgs[0], c.want) {
				t.Errorf("errors %v, want %q under %s", e.Fields, c.want, c.field)
			}
		})
	}
}

func TestMessageTemplateRoutes(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		ctx := t.Context()
		admin := env.ClientAs("admin")
		list := apitest.Must(admin.GetAdminMessageTemplates(ctx))(t)
		if len(list) != len(notify.Slots()) || list[0].Custom {
			t.Fatalf("list: %+v", list)
		}
		_, err := env.ClientAs("student").GetAdminMessageTemplates(ctx)
		apitest.Refused(t, err, 403)

		slot := func(b client.CreateTemplateInputBody) client.CreateTemplateInputBody {
			b.Event, b.Channel, b.Recipient = "ForgotPassword", "email", "user"
			return b
		}
		_, err = admin.PostAdminMessageTemplates(ctx, slot(client.CreateTemplateInputBody{Subject: "Reset", Text: "{{.User.Password}}"}))
		if bad := apitest.Refused(t, err, 422); len(bad.Errors["text"]) == 0 || !strings.Contains(bad.Errors["text"][0], "Password") {
			t.Errorf("422 does not name the problem: %v", bad)
		}
		created := apitest.Must(admin.PostAdminMessageTemplates(ctx, slot(client.CreateTemplateInputBody{
			Subject: "Your {{.Platform.Name}} reset", Text: "Token {{.Token}} for {{.User.Email}}",
			HTML: client.Ptr("<p>Token <b>{{.Token}}</b></p>")})))(t)
		id := created.ID
		_, err = admin.PostAdminMessageTemplates(ctx, slot(client.CreateTemplateInputBody{Subject: "x", Text: "y"}))
		apitest.Refused(t, err, 409)

		previewSlot := client.PreviewInputBody{Event: "ForgotPassword", Channel: "email", Recipient: "user"}
		preview := apitest.Must(admin.PostAdminMessageTemplatesPreview(ctx, previewSlot))(t)
		if preview.Subject != "Your Example School reset" || !strings.Contains(preview.Text, notify.Sample("").Token) {
			t.Errorf("preview: %+v", preview)
		}
		withHTML := previewSlot
		withHTML.HTML = client.Ptr("<a href=\"{{.Link}}\">{{.User.Name}}</a>")
		preview = apitest.Must(admin.PostAdminMessageTemplatesPreview(ctx, withHTML))(t)
		if preview.HTML != `<a href="https://school.example.com/link?token=sample">Zofia Żółkiewska</a>` {
			t.Errorf("preview html: %+v", preview)
		}

		// The tenant's ForgotPassword template replaces the default mail.
		student := env.NewUser("student")
		apitest.OK(t, env.ClientAs("anonymous").PostAuthPasswordForgot(ctx, client.EmailInputBody{Email: student.Email}))
		env.DeliverEvents()
		m := lastMailTo(t, env, student.Email)
		if !strings.HasPrefix(m.Subject, "Your ") || !strings.HasSuffix(m.Subject, " reset") {
			t.Errorf("subject %q", m.Subject)
		}
		if !strings.Contains(m.Body, "Token ") || !strings.Contains(m.HTML, "<b>") || len(strings.Fields(m.Body)[1]) != 32 {
			t.Errorf("custom reset mail: %q %q", m.Body, m.HTML)
		}

		_, err = admin.PutAdminMessageTemplatesID(ctx, id, client.TemplateBody{Subject: "{{", Text: "x"})
		apitest.Refused(t, err, 422)
		upd := apitest.Must(admin.PutAdminMessageTemplatesID(ctx, id, client.TemplateBody{Subject: "Off", Text: "x",
			Enabled: client.Ptr(false)}))(t)
		if upd.Enabled {
			t.Errorf("update: %+v", upd)
		}
		restored := apitest.Must(admin.PostAdminMessageTemplatesIDRestoreDefault(ctx, id))(t)
		def, _ := notify.Default(notify.Slot{Event: "ForgotPassword", Channel: "email", Recipient: "user"})
		if restored.Text != def.Text || !restored.Enabled || restored.ID != id {
			t.Errorf("restore: %+v", restored)
		}
		if deleted := apitest.Must(admin.DeleteAdminMessageTemplatesID(ctx, id))(t); deleted.Custom {
			t.Errorf("delete: %+v", deleted)
		}
		_, err = admin.GetAdminMessageTemplatesID(ctx, id)
		apitest.Refused(t, err, 404)
		// Another tenant's admin sees nothing of this tenant's templates.
		_, err = env.Client("", env.As("other-admin").Token).GetAdminMessageTemplates(ctx)
		apitest.Refused(t, err, 401)
	})
}

// A switched-off slot sends nothing; the others still go out.
func TestDisabledTemplateSendsNothing(t *testing.T) {
	env := apitest.New(t, "sqlite", apitest.Options{})
	apitest.Must(env.ClientAs("admin").PostAdminMessageTemplates(t.Context(), client.CreateTemplateInputBody{Event: "PasswordChanged",
		Channel: "email", Recipient: "user", Subject: "x", Text: "y", Enabled: client.Ptr(false)}))(t)
	student := env.NewUser("student")
	emit(t, env, events.Event{Name: events.PasswordChanged, UserID: student.ID})
	emit(t, env, events.Event{Name: events.AccountBlocked, UserID: student.ID})
	env.DeliverEvents()
	m := lastMailTo(t, env, student.Email)
	if !strings.Contains(m.Subject, "blocked") {
		t.Errorf("last mail %q", m.Subject)
	}
	for _, m := range env.SMTP.Messages() {
		if m.Subject == "x" || strings.Contains(m.Subject, "password was changed") {
			t.Errorf("the switched-off template sent %q", m.Subject)
		}
	}
}

// An e-mail of each kind reaches the SMTP server with its text and HTML
// parts, recorded in the mail log.
func TestEveryMailArrives(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		admin := env.As("admin")
		student := env.NewUser("student")
		tenant, release := env.OpenTenant(env.Tenant)
		defer release()
		ctx := context.Background()
		courseID := apitest.Must(env.UserClient(admin).PostAdminCourses(ctx, client.CourseBody{Title: "Statystyka 统计"}))(t).ID
		if _, err := tenant.DB.ExecContext(ctx, `UPDATE users SET email_verified_at = NULL WHERE id = $1`, student.ID); err != nil {
			t.Fatal(err)
		}
		group := map[string]any{"group_id": 9, "group_name": "Klasa 2B"}
		kinds := []struct {
			ev      events.Event
			to      string
			subject string
			body    string
		}{
			{events.Event{Name: events.AccountBlocked, UserID: student.ID}, student.Email, "has been blocked", student.Email},
			{events.Event{Name: events.AccountConfirmed, UserID: student.ID}, student.Email, "is confirmed", "http://"},
			{events.Event{Name: events.AccountMustBeEnableByAdmin, UserID: student.ID}, student.Email, "awaits approval", "administrator must enable"},
			{events.Event{Name: events.AccountMustBeEnableByAdmin, UserID: student.ID}, admin.Email, "awaits your approval", student.Email},
			{events.Event{Name: events.AccountRegistered, UserID: student.ID}, student.Email, "Verify your e-mail", "/api/auth/email/verify/"},
			{events.Event{Name: events.ForgotPassword, UserID: student.ID}, student.Email, "Reset your password", "token="},
			{events.Event{Name: events.PasswordChanged, UserID: student.ID}, student.Email, "password was changed", "reset your password"},
			{events.Event{Name: events.UserAddedToGroup, UserID: student.ID, Payload: group}, student.Email, "joined the group Klasa 2B", "member"},
			{events.Event{Name: events.UserRemovedFromGroup, UserID: student.ID, Payload: group}, student.Email, "left the group Klasa 2B", "no longer"},
			{events.Event{Name: events.CourseFinished, UserID: student.ID, Payload: map[string]any{"course_id": courseID}},
				student.Email, "you finished Statystyka 统计", "/courses/" + strconv.FormatInt(courseID, 10)},
			{events.Event{Name: events.AccountDeleted, UserID: 999999, Payload: map[string]any{"email": "gone@school.test", "name": "Gone"}},
				"gone@school.test", "has been deleted", "Hello Gone"},
		}
		for _, k := range kinds {
			emit(t, env, k.ev)
		}
		env.DeliverEvents()
		// AccountDeletionRequested is mailed by its route, with the link.
		apitest.OK(t, env.UserClient(student).PostProfileDeleteInit(ctx))
		// Each event is delivered on its own, so the mails arrive in any
		// order and some events send two (AccountMustBeEnableByAdmin, to
		// the learner and the admin): wait for each expected mail, not
		// for a count.
		missing := func() []string {
			var out []string
			for _, k := range kinds {
				if !hasMail(env, k.to, k.subject, k.body) {
					out = append(out, fmt.Sprintf("%s: no mail to %s with %q and %q", k.ev.Name, k.to, k.subject, k.body))
				}
			}
			if !hasMail(env, student.Email, "Confirm the deletion", "/api/profile/delete/") {
				out = append(out, "AccountDeletionRequested: no mail")
			}
			return out
		}
		for deadline := time.Now().Add(10 * time.Second); len(missing()) > 0 && time.Now().Before(deadline); {
			time.Sleep(10 * time.Millisecond)
		}
		for _, m := range missing() {
			t.Error(m)
		}
		var html string
		if err := tenant.DB.QueryRowContext(ctx, `SELECT html FROM mail_log WHERE subject LIKE $1`, "%has been blocked%").Scan(&html); err != nil ||
			!strings.Contains(html, "<!DOCTYPE html>") {
			t.Errorf("mail log html %q: %v", html, err)
		}
	})
}

func hasMail(env *apitest.Env, to, subject, body string) bool {
	for _, m := range env.SMTP.Messages() {
		if len(m.To) == 1 && m.To[0] == to && strings.Contains(m.Subject, subject) && strings.Contains(m.Body, body) &&
			strings.Contains(m.HTML, "</p>") {
			return true
		}
	}
	return false
}

func lastMailTo(t *testing.T, env *apitest.Env, to string) smtpMail {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		msgs := env.SMTP.Messages()
		for i := len(msgs) - 1; i >= 0; i-- {
			if len(msgs[i].To) == 1 && msgs[i].To[0] == to {
				return smtpMail{Subject: msgs[i].Subject, Body: msgs[i].Body, HTML: msgs[i].HTML}
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("no mail to %s", to)
	return smtpMail{}
}

type smtpMail struct{ Subject, Body, HTML string }

func emit(t *testing.T, env *apitest.Env, ev events.Event) {
	t.Helper()
	tenant, release := env.OpenTenant(env.Tenant)
	defer release()
	if err := tenant.Tx(context.Background(), func(tx *sqldb.Tx) error {
		return events.Emit(context.Background(), tx, env.Clock.Now(), ev)
	}); err != nil {
		t.Fatal(err)
	}
}
