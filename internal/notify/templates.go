package notify

import (
	"bytes"
	"errors"
	"fmt"
	htmltemplate "html/template"
	"io"
	"regexp"
	"slices"
	"strings"
	texttemplate "text/template"
	"text/template/parse"
	"time"

	"github.com/lms-platform/lms/internal/apperr"
	"github.com/lms-platform/lms/internal/events"
)

// Channels a template sends an event on (the Events table of the spec).
const (
	Email = "email"
	Pdf   = "pdf"
)

// Recipients of a template: the user the event is about, or the tenant's
// admins (the second e-mail of AccountMustBeEnableByAdmin).
const (
	ToUser   = "user"
	ToAdmins = "admins"
)

// Slot names one template: an event, a channel and who receives it.
type Slot struct {
	Event     string `json:"event" doc:"Event name (GET /api/events)."`
	Channel   string `json:"channel" enum:"email,pdf" doc:"email or pdf."`
	Recipient string `json:"recipient" enum:"user,admins" doc:"user: the user the event is about; admins: every admin of the tenant."`
}

func (s Slot) String() string { return s.Event + "/" + s.Channel + "/" + s.Recipient }

// Template is the text of one slot. Subject and Text are text/template
// sources; HTML is an html/template source, so every value it prints is
// escaped for its place in the page. A pdf template's Subject is the
// document's title and its Text the lines below it; it has no HTML.
type Template struct {
	ID int64 `json:"id" doc:"0 for a built-in default."`
	Slot
	Subject string `json:"subject"`
	Text    string `json:"text"`
	HTML    string `json:"html"`
	// Enabled false switches the slot off: nothing is sent.
	Enabled bool `json:"enabled"`
	// Custom is true for a tenant's own template, false for the default.
	Custom    bool       `json:"custom"`
	CreatedAt *time.Time `json:"created_at,omitempty"`
	UpdatedAt *time.Time `json:"updated_at,omitempty"`
}

// Rendered is a template with the event's values filled in.
type Rendered struct {
	Subject string `json:"subject"`
	Text    string `json:"text"`
	HTML    string `json:"html"`
}

// TemplateUser is a user as templates see it.
type TemplateUser struct {
	ID        int64  `json:"id"`
	Name      string `json:"name"`
	FirstName string `json:"first_name"`
	LastName  string `json:"last_name"`
	Email     string `json:"email"`
}

// TemplateItem is a course, topic or group as templates see it.
type TemplateItem struct {
	ID    int64  `json:"id"`
	Title string `json:"title"`
}

// TemplateSite is the tenant as templates see it.
type TemplateSite struct {
	Name string `json:"name"`
	URL  string `json:"url"`
}

// Data holds the values a template may print: {{.User.Name}},
// {{.Course.Title}}, {{.Date.Format "2 January 2006"}}, {{.Link}}... A
// field that does not exist is an error when the template is saved.
type Data struct {
	Event    string       `json:"event"`
	Date     time.Time    `json:"date" doc:"When the event happened."`
	User     TemplateUser `json:"user" doc:"The user the event is about."`
	Course   TemplateItem `json:"course"`
	Topic    TemplateItem `json:"topic"`
	Group    TemplateItem `json:"group"`
	Platform TemplateSite `json:"platform" doc:"The tenant's name and the address of its web frontend."`
	// Link is the event's action: the verification, reset or deletion
	// link, the certificate or the course.
	Link string `json:"link"`
	// Token is the password reset token (ForgotPassword).
	Token string `json:"token"`
	// Expires is when Link stops working, when it does.
	Expires time.Time `json:"expires"`
}

// Variables lists the names a template may use, for the admin routes.
var Variables = []string{".Event", ".Date", ".User.ID", ".User.Name", ".User.FirstName", ".User.LastName",
	".User.Email", ".Course.ID", ".Course.Title", ".Topic.ID", ".Topic.Title", ".Group.ID", ".Group.Title",
	".Platform.Name", ".Platform.URL", ".Link", ".Token", ".Expires"}

// Limits of a template's source and of what it renders.
const (
	maxSource   = 64 << 10
	maxRendered = 256 << 10
)

// Slots lists every slot that has a default, in the order of the Events
// table.
func Slots() []Slot {
	out := make([]Slot, 0, len(defaults))
	for _, e := range events.Catalog {
		for _, d := range defaults {
			if d.Event == e.Name {
				out = append(out, d.Slot)
			}
		}
	}
	return out
}

// Default returns the built-in template of a slot.
func Default(s Slot) (Template, bool) {
	i := slices.IndexFunc(defaults, func(d Template) bool { return d.Slot == s })
	if i < 0 {
		return Template{}, false
	}
	d := defaults[i]
	d.Enabled = true
	return d, true
}

// Render fills tpl with d. A template that fails to run is Invalid, with
// the problem named under the part's field.
func Render(tpl Template, d Data) (Rendered, error) {
	var out Rendered
	var err error
	if out.Subject, err = runText("subject", tpl.Subject, d); err != nil {
		return Rendered{}, err
	}
	out.Subject = strings.Join(strings.Fields(out.Subject), " ") // a subject is one line
	if out.Text, err = runText("text", tpl.Text, d); err != nil {
		return Rendered{}, err
	}
	if tpl.HTML != "" {
		if out.HTML, err = runHTML(tpl.HTML, d); err != nil {
			return Rendered{}, err
		}
	}
	return out, nil
}

