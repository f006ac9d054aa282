package notify_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

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
		admin := env.As("admin")
		list := env.Call(t, 200, "GET", "/api/admin/message-templates", admin.Token, nil)
		items, _ := list.Get("data").([]any)
		if len(items) != len(notify.Slots()) || list.Get("data.0.custom") != false {
			t.Fatalf("list: %s", list.Body)
		}
		env.Call(t, 403, "GET", "/api/admin/message-templates", env.As("student").Token, nil)

		slot := map[string]any{"event": "ForgotPassword", "channel": "email", "recipient": "user"}
		bad := env.Call(t, 422, "POST", "/api/admin/message-templates", admin.Token, with(slot, map[string]any{
			"subject": "Reset", "text": "{{.User.Password}}"}))
		if msg, _ := bad.Get("errors.text.0").(string); !strings.Contains(msg, "Password") {
			t.Errorf("422 does not name the problem: %s", bad.Body)
		}
		created := env.Call(t, 201, "POST", "/api/admin/message-templates", admin.Token, with(slot, map[string]any{
			"subject": "Your {{.Platform.Name}} reset", "text": "Token {{.Token}} for {{.User.Email}}",
			"html": "<p>Token <b>{{.Token}}</b></p>"}))
		id := created.Number("data.id")
		env.Call(t, 409, "POST", "/api/admin/message-templates", admin.Token, with(slot, map[string]any{"subject": "x", "text": "y"}))

		preview := env.Call(t, 200, "POST", "/api/admin/message-templates/preview", admin.Token, with(slot, map[string]any{}))
		if preview.String("data.subject") != "Your Example School reset" ||
			!strings.Contains(preview.String("data.text"), notify.Sample("").Token) {
			t.Errorf("preview: %s", preview.Body)
		}
		preview = env.Call(t, 200, "POST", "/api/admin/message-templates/preview", admin.Token, with(slot, map[string]any{
			"html": "<a href=\"{{.Link}}\">{{.User.Name}}</a>"}))
		if preview.String("data.html") != `<a href="https://school.example.com/link?token=sample">Zofia Żółkiewska</a>` {
			t.Errorf("preview html: %s", preview.Body)
		}

		// The tenant's ForgotPassword template replaces the default mail.
		student := env.NewUser("student")
		env.Call(t, 200, "POST", "/api/auth/password/forgot", "", map[string]any{"email": student.Email})
		env.DeliverEvents()
		m := lastMailTo(t, env, student.Email)
		if !strings.HasPrefix(m.Subject, "Your ") || !strings.HasSuffix(m.Subject, " reset") {
			t.Errorf("subject %q", m.Subject)
		}
		if !strings.Contains(m.Body, "Token ") || !strings.Contains(m.HTML, "<b>") || len(strings.Fields(m.Body)[1]) != 32 {
			t.Errorf("custom reset mail: %q %q", m.Body, m.HTML)
		}

		path := "/api/admin/message-templates/" + itoa(id)
		env.Call(t, 422, "PUT", path, admin.Token, map[string]any{"subject": "{{", "text": "x"})
		upd := env.Call(t, 200, "PUT", path, admin.Token, map[string]any{"subject": "Off", "text": "x", "enabled": false})
		if upd.Get("data.enabled") != false {
			t.Errorf("update: %s", upd.Body)
		}
		restored := env.Call(t, 200, "POST", path+"/restore-default", admin.Token, nil)
		def, _ := notify.Default(notify.Slot{Event: "ForgotPassword", Channel: "email", Recipient: "user"})
		if restored.String("data.text") != def.Text || restored.Get("data.enabled") != true || restored.Number("data.id") != id {
			t.Errorf("restore: %s", restored.Body)
		}
		deleted := env.Call(t, 200, "DELETE", path, admin.Token, nil)
		if deleted.Get("data.custom") != false {
			t.Errorf("delete: %s", deleted.Body)
		}
		env.Call(t, 404, "GET", path, admin.Token, nil)
		// Another tenant's admin sees nothing of this tenant's templates.
		env.Call(t, 401, "GET", "/api/admin/message-templates", env.As("other-admin").Token, nil)
	})
}

// A switched-off slot sends nothing; the others still go out.
func TestDisabledTemplateSendsNothing(t *testing.T) {
	env := apitest.New(t, "sqlite", apitest.Options{})
	admin := env.As("admin")
	env.Call(t, 201, "POST", "/api/admin/message-templates", admin.Token, map[string]any{"event": "PasswordChanged",
		"channel": "email", "recipient": "user", "subject": "x", "text": "y", "enabled": false})
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
		course := env.Call(t, 201, "POST", "/api/admin/courses", admin.Token, map[string]any{"title": "Statystyka 统计"})
		courseID := int64(course.Number("data.id"))
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
				student.Email, "you finished Statystyka 统计", "/courses/" + itoa(float64(courseID))},
			{events.Event{Name: events.AccountDeleted, UserID: 999999, Payload: map[string]any{"email": "gone@school.test", "name": "Gone"}},
				"gone@school.test", "has been deleted", "Hello Gone"},
		}
		for _, k := range kinds {
			emit(t, env, k.ev)
		}
		env.DeliverEvents()
		// AccountDeletionRequested is mailed by its route, with the link.
		env.Call(t, 200, "POST", "/api/profile/delete/init", student.Token, nil)
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

func with(a, b map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out[k] = v
	}
	return out
}

func itoa(f float64) string { return strconv.FormatInt(int64(f), 10) }
