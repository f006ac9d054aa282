package smtptest

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"strings"
)

// Limits from RFC 5321 section 4.5.3.1: a text line is at most 1000 octets
// with its CRLF. Command lines may be 512 octets, but AUTH carries base64
// credentials (RFC 4954 allows 12288), so commands share the text limit.
const (
	maxLine       = 1000
	maxRecipients = 100
	maxMessage    = 10 << 20
)

type session struct {
	srv  *Server
	conn net.Conn
	r    *bufio.Reader
	w    *bufio.Writer
	tls  bool

	greeted bool
	user    string
	from    string
	inMail  bool // MAIL was accepted and the transaction is open
	to      []string
}

func newSession(srv *Server, conn net.Conn) *session {
	_, isTLS := conn.(*tls.Conn)
	return &session{srv: srv, conn: conn, r: bufio.NewReader(conn), w: bufio.NewWriter(conn), tls: isTLS}
}

func (s *session) run() {
	if s.reply("220 smtptest ESMTP ready") != nil {
		return
	}
	for {
		line, tooLong, err := readLine(s.r)
		if err != nil {
			return
		}
		if tooLong {
			err = s.reply("500 5.5.2 Line too long")
		} else {
			verb, arg, _ := strings.Cut(line, " ")
			err = s.command(strings.ToUpper(verb), strings.TrimSpace(arg))
		}
		if err != nil {
			return // QUIT, or the connection is gone
		}
	}
}

var errQuit = errors.New("quit")

// command handles one command line; an error ends the session.
func (s *session) command(verb, arg string) error {
	switch verb {
	case "EHLO":
		if arg == "" {
			return s.reply("501 5.5.4 EHLO needs a domain")
		}
		s.greeted = true
		s.reset()
		lines := []string{"smtptest greets " + arg, "8BITMIME", "SMTPUTF8", fmt.Sprintf("SIZE %d", maxMessage)}
		if s.srv.startTLS && !s.tls {
			lines = append(lines, "STARTTLS")
		}
		if s.srv.auth {
			lines = append(lines, "AUTH PLAIN")
		}
		return s.replyLines(250, lines)
	case "HELO":
		if arg == "" {
			return s.reply("501 5.5.4 HELO needs a domain")
		}
		s.greeted = true
		s.reset()
		return s.reply("250 smtptest")
	case "STARTTLS":
		return s.startTLS()
	case "AUTH":
		return s.authenticate(arg)
	case "MAIL":
		return s.mail(arg)
	case "RCPT":
		return s.rcpt(arg)
	case "DATA":
		return s.data(arg)
	case "RSET":
		s.reset()
		return s.reply("250 2.0.0 OK")
	case "NOOP":
		return s.reply("250 2.0.0 OK")
	case "QUIT":
		s.reply("221 2.0.0 Bye")
		return errQuit
	}
	return s.reply("500 5.5.1 Command not recognized")
}

func (s *session) reset() {
	s.from, s.inMail, s.to = "", false, nil
}

func (s *session) startTLS() error {
	if !s.srv.startTLS || s.tls {
		return s.reply("502 5.5.1 STARTTLS not available")
	}
	if err := s.reply("220 2.0.0 Ready to start TLS"); err != nil {
		return err
	}
	tc := tls.Server(s.conn, s.srv.serverTLS)
	if err := tc.Handshake(); err != nil {
		return err
	}
	// RFC 3207: after the handshake the client starts over with EHLO and
	// nothing learned before it counts.
	s.r, s.w, s.tls = bufio.NewReader(tc), bufio.NewWriter(tc), true
	s.greeted, s.user = false, ""
	s.reset()
	return nil
}

func (s *session) authenticate(arg string) error {
	switch {
	case !s.srv.auth:
		return s.reply("502 5.5.1 AUTH not available")
	case !s.greeted:
		return s.reply("503 5.5.1 Send EHLO first")
	case s.user != "":
		return s.reply("503 5.5.1 Already authenticated")
	case s.inMail:
		return s.reply("503 5.5.1 AUTH not allowed during a mail transaction")
	}
	mech, initial, hasInitial := strings.Cut(arg, " ")
	if !strings.EqualFold(mech, "PLAIN") {
		return s.reply("504 5.5.4 Only AUTH PLAIN is supported")
	}
	if !hasInitial {
		if err := s.reply("334 "); err != nil {
			return err
		}
		line, tooLong, err := readLine(s.r)
		if err != nil {
			return err
		}
		if tooLong {
			return s.reply("500 5.5.2 Line too long")
		}
		initial = line
	}
	initial = strings.TrimSpace(initial)
	if initial == "*" {
		return s.reply("501 5.0.0 Authentication cancelled")
	}
	if initial == "=" { // RFC 4954: an empty initial response
		initial = ""
	}
	raw, err := base64.StdEncoding.DecodeString(initial)
	if err != nil {
		return s.reply("501 5.5.2 Cannot decode the response")
	}
	// PLAIN is authzid NUL authcid NUL password (RFC 4616).
	fields := strings.Split(string(raw), "\x00")
	if len(fields) != 3 || fields[1] == "" {
		return s.reply("501 5.5.2 Malformed PLAIN response")
	}
	s.user = fields[1]
	return s.reply("235 2.7.0 Authentication successful")
}

