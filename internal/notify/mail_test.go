package notify_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"mime"
	"net"
	"net/mail"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/lms-platform/lms/internal/apperr"
	"github.com/lms-platform/lms/internal/clock"
	"github.com/lms-platform/lms/internal/notify"
	"github.com/lms-platform/lms/internal/notify/smtptest"
)

const waitFor = 5 * time.Second

var sentAt = time.Date(2026, 3, 1, 12, 30, 0, 0, time.UTC)

// mailerFor parses the server's URL with the extra query and returns a mailer
// that trusts the server's certificate and dates mail at sentAt.
func mailerFor(t *testing.T, srv *smtptest.Server, userinfo, query string) *notify.SMTP {
	t.Helper()
	raw := srv.URL()
	if userinfo != "" {
		raw = strings.Replace(raw, "://", "://"+userinfo+"@", 1)
	}
	if query != "" {
		raw += "?" + query
	}
	cfg, err := notify.ParseSMTPURL(raw)
	if err != nil {
		t.Fatalf("ParseSMTPURL(%q): %v", raw, err)
	}
	cfg.TLSConfig = srv.ClientTLSConfig()
	cfg.Clock = clock.NewFake(sentAt)
	return notify.NewSMTP(cfg)
}

func TestSendPlainText(t *testing.T) {
	srv := smtptest.Start(t)
	m := mailerFor(t, srv, "", "from=LMS%20%3Cnoreply@example.com%3E")
	text := "Hello Ana,\n.a line that starts with a dot\n..and two\n\n" +
		strings.Repeat("a long line that must be wrapped by quoted-printable ", 5) + "\nBye = end\n"
	if err := m.Send(context.Background(), notify.Message{To: "Ana Silva <ana@example.com>", Subject: "Welcome", Text: text}); err != nil {
		t.Fatalf("Send: %v", err)
	}

	got := srv.Wait(t, 1, waitFor)[0]
	if got.ParseErr != nil {
		t.Fatalf("parse: %v", got.ParseErr)
	}
	if got.From != "noreply@example.com" || len(got.To) != 1 || got.To[0] != "ana@example.com" {
		t.Errorf("envelope = %q -> %q, want noreply@example.com -> [ana@example.com]", got.From, got.To)
	}
	if got.User != "" || got.TLS {
		t.Errorf("User = %q, TLS = %v; want no AUTH and no TLS (server offers neither)", got.User, got.TLS)
	}
	assertAddress(t, got.Header, "From", "LMS", "noreply@example.com")
	assertAddress(t, got.Header, "To", "Ana Silva", "ana@example.com")
	wantHeaders := map[string]string{
		"Subject":                   "Welcome",
		"Mime-Version":              "1.0",
		"Content-Type":              "text/plain; charset=utf-8",
		"Content-Transfer-Encoding": "quoted-printable",
	}
	for name, want := range wantHeaders {
		if v := got.Header.Get(name); v != want {
			t.Errorf("%s = %q, want %q", name, v, want)
		}
	}
	if d, err := got.Header.Date(); err != nil || !d.Equal(sentAt) {
		t.Errorf("Date = %v (%v), want %v", d, err, sentAt)
	}
	if id := got.Header.Get("Message-Id"); !regexp.MustCompile(`^<[0-9a-f]{32}@example\.com>$`).MatchString(id) {
		t.Errorf("Message-ID = %q, want <hex@example.com>", id)
	}
	if got.Body != text {
		t.Errorf("Body = %q, want %q", got.Body, text)
	}
	assertLinesShort(t, got.Data)
}

