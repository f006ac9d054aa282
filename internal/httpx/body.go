package httpx

import (
	"bytes"
	"compress/gzip"
	"context"
	"strconv"
	"strings"
	"sync"
)

// Body is the bytes of a JSON answer and, when a cache keeps the answer
// for many requests, its gzip encoding, made once by the first request
// that accepts it. A large answer read again and again (a course's
// program of 200 topics is 74 KB, 3 KB in gzip) costs the server more to
// send than to make; compressing an answer made for one request would
// cost more than sending it as it is.
type Body struct {
	JSON []byte
	kept bool

	once sync.Once
	gz   []byte
}

// KeptBody is the body of an answer a cache keeps: it may be sent gzipped.
func KeptBody(b []byte) *Body { return &Body{JSON: b, kept: true} }

// FreshBody is the body of an answer made for one request: always sent as
// it is.
func FreshBody(b []byte) *Body { return &Body{JSON: b} }

// minGzip is the smallest body worth compressing: below about one packet,
// compression saves no round trip.
const minGzip = 1400

// Encoded returns the bytes to send in answer to the request of ctx, and
// their Content-Encoding ("" when sent as they are). The answer's Vary
// header must name Accept-Encoding.
func (b *Body) Encoded(ctx context.Context) ([]byte, string) {
	if !b.kept || len(b.JSON) < minGzip {
		return b.JSON, ""
	}
	if info := infoFrom(ctx); info == nil || !acceptsGzip(info.acceptEncoding) {
		return b.JSON, ""
	}
	b.once.Do(func() {
		var buf bytes.Buffer
		w, _ := gzip.NewWriterLevel(&buf, gzip.BestSpeed)
		w.Write(b.JSON)
		w.Close()
		b.gz = buf.Bytes()
	})
	return b.gz, "gzip"
}

// acceptsGzip reports whether an Accept-Encoding header value accepts
// gzip (RFC 9110, section 12.5.3): named, or by "*", with a weight other
// than zero.
func acceptsGzip(acceptEncoding string) bool {
	for part := range strings.SplitSeq(acceptEncoding, ",") {
		coding, params, _ := strings.Cut(part, ";")
		coding = strings.ToLower(strings.TrimSpace(coding))
		if coding != "gzip" && coding != "x-gzip" && coding != "*" {
			continue
		}
		name, value, ok := strings.Cut(strings.TrimSpace(params), "=")
		if !ok || !strings.EqualFold(strings.TrimSpace(name), "q") {
			return true
		}
		if q, err := strconv.ParseFloat(strings.TrimSpace(value), 64); err == nil && q > 0 {
			return true
		}
	}
	return false
}
