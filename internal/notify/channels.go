package notify

import (
	"context"
	"fmt"
	"html"
	"slices"
	"strconv"
	"time"

	"github.com/lms-platform/lms/internal/clock"
	"github.com/lms-platform/lms/internal/events"
	"github.com/lms-platform/lms/internal/platform"
	"github.com/lms-platform/lms/internal/sqldb"
)

// Channels sends events on their e-mail templates. Capabilities whose
// mail carries a secret of their own (the reset token, the verification
// and deletion links) render through Mail; Listener sends the others.
//
// Retries: a failed send fails the listener, so the outbox delivers the
// event again (events.Dispatcher: up to ten attempts, every poll), and the
// mail log makes a mail go out once per event, recipient and subject. The
// request that caused the event has long been answered by then.
type Channels struct {
	Templates *Templates
	Mailer    Mailer // nil: mail is only recorded
	Clock     clock.Clock
	// The people and courses templates name belong to accounts and
	// courses, which import this package; they hand in these readers.
	Person      func(ctx context.Context, q sqldb.Querier, id int64) (TemplateUser, bool, error)
	Admins      func(ctx context.Context, q sqldb.Querier) ([]TemplateUser, error)
	CourseTitle func(ctx context.Context, q sqldb.Querier, id int64) (string, error)
	// SiteURL is the address of the tenant's web frontend.
	SiteURL func(t *platform.Tenant) string
}

// owned are the events whose mail another capability sends through Mail,
// as only it knows the secret the mail carries.
var owned = map[string]bool{
	events.ForgotPassword:           true,
	events.AccountRegistered:        true,
	events.AccountDeletionRequested: true,
}

// MailedEvents are the events Listener mails: those with an e-mail
// template that no other capability sends.
func MailedEvents() []string {
	var out []string
	for _, s := range Slots() {
		if s.Channel == Email && !owned[s.Event] && !slices.Contains(out, s.Event) {
			out = append(out, s.Event)
		}
	}
	return out
}

// Listener mails ev on each of its e-mail templates that has no other
// sender.
func (c *Channels) Listener(ctx context.Context, t *platform.Tenant, ev events.Stored) error {
	if owned[ev.Name] {
		return nil
	}
	var slots []Slot
	for _, s := range Slots() {
		if s.Event == ev.Name && s.Channel == Email {
			slots = append(slots, s)
		}
	}
	if len(slots) == 0 {
		return nil
	}
	d, ok, err := c.Data(ctx, t, ev)
	if err != nil || !ok {
		return err
	}
	for _, s := range slots {
		recipients := []TemplateUser{d.User}
		if s.Recipient == ToAdmins {
			if recipients, err = c.Admins(ctx, t.DB); err != nil {
				return err
			}
		}
		for _, p := range recipients {
			if err := c.Mail(ctx, t, ev.ID, s, p.Email, d); err != nil {
				return err
			}
		}
	}
	return nil
}

// Data gathers what templates may print about ev. ok is false when the
// event's user is gone and the event kept no address to write to.
func (c *Channels) Data(ctx context.Context, t *platform.Tenant, ev events.Stored) (Data, bool, error) {
	d := Data{Event: ev.Name, Date: ev.CreatedAt.UTC(), Platform: TemplateSite{Name: t.Name, URL: c.SiteURL(t)}}
	if ev.UserID != 0 {
		p, found, err := c.Person(ctx, t.DB, ev.UserID)
		if err != nil {
			return Data{}, false, err
		}
		d.User = p
		if !found {
			// AccountDeleted keeps the address in its payload.
			d.User = TemplateUser{ID: ev.UserID, Email: str(ev.Payload, "email"), Name: str(ev.Payload, "name"),
				FirstName: str(ev.Payload, "first_name"), LastName: str(ev.Payload, "last_name")}
		}
	}
	if d.User.Email == "" {
		return Data{}, false, nil
	}
	if id := num(ev.Payload, "group_id"); id != 0 {
		d.Group = TemplateItem{ID: id, Title: str(ev.Payload, "group_name")}
	}
	if id := num(ev.Payload, "course_id"); id != 0 {
		title, err := c.CourseTitle(ctx, t.DB, id)
		if err != nil {
			return Data{}, false, err
		}
		d.Course = TemplateItem{ID: id, Title: title}
		d.Link = d.Platform.URL + "/courses/" + strconv.FormatInt(id, 10)
	}
	if id := num(ev.Payload, "topic_id"); id != 0 {
		d.Topic = TemplateItem{ID: id}
	}
	return d, true, nil
}

// Mail renders the slot's template with d and delivers it to one address,
// once per event (eventID 0: a mail of no event, sent each time). A slot
// the tenant switched off sends nothing.
func (c *Channels) Mail(ctx context.Context, t *platform.Tenant, eventID int64, s Slot, to string, d Data) error {
	tpl, err := c.Templates.Effective(ctx, t.DB, s)
	if err != nil || !tpl.Enabled {
		return err
	}
	r, err := Render(tpl, d)
	if err != nil {
		return fmt.Errorf("notify: render %s: %w", s, err)
	}
	return Deliver(ctx, t, c.Mailer, c.now(), eventID, Message{To: to, Subject: r.Subject, Text: r.Text,
		HTML: htmlDocument(r.Subject, r.HTML)})
}

func (c *Channels) now() time.Time { return c.Clock.Now() }

// htmlDocument wraps a template's HTML part in a page; mail readers render
// a bare fragment too, but a title and charset make every one agree.
func htmlDocument(title, body string) string {
	if body == "" {
		return ""
	}
	return "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>" + html.EscapeString(title) +
		"</title></head>\n<body style=\"font-family: sans-serif; line-height: 1.5\">\n" + body + "\n</body></html>\n"
}

func str(m map[string]any, key string) string {
	s, _ := m[key].(string)
	return s
}

// num reads an id from a payload decoded from JSON (a float64).
func num(m map[string]any, key string) int64 {
	switch v := m[key].(type) {
	case float64:
		return int64(v)
	case int64:
		return v
	}
	return 0
}
