package notify

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net"
	"net/mail"
	"net/smtp"
	"net/textproto"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/lms-platform/lms/internal/apperr"
	"github.com/lms-platform/lms/internal/clock"
)

// Message is one e-mail to one recipient. Text should always be set, as it is
// what plain-text readers show; HTML, when set, is sent as the richer
// alternative of the same content.
type Message struct {
	To      string
	Subject string
	Text    string
	HTML    string
}

// Mailer delivers messages. Errors of kind apperr.Invalid are permanent (the
// message itself is wrong); an SMTP reply in the 5xx range, reachable with
// errors.As and *textproto.Error, is permanent too; anything else may succeed
// on a later try.
type Mailer interface {
	Send(ctx context.Context, m Message) error
}

// DefaultFrom is the sender used when the configuration names none.
const DefaultFrom = "noreply@localhost"

// defaultTimeout bounds a whole SMTP session so a stuck server cannot hold a
// worker forever when the caller's context has no deadline.
const defaultTimeout = 30 * time.Second

// TLSMode says how the connection to the SMTP server is encrypted.
type TLSMode int

const (
	// TLSOpportunistic upgrades with STARTTLS when the server offers it.
	TLSOpportunistic TLSMode = iota
	// TLSOff never upgrades (smtp://...?starttls=off).
	TLSOff
	// TLSRequired fails unless STARTTLS succeeds (smtp://...?starttls=require).
	TLSRequired
	// TLSImplicit speaks TLS from the first byte (smtps://).
	TLSImplicit
)

// SMTPConfig says where and how to deliver mail.
type SMTPConfig struct {
	Host     string
	Port     string // empty: 465 with TLSImplicit, 25 otherwise
	Username string // empty: no AUTH
	Password string `json:"-"`
	From     string // header and envelope sender, e.g. "LMS <noreply@example.com>"
	TLS      TLSMode
	// Timeout bounds the whole session, dialing included; zero means 30
	// seconds. A sooner context deadline wins.
	Timeout time.Duration
	// TLSConfig, when set, is used for STARTTLS and implicit TLS (tests use it
	// to trust their own certificate). Its ServerName defaults to Host.
	TLSConfig *tls.Config
	// Clock dates the messages; nil means the system clock.
	Clock clock.Clock
}

// ParseSMTPURL reads a configuration such as
// smtp://user:pass@host:587?from=noreply@example.com or smtps://host.
// Query parameters: from (an address), starttls (auto, off or require; smtp
// only). Errors never repeat the URL, as it may hold a password.
func ParseSMTPURL(raw string) (SMTPConfig, error) {
	u, err := url.Parse(raw)
	if err != nil {
		// url.Parse quotes parts of its input, which may include the password.
		return SMTPConfig{}, errors.New("notify: SMTP URL does not parse (special characters in the user or password must be percent-encoded)")
	}
	var cfg SMTPConfig
	switch u.Scheme {
	case "smtp":
		cfg.TLS = TLSOpportunistic
	case "smtps":
		cfg.TLS = TLSImplicit
	default:
		return SMTPConfig{}, errors.New("notify: SMTP URL scheme must be smtp or smtps")
	}
	if u.Opaque != "" || (u.Path != "" && u.Path != "/") || u.Fragment != "" {
		return SMTPConfig{}, errors.New("notify: SMTP URL must not have a path or fragment")
	}
	cfg.Host = u.Hostname()
	if cfg.Host == "" {
		return SMTPConfig{}, errors.New("notify: SMTP URL has no host")
	}
	cfg.Port = u.Port()
	if cfg.Port != "" {
		if n, err := strconv.Atoi(cfg.Port); err != nil || n < 1 || n > 65535 {
			return SMTPConfig{}, errors.New("notify: SMTP URL port must be between 1 and 65535")
		}
	}
	if u.User != nil {
		cfg.Username = u.User.Username()
		cfg.Password, _ = u.User.Password()
		if cfg.Username == "" {
			return SMTPConfig{}, errors.New("notify: SMTP URL has a password but no user")
		}
	}

	q, err := url.ParseQuery(u.RawQuery)
	if err != nil {
		return SMTPConfig{}, errors.New("notify: SMTP URL query does not parse")
	}
	for key, values := range q {
		if len(values) != 1 {
			return SMTPConfig{}, fmt.Errorf("notify: SMTP URL parameter %q must be given once", key)
		}
		v := values[0]
		switch key {
		case "from":
			if _, err := mail.ParseAddress(v); err != nil {
				return SMTPConfig{}, fmt.Errorf("notify: SMTP URL from %q is not an address: %w", v, err)
			}
			cfg.From = v
		case "starttls":
			if cfg.TLS == TLSImplicit {
				return SMTPConfig{}, errors.New("notify: starttls does not apply to smtps URLs")
			}
			switch v {
			case "auto":
				cfg.TLS = TLSOpportunistic
			case "off":
				cfg.TLS = TLSOff
			case "require":
				cfg.TLS = TLSRequired
			default:
				return SMTPConfig{}, fmt.Errorf("notify: SMTP URL starttls %q is not auto, off or require", v)
			}
		default:
			return SMTPConfig{}, fmt.Errorf("notify: SMTP URL parameter %q is unknown", key)
		}
	}
	return cfg.withDefaults(), nil
}