// Check parses every part of tpl and runs it on the slot's sample data, so
// a template that would fail when its event comes is refused when saved.
func Check(tpl Template) error {
	if _, ok := Default(tpl.Slot); !ok {
		return apperr.Field("event", fmt.Sprintf("No template exists for %s.", tpl.Slot))
	}
	if strings.TrimSpace(tpl.Subject) == "" {
		return apperr.Field("subject", "The subject is required.")
	}
	if strings.TrimSpace(tpl.Text) == "" {
		return apperr.Field("text", "The text is required.")
	}
	if tpl.Channel == Pdf && tpl.HTML != "" {
		return apperr.Field("html", "A pdf template has no HTML part: its subject is the title and its text the lines.")
	}
	_, err := Render(tpl, Sample(tpl.Event))
	return err
}

func runText(field, src string, d Data) (string, error) {
	if len(src) > maxSource {
		return "", tooLong(field)
	}
	t, err := texttemplate.New(field).Option("missingkey=error").Funcs(texttemplate.FuncMap(safeFuncs)).Parse(src)
	if err != nil {
		return "", badTemplate(field, err)
	}
	if err := checkTree(t.Tree, len(t.Templates())); err != nil {
		return "", badTemplate(field, err)
	}
	return execute(field, d, t.Execute)
}

func runHTML(src string, d Data) (string, error) {
	const field = "html"
	if len(src) > maxSource {
		return "", tooLong(field)
	}
	t, err := htmltemplate.New(field).Option("missingkey=error").Funcs(htmltemplate.FuncMap(safeFuncs)).Parse(src)
	if err != nil {
		return "", badTemplate(field, err)
	}
	if err := checkTree(t.Tree, len(t.Templates())); err != nil {
		return "", badTemplate(field, err)
	}
	return execute(field, d, t.Execute)
}

func execute(field string, d Data, run func(io.Writer, any) error) (string, error) {
	var b cappedBuffer
	if err := run(&b, d); err != nil {
		if errors.Is(err, errTooLarge) {
			return "", apperr.Field(field, fmt.Sprintf("The %s renders to more than %d KiB.", field, maxRendered>>10))
		}
		return "", badTemplate(field, err)
	}
	return b.String(), nil
}

// checkTree refuses what a template of a message has no use for and could
// only use to stall a worker: other templates defined or called (deep
// recursion), and ranges over a number (a loop of any length that prints
// nothing, so the output cap would not end it).
func checkTree(tree *parse.Tree, templates int) error {
	if templates > 1 {
		return errors.New("define and block are not allowed")
	}
	var walk func(n parse.Node) error
	walk = func(n parse.Node) error {
		switch n := n.(type) {
		case *parse.ListNode:
			if n == nil {
				return nil
			}
			for _, c := range n.Nodes {
				if err := walk(c); err != nil {
					return err
				}
			}
		case *parse.TemplateNode:
			return errors.New("template calls are not allowed")
		case *parse.RangeNode:
			if len(n.Pipe.Cmds) == 1 && len(n.Pipe.Cmds[0].Args) == 1 {
				if _, ok := n.Pipe.Cmds[0].Args[0].(*parse.NumberNode); ok {
					return errors.New("range over a number is not allowed")
				}
			}
			return walkBranch(walk, n.List, n.ElseList)
		case *parse.IfNode:
			return walkBranch(walk, n.List, n.ElseList)
		case *parse.WithNode:
			return walkBranch(walk, n.List, n.ElseList)
		}
		return nil
	}
	return walk(tree.Root)
}

func walkBranch(walk func(parse.Node) error, list, elseList *parse.ListNode) error {
	if list != nil {
		if err := walk(list); err != nil {
			return err
		}
	}
	if elseList != nil {
		return walk(elseList)
	}
	return nil
}

// badTemplate names the part and the problem; the template packages' own
// messages say the line and the field.
func badTemplate(field string, err error) error {
	return apperr.Field(field, fmt.Sprintf("The %s template is invalid: %s", field, err))
}

func tooLong(field string) error {
	return apperr.Field(field, fmt.Sprintf("The %s may have at most %d KiB.", field, maxSource>>10))
}

// safeFuncs replace the builtin printf, whose width and precision could
// make one call build a string of gigabytes before the output cap sees it.
var safeFuncs = map[string]any{
	"printf": func(format string, args ...any) (string, error) {
		if bigWidth.MatchString(format) {
			return "", errors.New("printf widths and precisions above 999 are not allowed")
		}
		return fmt.Sprintf(format, args...), nil
	},
}

var bigWidth = regexp.MustCompile(`%[-+# 0]*(\d{4,}|\*)|\.(\d{4,}|\*)`)

var errTooLarge = errors.New("notify: rendered template too large")

// cappedBuffer stops a template's execution once it has written
// maxRendered bytes.
type cappedBuffer struct{ bytes.Buffer }

func (b *cappedBuffer) Write(p []byte) (int, error) {
	if b.Len()+len(p) > maxRendered {
		return 0, errTooLarge
	}
	return b.Buffer.Write(p)
}

// Sample is the data the preview and the checks of a saved template use.
func Sample(event string) Data {
	at := time.Date(2026, 5, 4, 10, 30, 0, 0, time.UTC)
	return Data{
		Event:    event,
		Date:     at,
		User:     TemplateUser{ID: 7, Name: "Zofia Żółkiewska", FirstName: "Zofia", LastName: "Żółkiewska", Email: "zofia@example.com"},
		Course:   TemplateItem{ID: 3, Title: "Introduction to Statistics"},
		Topic:    TemplateItem{ID: 12, Title: "Mean and median"},
		Group:    TemplateItem{ID: 5, Title: "Class 2B"},
		Platform: TemplateSite{Name: "Example School", URL: "https://school.example.com"},
		Link:     "https://school.example.com/link?token=sample",
		Token:    "SampleToken0123456789abcdefABCDEF",
		Expires:  at.Add(24 * time.Hour),
	}
}
