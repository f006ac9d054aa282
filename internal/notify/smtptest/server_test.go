package smtptest_test

import (
	"encoding/base64"
	"fmt"
	"io"
	"net/textproto"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lms-platform/lms/internal/notify/smtptest"
)

const waitFor = 5 * time.Second

// client speaks raw SMTP so the tests control every byte.
type client struct {
	t *testing.T
	c *textproto.Conn
}

func dial(t *testing.T, srv *smtptest.Server) *client {
	t.Helper()
	c, err := textproto.Dial("tcp", srv.Addr())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	cl := &client{t: t, c: c}
	cl.expect(220)
	return cl
}

// do sends one line and checks the reply code, returning the reply text.
func (c *client) do(code int, line string) string {
	c.t.Helper()
	if err := c.c.PrintfLine("%s", line); err != nil {
		c.t.Fatalf("send %q: %v", line, err)
	}
	return c.expect(code)
}

func (c *client) expect(code int) string {
	c.t.Helper()
	got, msg, err := c.c.ReadResponse(0)
	if err != nil {
		c.t.Fatalf("read reply: %v", err)
	}
	if got != code {
		c.t.Fatalf("reply %d %q, want %d", got, msg, code)
	}
	return msg
}

// raw writes bytes as they are, for message data and overlong lines.
func (c *client) raw(s string) {
	c.t.Helper()
	if _, err := c.c.W.WriteString(s); err != nil {
		c.t.Fatal(err)
	}
	if err := c.c.W.Flush(); err != nil {
		c.t.Fatal(err)
	}
}

func TestSessionCommands(t *testing.T) {
	srv := smtptest.Start(t)
	c := dial(t, srv)
	c.do(503, "MAIL FROM:<a@example.com>")
	c.do(501, "EHLO")
	ext := c.do(250, "EHLO client.example")
	if !strings.Contains(ext, "8BITMIME") || strings.Contains(ext, "AUTH") || strings.Contains(ext, "STARTTLS") {
		t.Errorf("EHLO extensions = %q, want 8BITMIME and neither AUTH nor STARTTLS", ext)
	}
	c.do(503, "RCPT TO:<b@example.com>")
	c.do(503, "DATA")
	c.do(501, "MAIL FROM:a@example.com")
	c.do(250, "mail from:<a@example.com> BODY=8BITMIME SMTPUTF8")
	c.do(503, "MAIL FROM:<a@example.com>")
	c.do(501, "RCPT TO:<>")
	c.do(250, "RCPT TO:<b@example.com>")
	c.do(250, "RSET")
	c.do(503, "DATA")
	c.do(250, "NOOP")
	c.do(500, "VRFY b@example.com")
	c.do(502, "STARTTLS")
	c.do(502, "AUTH PLAIN AHVAcA==")

	c.do(250, "MAIL FROM:<>")
	c.do(250, "RCPT TO:<b@example.com>")
	c.do(250, "RCPT TO:<c@example.com>")
	c.do(501, "DATA now")
	c.do(354, "DATA")
	c.raw("Subject: dots\r\n\r\n..leading dot\r\n...two dots\r\n.\r\n")
	c.expect(250)
	c.do(221, "QUIT")

	got := srv.Wait(t, 1, waitFor)[0]
	if got.From != "" || !slices.Equal(got.To, []string{"b@example.com", "c@example.com"}) {
		t.Errorf("envelope = %q -> %q", got.From, got.To)
	}
	if want := "Subject: dots\r\n\r\n.leading dot\r\n..two dots\r\n"; string(got.Data) != want {
		t.Errorf("Data = %q, want %q (one leading dot removed per line)", got.Data, want)
	}
	if got.Body != ".leading dot\n..two dots\n" || got.Subject != "dots" {
		t.Errorf("Subject %q, Body %q", got.Subject, got.Body)
	}
}