func (c SMTPConfig) withDefaults() SMTPConfig {
	if c.Port == "" {
		c.Port = "25"
		if c.TLS == TLSImplicit {
			c.Port = "465"
		}
	}
	if c.From == "" {
		c.From = DefaultFrom
	}
	if c.Timeout <= 0 {
		c.Timeout = defaultTimeout
	}
	if c.Clock == nil {
		c.Clock = clock.System{}
	}
	return c
}

// String shows the configuration as a URL with the password masked, so that
// printing or logging a config never reveals it.
func (c SMTPConfig) String() string {
	u := url.URL{Scheme: "smtp", Host: c.Host}
	if c.Port != "" {
		u.Host = net.JoinHostPort(c.Host, c.Port)
	}
	if c.TLS == TLSImplicit {
		u.Scheme = "smtps"
	}
	if c.Username != "" {
		u.User = url.UserPassword(c.Username, c.Password)
	}
	q := url.Values{}
	if c.From != "" {
		q.Set("from", c.From)
	}
	switch c.TLS {
	case TLSOff:
		q.Set("starttls", "off")
	case TLSRequired:
		q.Set("starttls", "require")
	}
	u.RawQuery = q.Encode()
	return u.Redacted()
}

// LogValue keeps the password out of structured logs as well.
func (c SMTPConfig) LogValue() slog.Value { return slog.StringValue(c.String()) }

// SMTP delivers mail to one SMTP server, one connection per message. It is
// safe for concurrent use.
type SMTP struct {
	cfg SMTPConfig
}

// NewSMTP returns a mailer for cfg; unset fields take their defaults. A bad
// From address is reported by Send.
func NewSMTP(cfg SMTPConfig) *SMTP {
	return &SMTP{cfg: cfg.withDefaults()}
}

var _ Mailer = (*SMTP)(nil)

// String describes the mailer without its password; printing the struct
// itself would show the unexported config field by field.
func (s *SMTP) String() string { return "notify.SMTP(" + s.cfg.String() + ")" }