func TestSendHTMLIsMultipartAlternative(t *testing.T) {
	srv := smtptest.Start(t)
	m := mailerFor(t, srv, "", "")
	msg := notify.Message{
		To:      "bob@example.com",
		Subject: "Your certificate",
		Text:    "Grüße, Bob! Price: 5 €\n",
		HTML:    `<p style="color:red">Grüße, <b>Bob</b>! Price: 5 €</p>` + "\n",
	}
	if err := m.Send(context.Background(), msg); err != nil {
		t.Fatalf("Send: %v", err)
	}

	got := srv.Wait(t, 1, waitFor)[0]
	if got.ParseErr != nil {
		t.Fatalf("parse: %v", got.ParseErr)
	}
	mediaType, params, err := mime.ParseMediaType(got.Header.Get("Content-Type"))
	if err != nil || mediaType != "multipart/alternative" || params["boundary"] == "" {
		t.Errorf("Content-Type = %q, want multipart/alternative with a boundary", got.Header.Get("Content-Type"))
	}
	if cte := got.Header.Get("Content-Transfer-Encoding"); cte != "" {
		t.Errorf("multipart Content-Transfer-Encoding = %q, want none (RFC 2045 forbids encoding a multipart)", cte)
	}
	if got.From != notify.DefaultFrom {
		t.Errorf("envelope from = %q, want the default %q", got.From, notify.DefaultFrom)
	}
	if got.Body != msg.Text {
		t.Errorf("Body = %q, want %q", got.Body, msg.Text)
	}
	if got.HTML != msg.HTML {
		t.Errorf("HTML = %q, want %q", got.HTML, msg.HTML)
	}
	// The text part comes first: readers show the last part they understand.
	raw := string(got.Data)
	if strings.Index(raw, "text/plain") > strings.Index(raw, "text/html") {
		t.Error("the text/html part comes before the text/plain part")
	}
	if strings.Count(raw, "Content-Transfer-Encoding: quoted-printable") != 2 {
		t.Errorf("want both parts quoted-printable, message:\n%s", raw)
	}
	assertLinesShort(t, got.Data)
}

func TestSubjectRoundTrip(t *testing.T) {
	subjects := []string{
		"Grüße aus Köln",
		"Привет, мир — добро пожаловать в курс",
		"🎓 Certificate ready",
		strings.Repeat("Überlange Betreffzeile mit Umlauten äöü ", 6),
		strings.TrimSpace(strings.Repeat("A long plain ASCII subject that needs folding ", 4)),
		"Tab\tand = and ? and _ characters",
	}
	srv := smtptest.Start(t)
	m := mailerFor(t, srv, "", "")
	for _, s := range subjects {
		if err := m.Send(context.Background(), notify.Message{To: "a@example.com", Subject: s, Text: "x"}); err != nil {
			t.Fatalf("Send(%q): %v", s, err)
		}
	}
	got := srv.Wait(t, len(subjects), waitFor)
	for i, s := range subjects {
		if got[i].ParseErr != nil {
			t.Errorf("message %d: %v", i, got[i].ParseErr)
		}
		if got[i].Subject != s {
			t.Errorf("Subject = %q, want %q", got[i].Subject, s)
		}
		for _, c := range got[i].Data {
			if c >= 0x80 {
				t.Errorf("message with subject %q is not 7-bit", s)
				break
			}
		}
		assertLinesShort(t, got[i].Data)
	}
}

func TestSendRefusesHeaderInjection(t *testing.T) {
	srv := smtptest.Start(t)
	m := mailerFor(t, srv, "", "")
	cases := []notify.Message{
		{To: "a@example.com\r\nBcc: victim@example.com", Subject: "Hi", Text: "x"},
		{To: "a@example.com\nBcc: victim@example.com", Subject: "Hi", Text: "x"},
		{To: "a@example.com", Subject: "Hi\r\nBcc: victim@example.com", Text: "x"},
		{To: "a@example.com", Subject: "Hi\nBcc: victim@example.com", Text: "x"},
		{To: "a@example.com", Subject: "Hi\r", Text: "x"},
	}
	for _, msg := range cases {
		err := m.Send(context.Background(), msg)
		if !apperr.Is(err, apperr.Invalid) {
			t.Errorf("Send(%q, %q) = %v, want an Invalid error", msg.To, msg.Subject, err)
		}
	}
	if n := len(srv.Messages()); n != 0 {
		t.Errorf("server received %d messages, want none", n)
	}
}

func TestSendRefusesInvalidAddress(t *testing.T) {
	srv := smtptest.Start(t)
	m := mailerFor(t, srv, "", "")
	for _, to := range []string{"", "not an address", "ana@", "@example.com", "a@example.com, b@example.com", "<>"} {
		err := m.Send(context.Background(), notify.Message{To: to, Subject: "Hi", Text: "x"})
		if !apperr.Is(err, apperr.Invalid) {
			t.Errorf("Send(To %q) = %v, want an Invalid error", to, err)
		}
	}
	if n := len(srv.Messages()); n != 0 {
		t.Errorf("server received %d messages, want none", n)
	}
}