func (s *session) mail(arg string) error {
	switch {
	case !s.greeted:
		return s.reply("503 5.5.1 Send EHLO or HELO first")
	case s.inMail:
		return s.reply("503 5.5.1 Nested MAIL command")
	}
	addr, ok := parsePath(arg, "FROM:")
	if !ok {
		return s.reply("501 5.5.4 Syntax: MAIL FROM:<address>")
	}
	s.from, s.inMail = addr, true
	return s.reply("250 2.1.0 OK")
}

func (s *session) rcpt(arg string) error {
	if !s.inMail {
		return s.reply("503 5.5.1 Send MAIL first")
	}
	addr, ok := parsePath(arg, "TO:")
	if !ok || addr == "" {
		return s.reply("501 5.5.4 Syntax: RCPT TO:<address>")
	}
	if len(s.to) >= maxRecipients {
		return s.reply("452 4.5.3 Too many recipients")
	}
	s.to = append(s.to, addr)
	return s.reply("250 2.1.5 OK")
}

func (s *session) data(arg string) error {
	switch {
	case arg != "":
		return s.reply("501 5.5.4 DATA takes no argument")
	case len(s.to) == 0:
		return s.reply("503 5.5.1 Send RCPT first")
	}
	if err := s.reply("354 End data with <CR><LF>.<CR><LF>"); err != nil {
		return err
	}
	// Read to the end of the data even when it is too big or has too long a
	// line, so the reply lands where the client expects it.
	var buf bytes.Buffer
	var lineTooLong, tooBig bool
	for {
		line, tooLong, err := readLine(s.r)
		if err != nil {
			return err
		}
		if line == "." {
			break
		}
		lineTooLong = lineTooLong || tooLong
		line = strings.TrimPrefix(line, ".") // RFC 5321 4.5.2 transparency
		if buf.Len()+len(line)+2 > maxMessage {
			tooBig = true
			continue
		}
		buf.WriteString(line)
		buf.WriteString("\r\n")
	}
	m := Mail{From: s.from, To: s.to, User: s.user, TLS: s.tls}
	s.reset()
	switch {
	case lineTooLong:
		return s.reply("500 5.5.2 Line too long in message")
	case tooBig:
		return s.reply("552 5.3.4 Message too big")
	}
	m.Data = buf.Bytes()
	decode(&m)
	s.srv.add(m)
	return s.reply("250 2.0.0 OK: queued")
}

// parsePath reads "FROM:<addr> [parameters]" (prefix "FROM:" or "TO:"),
// returning addr. Parameters such as BODY=8BITMIME are accepted and ignored.
func parsePath(arg, prefix string) (string, bool) {
	if len(arg) < len(prefix) || !strings.EqualFold(arg[:len(prefix)], prefix) {
		return "", false
	}
	rest := strings.TrimSpace(arg[len(prefix):])
	if !strings.HasPrefix(rest, "<") {
		return "", false
	}
	end := strings.IndexByte(rest, '>')
	if end < 0 {
		return "", false
	}
	return rest[1:end], true
}

// readLine reads one line without its line ending (CRLF, or a bare LF,
// which is tolerated). A line longer than maxLine octets is consumed whole and
// reported as too long, so the session can carry on.
func readLine(r *bufio.Reader) (line string, tooLong bool, err error) {
	var buf []byte
	n := 0
	for {
		chunk, err := r.ReadSlice('\n')
		n += len(chunk)
		if n <= maxLine {
			buf = append(buf, chunk...)
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if err != nil {
			return "", false, err
		}
		break
	}
	if n > maxLine {
		return "", true, nil
	}
	line = strings.TrimSuffix(string(buf), "\n")
	return strings.TrimSuffix(line, "\r"), false, nil
}

func (s *session) reply(line string) error {
	s.w.WriteString(line)
	s.w.WriteString("\r\n")
	return s.w.Flush()
}

func (s *session) replyLines(code int, lines []string) error {
	for i, l := range lines {
		sep := "-"
		if i == len(lines)-1 {
			sep = " "
		}
		fmt.Fprintf(s.w, "%d%s%s\r\n", code, sep, l)
	}
	return s.w.Flush()
}