// Send delivers m, giving up when ctx ends or the configured timeout passes.
func (s *SMTP) Send(ctx context.Context, m Message) error {
	from, err := mail.ParseAddress(s.cfg.From)
	if err != nil {
		return fmt.Errorf("notify: sender %q is not an address: %w", s.cfg.From, err)
	}
	to, body, err := buildMessage(from, m, s.cfg.Clock.Now())
	if err != nil {
		return err
	}

	ctx, cancel := context.WithTimeout(ctx, s.cfg.Timeout) // a sooner deadline of ctx wins
	defer cancel()

	conn, err := s.dial(ctx)
	if err != nil {
		return fmt.Errorf("notify: connect to %s: %w", net.JoinHostPort(s.cfg.Host, s.cfg.Port), err)
	}
	defer conn.Close()
	// Blocked reads and writes are woken by moving the connection's deadline
	// into the past once ctx ends, by timeout or cancel alike; ctx.Err is set
	// by then, so the caller gets a context error rather than an I/O one.
	stop := context.AfterFunc(ctx, func() { conn.SetDeadline(time.Unix(1, 0)) })
	defer stop()

	err = s.session(conn, from.Address, to.Address, body)
	if err != nil && ctx.Err() != nil {
		return fmt.Errorf("notify: smtp: %w", ctx.Err())
	}
	return err
}

func (s *SMTP) dial(ctx context.Context) (net.Conn, error) {
	addr := net.JoinHostPort(s.cfg.Host, s.cfg.Port)
	d := &net.Dialer{} // ctx carries the deadline
	if s.cfg.TLS == TLSImplicit {
		td := &tls.Dialer{NetDialer: d, Config: s.tlsConfig()}
		return td.DialContext(ctx, "tcp", addr)
	}
	return d.DialContext(ctx, "tcp", addr)
}

func (s *SMTP) tlsConfig() *tls.Config {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if s.cfg.TLSConfig != nil {
		cfg = s.cfg.TLSConfig.Clone()
	}
	if cfg.ServerName == "" {
		cfg.ServerName = s.cfg.Host
	}
	return cfg
}

// session runs one SMTP conversation on conn, which the caller closes.
func (s *SMTP) session(conn net.Conn, from, to string, body []byte) error {
	c, err := smtp.NewClient(conn, s.cfg.Host)
	if err != nil {
		return fmt.Errorf("notify: smtp greeting: %w", err)
	}
	if s.cfg.TLS == TLSOpportunistic || s.cfg.TLS == TLSRequired {
		if ok, _ := c.Extension("STARTTLS"); ok {
			if err := c.StartTLS(s.tlsConfig()); err != nil {
				return fmt.Errorf("notify: smtp STARTTLS: %w", err)
			}
		} else if s.cfg.TLS == TLSRequired {
			return errors.New("notify: smtp server does not offer STARTTLS, which the configuration requires")
		}
	}
	if s.cfg.Username != "" {
		if ok, _ := c.Extension("AUTH"); !ok {
			return errors.New("notify: smtp server does not offer AUTH, but credentials are configured")
		}
		// net/smtp sends PLAIN credentials only over TLS or to localhost.
		auth := smtp.PlainAuth("", s.cfg.Username, s.cfg.Password, s.cfg.Host)
		if err := c.Auth(auth); err != nil {
			return fmt.Errorf("notify: smtp AUTH as %q: %w", s.cfg.Username, err)
		}
	}
	if err := c.Mail(from); err != nil {
		return fmt.Errorf("notify: smtp MAIL FROM: %w", err)
	}
	if err := c.Rcpt(to); err != nil {
		return fmt.Errorf("notify: smtp RCPT TO: %w", err)
	}
	w, err := c.Data()
	if err != nil {
		return fmt.Errorf("notify: smtp DATA: %w", err)
	}
	if _, err := w.Write(body); err != nil {
		return fmt.Errorf("notify: smtp write message: %w", err)
	}
	if err := w.Close(); err != nil {
		return fmt.Errorf("notify: smtp end of message: %w", err)
	}
	// The server has accepted the message; a failed QUIT must not make the
	// caller retry and deliver it twice.
	_ = c.Quit()
	return nil
}