func TestSendWithAuth(t *testing.T) {
	srv := smtptest.Start(t, smtptest.WithAuth())
	m := mailerFor(t, srv, "mailer%40lms:p%40ss%2Fword", "")
	if err := m.Send(context.Background(), notify.Message{To: "a@example.com", Subject: "Hi", Text: "x"}); err != nil {
		t.Fatalf("Send: %v", err)
	}
	if got := srv.Wait(t, 1, waitFor)[0]; got.User != "mailer@lms" {
		t.Errorf("AUTH user = %q, want mailer@lms", got.User)
	}
}

func TestSendWithoutCredentialsSkipsAuth(t *testing.T) {
	srv := smtptest.Start(t, smtptest.WithAuth())
	m := mailerFor(t, srv, "", "")
	if err := m.Send(context.Background(), notify.Message{To: "a@example.com", Subject: "Hi", Text: "x"}); err != nil {
		t.Fatalf("Send: %v", err)
	}
	if got := srv.Wait(t, 1, waitFor)[0]; got.User != "" {
		t.Errorf("AUTH user = %q, want no AUTH", got.User)
	}
}

func TestSendFailsWhenServerLacksAuth(t *testing.T) {
	srv := smtptest.Start(t)
	m := mailerFor(t, srv, "user:hunter2secret", "")
	err := m.Send(context.Background(), notify.Message{To: "a@example.com", Subject: "Hi", Text: "x"})
	if err == nil {
		t.Fatal("Send succeeded, want an error: credentials are configured but the server offers no AUTH")
	}
	if strings.Contains(err.Error(), "hunter2secret") {
		t.Errorf("error reveals the password: %v", err)
	}
}

func TestSendTLS(t *testing.T) {
	msg := notify.Message{To: "a@example.com", Subject: "Hi", Text: "x"}
	cases := []struct {
		name    string
		opts    []smtptest.Option
		query   string
		wantTLS bool
		wantErr bool
	}{
		{name: "STARTTLS when offered", opts: []smtptest.Option{smtptest.WithSTARTTLS(), smtptest.WithAuth()}, wantTLS: true},
		{name: "starttls=off", opts: []smtptest.Option{smtptest.WithSTARTTLS()}, query: "starttls=off", wantTLS: false},
		{name: "starttls=require and offered", opts: []smtptest.Option{smtptest.WithSTARTTLS()}, query: "starttls=require", wantTLS: true},
		{name: "starttls=require but not offered", query: "starttls=require", wantErr: true},
		{name: "smtps", opts: []smtptest.Option{smtptest.WithImplicitTLS(), smtptest.WithAuth()}, wantTLS: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := smtptest.Start(t, c.opts...)
			m := mailerFor(t, srv, "", c.query)
			err := m.Send(context.Background(), msg)
			if c.wantErr {
				if err == nil {
					t.Fatal("Send succeeded, want an error")
				}
				if n := len(srv.Messages()); n != 0 {
					t.Errorf("server received %d messages, want none", n)
				}
				return
			}
			if err != nil {
				t.Fatalf("Send: %v", err)
			}
			if got := srv.Wait(t, 1, waitFor)[0]; got.TLS != c.wantTLS {
				t.Errorf("TLS = %v, want %v", got.TLS, c.wantTLS)
			}
		})
	}
}

func TestSendAuthOverTLS(t *testing.T) {
	for _, opt := range []smtptest.Option{smtptest.WithSTARTTLS(), smtptest.WithImplicitTLS()} {
		srv := smtptest.Start(t, opt, smtptest.WithAuth())
		m := mailerFor(t, srv, "user:pass", "")
		if err := m.Send(context.Background(), notify.Message{To: "a@example.com", Subject: "Hi", Text: "x"}); err != nil {
			t.Fatalf("Send to %s: %v", srv.URL(), err)
		}
		if got := srv.Wait(t, 1, waitFor)[0]; got.User != "user" || !got.TLS {
			t.Errorf("%s: User = %q, TLS = %v; want user over TLS", srv.URL(), got.User, got.TLS)
		}
	}
}

