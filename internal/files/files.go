// Package files serves stored files through signed links. A link names
// the blob key, an expiry and an HMAC of both under the tenant's URL key,
// so it works without a token (in <img>, <video>, a PDF viewer) for as long
// as it is valid, and only on the tenant that signed it.
package files

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"path"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"github.com/danielgtaylor/huma/v2/adapters/humago"

	"github.com/lms-platform/lms/internal/apperr"
	"github.com/lms-platform/lms/internal/blob"
	"github.com/lms-platform/lms/internal/clock"
	"github.com/lms-platform/lms/internal/httpx"
	"github.com/lms-platform/lms/internal/platform"
)

// Signer makes and checks signed file links.
type Signer struct {
	Clock clock.Clock
	// TTL is how long a link is valid at least.
	TTL time.Duration
}

// URL returns the signed link of the file at key:
// /api/files/<key>?expires=<unix>&signature=<hmac>. The expiry is rounded
// up to a quarter of the TTL, so the links of one file made within that
// quarter are the same and browsers can cache what they fetch.
func (s *Signer) URL(t *platform.Tenant, key string) string {
	step := int64(max(s.TTL/4, time.Second) / time.Second)
	at := s.Clock.Now().Add(s.TTL).Unix()
	expires := (at + step - 1) / step * step
	segs := strings.Split(key, "/")
	for i, seg := range segs {
		segs[i] = url.PathEscape(seg)
	}
	q := url.Values{"expires": {strconv.FormatInt(expires, 10)}, "signature": {sign(t.URLKey, key, expires)}}
	return "/api/files/" + strings.Join(segs, "/") + "?" + q.Encode()
}

// Verify checks a link's signature and expiry: Forbidden when either
// fails.
func (s *Signer) Verify(t *platform.Tenant, key string, expires int64, signature string) error {
	want := sign(t.URLKey, key, expires)
	if !hmac.Equal([]byte(want), []byte(strings.ToLower(signature))) {
		return apperr.New(apperr.Forbidden, "Invalid signature.")
	}
	if s.Clock.Now().Unix() >= expires {
		return apperr.New(apperr.Forbidden, "This link has expired.")
	}
	return nil
}

func sign(secret []byte, key string, expires int64) string {
	mac := hmac.New(sha256.New, secret)
	// The purpose and a separator keep the signed text unambiguous and
	// distinct from the other links the URL key signs.
	fmt.Fprintf(mac, "file\n%s\n%d", key, expires)
	return hex.EncodeToString(mac.Sum(nil))
}

type fileInput struct {
	Key       string `path:"key" doc:"Blob key of the file, slashes included."`
	Expires   int64  `query:"expires" doc:"Unix time the link expires at."`
	Signature string `query:"signature" maxLength:"128" doc:"HMAC-SHA256 of the key and expiry."`
}

type fileOutput struct {
	Body func(huma.Context)
}

type readSeekCloser struct{ *bytes.Reader }

func (readSeekCloser) Close() error { return nil }

// inline types are shown by the browser; anything else is downloaded.
func inline(contentType string) bool {
	return strings.HasPrefix(contentType, "image/") || strings.HasPrefix(contentType, "audio/") ||
		strings.HasPrefix(contentType, "video/") || contentType == "application/pdf" || contentType == PlaylistType
}

// Routes registers GET /api/files/{key...}.
func Routes(api huma.API, s *Signer) {
	const pattern = "/api/files/{key...}"
	// A signed link carries its own authority: any scoped token may follow it.
	httpx.Handle(api, httpx.Route{Method: http.MethodGet, Path: pattern, Tags: []string{"files"},
		Scope:   httpx.AnyToken,
		Summary: "Serve a stored file through a signed link (expires and signature from the API's url fields); supports Range"},
		func(ctx context.Context, in *fileInput) (*fileOutput, error) {
			return s.serve(ctx, in)
		})
	httpx.DocumentAs(api, http.MethodGet, pattern, "/api/files/{key}", "")
}

func (s *Signer) serve(ctx context.Context, in *fileInput) (*fileOutput, error) {
	t := httpx.TenantFrom(ctx)
	if err := s.Verify(t, in.Key, in.Expires, in.Signature); err != nil {
		return nil, err
	}
	rc, info, err := t.Blob.Get(ctx, in.Key)
	if errors.Is(err, blob.ErrNotFound) || errors.Is(err, blob.ErrInvalidKey) {
		return nil, apperr.New(apperr.NotFound, "File not found.")
	}
	if err != nil {
		return nil, fmt.Errorf("files: open %s: %w", in.Key, err)
	}
	if info.ContentType == PlaylistType {
		data, err := s.signPlaylist(t, in.Key, rc)
		rc.Close()
		if err != nil {
			return nil, err
		}
		rc, info.Size = readSeekCloser{bytes.NewReader(data)}, int64(len(data))
	}
	if _, ok := rc.(io.ReadSeeker); !ok {
		rc = newRangeSeeker(ctx, t.Blob, in.Key, info.Size, rc)
	}
	maxAge := max(in.Expires-s.Clock.Now().Unix(), 0)
	return &fileOutput{Body: func(hc huma.Context) {
		defer rc.Close()
		r, w := humago.Unwrap(hc)
		Write(w, r, rc, info, fmt.Sprintf("private, max-age=%d", maxAge), false)
	}}, nil
}

// learnerUploads matches the keys of files learners upload: avatars
// (accounts) and project submissions (topics). A PDF or image of a
// learner's making is never shown inline, where its scripts would run in
// the tutor's browser on the API's origin.
var learnerUploads = regexp.MustCompile(`^(avatars/[0-9]+/|topics/[0-9]+/submissions/)`)

// Write sends a stored object: its content type, a Content-Disposition
// (inline only for images, audio, video and PDF, unless download is set
// or a learner uploaded it), no sniffing, and Range support when the
// reader can seek. Whatever is not inline, and SVG, gets a sandboxing CSP,
// so a browser that renders it anyway runs nothing.
func Write(w http.ResponseWriter, r *http.Request, rc io.Reader, info blob.Info, cacheControl string, download bool) {
	ct := info.ContentType
	if ct == "" {
		ct = "application/octet-stream"
	}
	disposition := "attachment"
	if inline(ct) && !download && !learnerUploads.MatchString(info.Key) {
		disposition = "inline"
	}
	h := w.Header()
	h.Set("Content-Type", ct)
	h.Set("Content-Disposition", mime.FormatMediaType(disposition, map[string]string{"filename": path.Base(info.Key)}))
	h.Set("Cache-Control", cacheControl)
	h.Set("X-Content-Type-Options", "nosniff")
	if disposition == "attachment" || ct == "image/svg+xml" {
		h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; img-src data:; sandbox")
	}
	if rs, ok := rc.(io.ReadSeeker); ok {
		http.ServeContent(w, r, "", info.ModTime, rs)
		return
	}
	h.Set("Content-Length", strconv.FormatInt(info.Size, 10))
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		// The status is sent; a failed copy only means the caller left.
		_, _ = io.Copy(w, rc)
	}
}
