// Package scan checks uploads for malware through a ClamAV daemon (clamd)
// before they are stored, with clamd's INSTREAM command over TCP or a unix
// socket. Scanning is optional (LMS_CLAMAV_ADDR); when it is configured it
// fails closed: an upload that cannot be scanned is refused with 503.
package scan

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"time"

	"github.com/lms-platform/lms/internal/apperr"
)

// Scanner checks one upload; field names it in a refusal.
type Scanner interface {
	Check(ctx context.Context, r io.Reader, field string) error
}

// Check runs sc on r, or does nothing when no scanner is configured.
func Check(ctx context.Context, sc Scanner, r io.Reader, field string) error {
	if sc == nil {
		return nil
	}
	return sc.Check(ctx, r, field)
}

const (
	// chunkSize is how much of the upload each INSTREAM chunk carries.
	chunkSize = 64 << 10
	// idleTimeout bounds each read and write: a daemon that stops answering
	// fails the upload instead of holding it.
	idleTimeout = 30 * time.Second
)

// Clamd scans through a clamd daemon.
type Clamd struct {
	network, addr string
}

// NewClamd takes tcp://host:port, unix:///path/to/clamd.ctl, host:port or
// an absolute socket path.
func NewClamd(addr string) (*Clamd, error) {
	switch {
	case strings.HasPrefix(addr, "unix://"):
		return &Clamd{"unix", strings.TrimPrefix(addr, "unix://")}, nil
	case strings.HasPrefix(addr, "/"):
		return &Clamd{"unix", addr}, nil
	case strings.HasPrefix(addr, "tcp://"):
		addr = strings.TrimPrefix(addr, "tcp://")
	}
	if _, _, err := net.SplitHostPort(addr); err != nil {
		return nil, fmt.Errorf("scan: clamd address %q: want tcp://host:port or unix:///path", addr)
	}
	return &Clamd{"tcp", addr}, nil
}

// Check streams r to clamd and refuses it with 422 when clamd finds
// malware, or with 503 when clamd cannot be asked.
func (c *Clamd) Check(ctx context.Context, r io.Reader, field string) error {
	found, err := c.scan(ctx, r)
	if err != nil {
		return apperr.Wrap(apperr.Unavailable, err, "The malware scanner is unavailable; try again shortly.")
	}
	if found != "" {
		return apperr.Field(field, fmt.Sprintf("The %s contains malware (%s) and was refused.", field, found))
	}
	return nil
}

// Ping asks clamd whether it answers.
func (c *Clamd) Ping(ctx context.Context) error {
	conn, err := c.dial(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	if _, err := conn.Write([]byte("zPING\x00")); err != nil {
		return fmt.Errorf("scan: ping: %w", err)
	}
	reply, err := readReply(conn)
	if err != nil {
		return err
	}
	if reply != "PONG" {
		return fmt.Errorf("scan: ping: clamd answered %q", reply)
	}
	return nil
}

func (c *Clamd) dial(ctx context.Context) (net.Conn, error) {
	var d net.Dialer
	conn, err := d.DialContext(ctx, c.network, c.addr)
	if err != nil {
		return nil, fmt.Errorf("scan: dial clamd: %w", err)
	}
	// Cancelling ctx (the client left) stops the scan.
	stop := context.AfterFunc(ctx, func() { conn.SetDeadline(time.Now()) })
	return &ctxConn{Conn: conn, stop: stop}, nil
}

// scan returns the name of what clamd found, or "" for a clean stream.
func (c *Clamd) scan(ctx context.Context, r io.Reader) (string, error) {
	conn, err := c.dial(ctx)
	if err != nil {
		return "", err
	}
	defer conn.Close()
	if _, err := conn.Write([]byte("zINSTREAM\x00")); err != nil {
		return "", fmt.Errorf("scan: start stream: %w", err)
	}
	buf := make([]byte, 4+chunkSize)
	for {
		n, rerr := io.ReadFull(r, buf[4:])
		if n > 0 {
			binary.BigEndian.PutUint32(buf[:4], uint32(n))
			conn.SetWriteDeadline(time.Now().Add(idleTimeout))
			if _, err := conn.Write(buf[:4+n]); err != nil {
				// clamd closes the stream early when it passes its
				// StreamMaxLength; its reply says so.
				if reply, rerr := readReply(conn); rerr == nil {
					return "", fmt.Errorf("scan: clamd: %s", reply)
				}
				return "", fmt.Errorf("scan: send chunk: %w", err)
			}
		}
		if errors.Is(rerr, io.EOF) || errors.Is(rerr, io.ErrUnexpectedEOF) {
			break
		}
		if rerr != nil {
			return "", fmt.Errorf("scan: read upload: %w", rerr)
		}
	}
	if _, err := conn.Write([]byte{0, 0, 0, 0}); err != nil {
		return "", fmt.Errorf("scan: end stream: %w", err)
	}
	reply, err := readReply(conn)
	if err != nil {
		return "", err
	}
	return verdict(reply)
}

// verdict reads clamd's answer to a stream: "stream: OK",
// "stream: <name> FOUND", or an error ("INSTREAM size limit exceeded.
// ERROR").
func verdict(reply string) (string, error) {
	result := strings.TrimPrefix(reply, "stream: ")
	switch {
	case result == "OK":
		return "", nil
	case strings.HasSuffix(result, " FOUND"):
		return strings.TrimSuffix(result, " FOUND"), nil
	default:
		return "", fmt.Errorf("scan: clamd: %s", reply)
	}
}

// readReply reads one NUL-terminated answer (the z-prefixed commands'
// framing).
func readReply(conn net.Conn) (string, error) {
	conn.SetReadDeadline(time.Now().Add(idleTimeout))
	var b bytes.Buffer
	one := make([]byte, 1)
	for b.Len() < 4096 {
		if _, err := conn.Read(one); err != nil {
			return "", fmt.Errorf("scan: read clamd reply: %w", err)
		}
		if one[0] == 0 {
			return strings.TrimSpace(b.String()), nil
		}
		b.WriteByte(one[0])
	}
	return "", errors.New("scan: clamd reply too long")
}

// ctxConn drops the context watch when the connection is closed.
type ctxConn struct {
	net.Conn
	stop func() bool
}

func (c *ctxConn) Close() error {
	c.stop()
	return c.Conn.Close()
}