func TestSendRefusesUntrustedCertificate(t *testing.T) {
	srv := smtptest.Start(t, smtptest.WithImplicitTLS())
	cfg, err := notify.ParseSMTPURL(srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	err = notify.NewSMTP(cfg).Send(context.Background(), notify.Message{To: "a@example.com", Subject: "Hi", Text: "x"})
	if err == nil {
		t.Fatal("Send trusted a self-signed certificate")
	}
}

// silentServer accepts connections and never answers, like a hung server.
// Each accepted connection is sent on the returned channel.
func silentServer(t *testing.T) (addr string, accepted <-chan net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ch := make(chan net.Conn, 10)
	done := make(chan struct{})
	go func() {
		defer close(done)
		var conns []net.Conn
		defer func() {
			for _, c := range conns {
				c.Close()
			}
		}()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns = append(conns, c)
			ch <- c
		}
	}()
	t.Cleanup(func() { ln.Close(); <-done })
	return ln.Addr().String(), ch
}

func silentMailer(t *testing.T, timeout time.Duration) (*notify.SMTP, <-chan net.Conn) {
	t.Helper()
	addr, accepted := silentServer(t)
	cfg, err := notify.ParseSMTPURL("smtp://" + addr)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Timeout = timeout
	return notify.NewSMTP(cfg), accepted
}

func TestSendHonoursContextDeadline(t *testing.T) {
	m, _ := silentMailer(t, time.Hour)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	err := m.Send(ctx, notify.Message{To: "a@example.com", Subject: "Hi", Text: "x"})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Send = %v, want context.DeadlineExceeded", err)
	}
}

func TestSendHonoursConfiguredTimeout(t *testing.T) {
	m, _ := silentMailer(t, 100*time.Millisecond)
	err := m.Send(context.Background(), notify.Message{To: "a@example.com", Subject: "Hi", Text: "x"})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Send = %v, want context.DeadlineExceeded", err)
	}
}

func TestSendHonoursCancel(t *testing.T) {
	m, accepted := silentMailer(t, time.Hour)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		<-accepted // cancel while Send waits for the greeting
		cancel()
	}()
	err := m.Send(ctx, notify.Message{To: "a@example.com", Subject: "Hi", Text: "x"})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Send = %v, want context.Canceled", err)
	}
}

func TestParseSMTPURL(t *testing.T) {
	cases := []struct {
		raw  string
		want notify.SMTPConfig
	}{
		{"smtp://mail.example.com", notify.SMTPConfig{Host: "mail.example.com", Port: "25", From: notify.DefaultFrom, TLS: notify.TLSOpportunistic}},
		{"smtps://mail.example.com", notify.SMTPConfig{Host: "mail.example.com", Port: "465", From: notify.DefaultFrom, TLS: notify.TLSImplicit}},
		{"smtp://user:pass@mail.example.com:587?from=noreply@example.com",
			notify.SMTPConfig{Host: "mail.example.com", Port: "587", Username: "user", Password: "pass", From: "noreply@example.com"}},
		{"smtp://u%40x:p%3Aa%2Fss@[::1]:2525/?starttls=off&from=LMS+%3Cnoreply%40example.com%3E",
			notify.SMTPConfig{Host: "::1", Port: "2525", Username: "u@x", Password: "p:a/ss", From: "LMS <noreply@example.com>", TLS: notify.TLSOff}},
		{"smtp://h?starttls=require", notify.SMTPConfig{Host: "h", Port: "25", From: notify.DefaultFrom, TLS: notify.TLSRequired}},
		{"smtp://h?starttls=auto", notify.SMTPConfig{Host: "h", Port: "25", From: notify.DefaultFrom, TLS: notify.TLSOpportunistic}},
		{"smtps://user@h:2465", notify.SMTPConfig{Host: "h", Port: "2465", Username: "user", From: notify.DefaultFrom, TLS: notify.TLSImplicit}},
	}
	for _, c := range cases {
		got, err := notify.ParseSMTPURL(c.raw)
		if err != nil {
			t.Errorf("ParseSMTPURL(%q): %v", c.raw, err)
			continue
		}
		// Defaults a mailer fills in are not part of the comparison.
		got.Timeout, got.Clock = 0, nil
		if got != c.want {
			t.Errorf("ParseSMTPURL(%q) =\n %#v, want\n %#v", c.raw, got, c.want)
		}
	}
}