func TestHELO(t *testing.T) {
	srv := smtptest.Start(t)
	c := dial(t, srv)
	c.do(250, "HELO client.example")
	c.do(250, "MAIL FROM:<a@example.com>")
	c.do(250, "RCPT TO:<b@example.com>")
	c.do(354, "DATA")
	c.raw("\r\nbody\r\n.\r\n")
	c.expect(250)
	if got := srv.Wait(t, 1, waitFor)[0]; got.Body != "body\n" {
		t.Errorf("Body = %q", got.Body)
	}
}

func TestAuthPlain(t *testing.T) {
	srv := smtptest.Start(t, smtptest.WithAuth())
	plain := func(user, pass string) string {
		return base64.StdEncoding.EncodeToString([]byte("\x00" + user + "\x00" + pass))
	}

	c := dial(t, srv)
	c.do(503, "AUTH PLAIN "+plain("early", "x"))
	if ext := c.do(250, "EHLO client.example"); !strings.Contains(ext, "AUTH PLAIN") {
		t.Errorf("EHLO extensions = %q, want AUTH PLAIN", ext)
	}
	c.do(504, "AUTH LOGIN")
	c.do(501, "AUTH PLAIN not-base64!")
	c.do(501, "AUTH PLAIN "+base64.StdEncoding.EncodeToString([]byte("no separators")))
	c.do(334, "AUTH PLAIN")
	c.do(501, "*")
	c.do(334, "AUTH PLAIN")
	c.do(235, plain("alice", "anything"))
	c.do(503, "AUTH PLAIN "+plain("again", "x"))
	c.do(250, "MAIL FROM:<a@example.com>")
	c.do(250, "RCPT TO:<b@example.com>")
	c.do(354, "DATA")
	c.raw("\r\nhi\r\n.\r\n")
	c.expect(250)

	c2 := dial(t, srv)
	c2.do(250, "EHLO client.example")
	c2.do(235, "AUTH PLAIN "+plain("bob", "secret"))

	if got := srv.Wait(t, 1, waitFor)[0]; got.User != "alice" {
		t.Errorf("User = %q, want alice", got.User)
	}
}

func TestLongLines(t *testing.T) {
	srv := smtptest.Start(t)
	c := dial(t, srv)
	c.do(500, "NOOP "+strings.Repeat("x", 2000))
	c.do(250, "EHLO client.example") // the session carries on

	c.do(250, "MAIL FROM:<a@example.com>")
	c.do(250, "RCPT TO:<b@example.com>")
	c.do(354, "DATA")
	c.raw("\r\n" + strings.Repeat("y", 1200) + "\r\nafter\r\n.\r\n")
	c.expect(500)

	// A line of exactly 1000 octets with its CRLF is within the limit.
	c.do(250, "MAIL FROM:<a@example.com>")
	c.do(250, "RCPT TO:<b@example.com>")
	c.do(354, "DATA")
	c.raw("\r\n" + strings.Repeat("z", 998) + "\r\n.\r\n")
	c.expect(250)

	got := srv.Wait(t, 1, waitFor)
	if len(got) != 1 || got[0].Body != strings.Repeat("z", 998)+"\n" {
		t.Errorf("got %d messages, want only the one within the limit", len(got))
	}
}