// buildMessage checks m and renders it as an RFC 5322 message with CRLF line
// endings. It returns the parsed recipient for the envelope.
func buildMessage(from *mail.Address, m Message, now time.Time) (*mail.Address, []byte, error) {
	if strings.ContainsAny(m.To, "\r\n") {
		return nil, nil, apperr.New(apperr.Invalid, "The recipient must not contain line breaks.")
	}
	if strings.ContainsAny(m.Subject, "\r\n") {
		return nil, nil, apperr.New(apperr.Invalid, "The subject must not contain line breaks.")
	}
	to, err := mail.ParseAddress(m.To)
	if err != nil {
		return nil, nil, apperr.Wrap(apperr.Invalid, err, "The recipient is not a valid e-mail address.")
	}

	var b bytes.Buffer
	writeHeader(&b, "From", from.String())
	writeHeader(&b, "To", to.String())
	writeHeader(&b, "Subject", mime.QEncoding.Encode("utf-8", m.Subject))
	writeHeader(&b, "Date", now.Format(time.RFC1123Z))
	writeHeader(&b, "Message-ID", messageID(from.Address))
	writeHeader(&b, "MIME-Version", "1.0")

	textType := mime.FormatMediaType("text/plain", map[string]string{"charset": "utf-8"})
	if m.HTML == "" {
		writeHeader(&b, "Content-Type", textType)
		writeHeader(&b, "Content-Transfer-Encoding", "quoted-printable")
		b.WriteString("\r\n")
		if err := writeQP(&b, m.Text); err != nil {
			return nil, nil, err
		}
		return to, b.Bytes(), nil
	}

	// A multipart entity may not itself be quoted-printable (RFC 2045 6.4),
	// so only its parts carry that encoding.
	mw := multipart.NewWriter(&b)
	writeHeader(&b, "Content-Type", mime.FormatMediaType("multipart/alternative", map[string]string{"boundary": mw.Boundary()}))
	b.WriteString("\r\n")
	// Parts go from plainest to richest; readers show the last one they can.
	alternatives := []struct{ contentType, body string }{
		{textType, m.Text},
		{mime.FormatMediaType("text/html", map[string]string{"charset": "utf-8"}), m.HTML},
	}
	for _, a := range alternatives {
		pw, err := mw.CreatePart(textproto.MIMEHeader{
			"Content-Type":              {a.contentType},
			"Content-Transfer-Encoding": {"quoted-printable"},
		})
		if err != nil {
			return nil, nil, fmt.Errorf("notify: build message: %w", err)
		}
		if err := writeQP(pw, a.body); err != nil {
			return nil, nil, err
		}
	}
	if err := mw.Close(); err != nil {
		return nil, nil, fmt.Errorf("notify: build message: %w", err)
	}
	return to, b.Bytes(), nil
}

// writeHeader writes one header field, folded at spaces. RFC 2047 limits a
// line holding encoded words to 76 characters, and the encoder splits a long
// subject into words of up to 75 separated by spaces, so a word that does not
// fit goes on a continuation line, even the first one.
func writeHeader(b *bytes.Buffer, name, value string) {
	const limit = 76
	b.WriteString(name)
	b.WriteString(":")
	lineLen := len(name) + 1
	for _, word := range strings.Split(value, " ") {
		if lineLen+1+len(word) > limit && word != "" {
			b.WriteString("\r\n")
			lineLen = 0
		}
		b.WriteString(" ")
		b.WriteString(word)
		lineLen += 1 + len(word)
	}
	b.WriteString("\r\n")
}

func writeQP(w io.Writer, s string) error {
	// The writer's text mode turns every line ending into CRLF and keeps
	// lines within 76 characters.
	qp := quotedprintable.NewWriter(w)
	if _, err := io.WriteString(qp, s); err != nil {
		return fmt.Errorf("notify: encode body: %w", err)
	}
	if err := qp.Close(); err != nil {
		return fmt.Errorf("notify: encode body: %w", err)
	}
	return nil
}

func messageID(fromAddr string) string {
	domain := "localhost"
	if at := strings.LastIndex(fromAddr, "@"); at >= 0 && at < len(fromAddr)-1 {
		domain = fromAddr[at+1:]
	}
	return "<" + hex.EncodeToString(randomBytes(16)) + "@" + domain + ">"
}

func randomBytes(n int) []byte {
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go 1.24+).
	return b
}