func TestParseSMTPURLErrors(t *testing.T) {
	const secret = "s3cretPW"
	bad := []string{
		"http://mail.example.com",
		"mail.example.com:25",
		"smtp://",
		"smtp://:" + secret + "@h",
		"smtp://h:0",
		"smtp://h:70000",
		"smtp://h/path",
		"smtp://h?from=not-an-address",
		"smtp://h?starttls=maybe",
		"smtps://h?starttls=off",
		"smtp://h?form=a@example.com",
		"smtp://h?from=a@example.com&from=b@example.com",
		"smtp://user:" + secret + "/x@h",   // an unescaped slash ends the host early
		"smtp://user:" + secret + "%zz@h",  // a bad escape
		"smtp://user:" + secret + " x@h:x", // a space and a bad port
		"smtp://user:" + secret + "@h:port",
	}
	for _, raw := range bad {
		_, err := notify.ParseSMTPURL(raw)
		if err == nil {
			t.Errorf("ParseSMTPURL(%q) succeeded, want an error", raw)
			continue
		}
		if strings.Contains(err.Error(), secret) || strings.Contains(err.Error(), secret[:4]) {
			t.Errorf("ParseSMTPURL(%q) error reveals the password: %v", raw, err)
		}
	}
}

func TestConfigNeverShowsPassword(t *testing.T) {
	cfg, err := notify.ParseSMTPURL("smtp://user:hunter2secret@mail.example.com:587?from=noreply@example.com")
	if err != nil {
		t.Fatal(err)
	}
	var logged bytes.Buffer
	slog.New(slog.NewJSONHandler(&logged, nil)).Info("mail", "config", cfg)
	slog.New(slog.NewTextHandler(&logged, nil)).Info("mail", "config", cfg)
	printed := fmt.Sprintf("%v %+v", notify.NewSMTP(cfg), notify.NewSMTP(cfg))
	for _, s := range []string{cfg.String(), logged.String(), printed} {
		if strings.Contains(s, "hunter2secret") {
			t.Errorf("password shown: %s", s)
		}
		if !strings.Contains(s, "mail.example.com:587") {
			t.Errorf("host missing: %s", s)
		}
	}
	// The masked form is still a usable description of everything else.
	back, err := notify.ParseSMTPURL(cfg.String())
	if err != nil || back.Host != cfg.Host || back.Port != cfg.Port || back.Username != "user" || back.From != cfg.From {
		t.Errorf("ParseSMTPURL(String()) = %v, %v", back, err)
	}
}

func TestSendReportsBadSender(t *testing.T) {
	srv := smtptest.Start(t)
	cfg, err := notify.ParseSMTPURL(srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	cfg.From = "not an address"
	if err := notify.NewSMTP(cfg).Send(context.Background(), notify.Message{To: "a@example.com", Text: "x"}); err == nil {
		t.Error("Send succeeded with an invalid sender")
	}
}

func TestSendConcurrently(t *testing.T) {
	srv := smtptest.Start(t)
	m := mailerFor(t, srv, "", "")
	const n = 20
	errs := make(chan error, n)
	for i := range n {
		go func() {
			errs <- m.Send(context.Background(), notify.Message{To: "a@example.com", Subject: "Hi", Text: strings.Repeat("x", i)})
		}()
	}
	for range n {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	srv.Wait(t, n, waitFor)
}

func assertAddress(t *testing.T, h mail.Header, field, name, address string) {
	t.Helper()
	a, err := h.AddressList(field)
	if err != nil || len(a) != 1 || a[0].Name != name || a[0].Address != address {
		t.Errorf("%s = %q (%v), want %q <%s>", field, h.Get(field), err, name, address)
	}
}

// assertLinesShort checks lines stay within 76 characters, which RFC 2047
// requires of lines with encoded words and quoted-printable keeps to; every
// line here is either a folded header or quoted-printable.
func assertLinesShort(t *testing.T, data []byte) {
	t.Helper()
	for line := range strings.SplitSeq(string(data), "\r\n") {
		if len(line) > 76 {
			t.Errorf("line of %d characters: %q", len(line), line)
		}
	}
}