func TestDecodesMIME(t *testing.T) {
	srv := smtptest.Start(t)
	c := dial(t, srv)
	c.do(250, "EHLO client.example")
	c.do(250, "MAIL FROM:<a@example.com>")
	c.do(250, "RCPT TO:<b@example.com>")
	c.do(354, "DATA")
	html := base64.StdEncoding.EncodeToString([]byte("<p>Grüße</p>\r\n"))
	c.raw(strings.Join([]string{
		"Subject: =?utf-8?q?Gr=C3=BC=C3=9Fe?= =?utf-8?b?IGF1cyBLw7Zsbg==?=",
		"MIME-Version: 1.0",
		`Content-Type: multipart/mixed; boundary="outer"`,
		"",
		"--outer",
		`Content-Type: multipart/alternative; boundary="inner"`,
		"",
		"--inner",
		"Content-Type: text/plain; charset=utf-8",
		"Content-Transfer-Encoding: quoted-printable",
		"",
		"Gr=C3=BC=C3=9Fe, a soft=",
		" break",
		"--inner",
		"Content-Type: text/html; charset=utf-8",
		"Content-Transfer-Encoding: base64",
		"",
		html,
		"--inner--",
		"--outer",
		"Content-Type: text/plain",
		"",
		"an attachment-like second text part",
		"--outer--",
		".",
		"",
	}, "\r\n"))
	c.expect(250)

	got := srv.Wait(t, 1, waitFor)[0]
	if got.ParseErr != nil {
		t.Fatal(got.ParseErr)
	}
	if got.Subject != "Grüße aus Köln" {
		t.Errorf("Subject = %q", got.Subject)
	}
	if got.Body != "Grüße, a soft break" {
		t.Errorf("Body = %q", got.Body)
	}
	if got.HTML != "<p>Grüße</p>\n" {
		t.Errorf("HTML = %q", got.HTML)
	}
}

func TestParseErrorIsReported(t *testing.T) {
	srv := smtptest.Start(t)
	c := dial(t, srv)
	c.do(250, "EHLO client.example")
	c.do(250, "MAIL FROM:<a@example.com>")
	c.do(250, "RCPT TO:<b@example.com>")
	c.do(354, "DATA")
	c.raw("Content-Transfer-Encoding: uuencode\r\n\r\nbody\r\n.\r\n")
	c.expect(250) // stored as received; the test decides what to make of it
	if got := srv.Wait(t, 1, waitFor)[0]; got.ParseErr == nil {
		t.Error("ParseErr = nil for an unknown transfer encoding")
	}
}

// fatalRecorder stands in for a test so Wait's failure can be observed.
type fatalRecorder struct {
	testing.TB
	failed string
}

func (f *fatalRecorder) Helper() {}

func (f *fatalRecorder) Fatalf(format string, args ...any) { f.failed = fmt.Sprintf(format, args...) }

func TestWaitFailsOnTimeout(t *testing.T) {
	srv := smtptest.Start(t)
	rec := &fatalRecorder{TB: t}
	if got := srv.Wait(rec, 1, 10*time.Millisecond); got != nil || rec.failed == "" {
		t.Errorf("Wait = %v, failure %q; want the test failed", got, rec.failed)
	}
}

func TestWaitReturnsAtOnceWhenEnough(t *testing.T) {
	srv := smtptest.Start(t)
	if got := srv.Wait(t, 0, time.Nanosecond); len(got) != 0 {
		t.Errorf("Wait(0) = %v", got)
	}
}

func TestCleanupClosesIdleConnections(t *testing.T) {
	var c *textproto.Conn
	t.Run("server", func(t *testing.T) {
		srv := smtptest.Start(t)
		var err error
		c, err = textproto.Dial("tcp", srv.Addr())
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := c.ReadResponse(220); err != nil {
			t.Fatal(err)
		}
		// The connection stays open; the cleanup must not wait for it.
	})
	defer c.Close()
	if _, err := c.ReadLine(); err != io.EOF {
		t.Errorf("read after cleanup = %v, want EOF", err)
	}
}

func TestURL(t *testing.T) {
	if u := smtptest.Start(t).URL(); !strings.HasPrefix(u, "smtp://127.0.0.1:") {
		t.Errorf("URL = %q", u)
	}
	srv := smtptest.Start(t, smtptest.WithImplicitTLS())
	if u := srv.URL(); !strings.HasPrefix(u, "smtps://127.0.0.1:") || srv.ClientTLSConfig() == nil {
		t.Errorf("URL = %q, ClientTLSConfig = %v", u, srv.ClientTLSConfig())
	}
}
