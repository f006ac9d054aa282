// Package smtptest runs a real, minimal SMTP server for tests: it listens on
// a loopback port, speaks enough ESMTP for net/smtp clients, and keeps every
// message it receives, decoded, for the test to inspect.
package smtptest

import (
	"crypto/tls"
	"net"
	"net/mail"
	"slices"
	"sync"
	"testing"
	"time"
)

// Mail is one message the server accepted.
type Mail struct {
	From string   // envelope sender (MAIL FROM)
	To   []string // envelope recipients (RCPT TO)
	User string   // AUTH PLAIN user of the session; empty without AUTH
	TLS  bool     // whether the session was encrypted when the message came
	Data []byte   // the message as received, dot-unstuffed, CRLF line endings

	Header  mail.Header
	Subject string // Subject header with RFC 2047 words decoded
	Body    string // decoded text/plain part, line endings as "\n"
	HTML    string // decoded text/html part, line endings as "\n"
	// ParseErr says why Header, Body or HTML could not be read; nil when the
	// message parsed.
	ParseErr error
}

// Option changes how a server behaves.
type Option func(*Server)

// WithAuth makes the server offer AUTH PLAIN and accept any credentials,
// recording the user on each message. Without it AUTH is refused.
func WithAuth() Option { return func(s *Server) { s.auth = true } }

// WithSTARTTLS makes the server offer STARTTLS with a self-signed
// certificate; clients trust it through ClientTLSConfig.
func WithSTARTTLS() Option { return func(s *Server) { s.startTLS = true } }

// WithImplicitTLS makes the server speak TLS from the first byte (smtps).
func WithImplicitTLS() Option { return func(s *Server) { s.implicitTLS = true } }

// Server is a running test SMTP server. It is stopped by the test's cleanup.
type Server struct {
	auth, startTLS, implicitTLS bool
	serverTLS, clientTLS        *tls.Config

	ln net.Listener
	wg sync.WaitGroup

	mu      sync.Mutex
	mails   []Mail
	arrived chan struct{} // closed and replaced whenever a message arrives
	conns   map[net.Conn]struct{}
	closed  bool
}

// Start starts a server on 127.0.0.1 with a free port and stops it, closing
// every connection, when the test ends.
func Start(t testing.TB, opts ...Option) *Server {
	t.Helper()
	s := &Server{arrived: make(chan struct{}), conns: map[net.Conn]struct{}{}}
	for _, o := range opts {
		o(s)
	}
	if s.startTLS || s.implicitTLS {
		var err error
		s.serverTLS, s.clientTLS, err = selfSignedTLS()
		if err != nil {
			t.Fatalf("smtptest: certificate: %v", err)
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("smtptest: listen: %v", err)
	}
	if s.implicitTLS {
		ln = tls.NewListener(ln, s.serverTLS)
	}
	s.ln = ln
	s.wg.Add(1)
	go s.acceptLoop()
	t.Cleanup(s.close)
	return s
}

// Addr is the host:port the server listens on.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// URL is the server's address as an smtp:// URL (smtps:// with implicit TLS).
func (s *Server) URL() string {
	if s.implicitTLS {
		return "smtps://" + s.Addr()
	}
	return "smtp://" + s.Addr()
}

// ClientTLSConfig returns a client configuration that trusts the server's
// certificate, or nil when the server has no TLS.
func (s *Server) ClientTLSConfig() *tls.Config {
	if s.clientTLS == nil {
		return nil
	}
	return s.clientTLS.Clone()
}

// Messages returns the messages received so far, oldest first.
func (s *Server) Messages() []Mail {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.mails)
}

// Wait returns the messages once at least n have arrived, and fails the test
// if that takes longer than timeout. Delivery in the application is
// asynchronous, so tests wait for mail rather than read it at once. Like
// t.Fatal, Wait must be called from the test's goroutine.
func (s *Server) Wait(t testing.TB, n int, timeout time.Duration) []Mail {
	t.Helper()
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	for {
		s.mu.Lock()
		got, arrived := len(s.mails), s.arrived
		if got >= n {
			mails := slices.Clone(s.mails)
			s.mu.Unlock()
			return mails
		}
		s.mu.Unlock()
		select {
		case <-arrived:
		case <-timer.C:
			t.Fatalf("smtptest: %d of %d messages arrived within %v", got, n, timeout)
			return nil
		}
	}
}

func (s *Server) add(m Mail) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.mails = append(s.mails, m)
	close(s.arrived)
	s.arrived = make(chan struct{})
}

func (s *Server) acceptLoop() {
	defer s.wg.Done()
	for {
		conn, err := s.ln.Accept()
		if err != nil {
			if ne, ok := err.(net.Error); ok && ne.Timeout() {
				continue
			}
			return // the listener was closed
		}
		if !s.track(conn) {
			conn.Close()
			return
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			defer s.untrack(conn)
			newSession(s, conn).run()
		}()
	}
}

// track records conn so close can interrupt it; it refuses once closing.
func (s *Server) track(conn net.Conn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	s.conns[conn] = struct{}{}
	return true
}

func (s *Server) untrack(conn net.Conn) {
	conn.Close()
	s.mu.Lock()
	delete(s.conns, conn)
	s.mu.Unlock()
}

func (s *Server) close() {
	s.mu.Lock()
	s.closed = true
	conns := make([]net.Conn, 0, len(s.conns))
	for c := range s.conns {
		conns = append(conns, c)
	}
	s.mu.Unlock()
	s.ln.Close()
	for _, c := range conns {
		c.Close()
	}
	s.wg.Wait()
}
