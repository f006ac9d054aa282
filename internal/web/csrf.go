package web

import (
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"strings"
)

// CSRF tokens. Every state-changing form of the frontend carries a token
// (field csrf_token) besides passing the same-origin check of guard. The
// browser holds a random secret in an httpOnly cookie (lms_csrf, or
// __Host-lms_csrf over HTTPS so that no sibling host can plant one); a
// token is the secret's HMAC of the form's purpose. Signing in and out
// starts a new secret, so a token belongs to one session of one browser:
// another browser's token, or one from before signing in, is refused. The
// device approval's token names the code too (deviceCSRF), so only the
// confirmation page of that very request can approve it.
const (
	csrfCookie = "lms_csrf"
	csrfField  = "csrf_token"
	// csrfForm is the purpose of the ordinary forms.
	csrfForm = "form"
	// csrfPlaceholder stands for the token in a memoised page; it is
	// replaced by the caller's own token each time the page is sent.
	csrfPlaceholder = "csrf-token-placeholder-0000000000"
)

func (h *Handler) csrfCookieName(r *http.Request) string {
	if h.secure(r) {
		return "__Host-" + csrfCookie
	}
	return csrfCookie
}

// csrfSecret is the browser's CSRF secret, from its cookie or, the first
// time, a new one set in the answer (once per answer).
func (h *Handler) csrfSecret(w http.ResponseWriter, r *http.Request) string {
	name := h.csrfCookieName(r)
	for _, sc := range w.Header().Values("Set-Cookie") {
		if v, ok := strings.CutPrefix(sc, name+"="); ok {
			if v, _, _ = strings.Cut(v, ";"); v != "" {
				return v
			}
		}
	}
	if c, err := r.Cookie(name); err == nil && validSecret(c.Value) {
		return c.Value
	}
	return h.newCSRFSecret(w, r)
}

// newCSRFSecret starts a new secret: at signing in and out, and for a
// browser that has none.
func (h *Handler) newCSRFSecret(w http.ResponseWriter, r *http.Request) string {
	b := make([]byte, 32)
	rand.Read(b)
	v := base64.RawURLEncoding.EncodeToString(b)
	http.SetCookie(w, &http.Cookie{Name: h.csrfCookieName(r), Value: v, Path: "/", HttpOnly: true,
		SameSite: http.SameSiteLaxMode, Secure: h.secure(r)})
	return v
}

func validSecret(v string) bool {
	b, err := base64.RawURLEncoding.DecodeString(v)
	return err == nil && len(b) == 32
}

func csrfMAC(secret, purpose string) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(purpose))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// csrfToken is the token of a form with this purpose for this browser.
func (h *Handler) csrfToken(w http.ResponseWriter, r *http.Request, purpose string) string {
	return csrfMAC(h.csrfSecret(w, r), purpose)
}

// csrfValid tells whether token is this browser's token for purpose.
func (h *Handler) csrfValid(r *http.Request, purpose, token string) bool {
	c, err := r.Cookie(h.csrfCookieName(r))
	if err != nil || !validSecret(c.Value) || token == "" {
		return false
	}
	return hmac.Equal([]byte(token), []byte(csrfMAC(c.Value, purpose)))
}

// csrfRefused answers 403: the form did not come from a page of this
// session.
func (h *Handler) csrfRefused(w http.ResponseWriter, r *http.Request) {
	h.log.Info("web: form without a valid CSRF token refused", "path", r.URL.Path)
	h.errorPage(w, r, http.StatusForbidden, "That did not work",
		"This form has expired or did not come from this site. Go back, reload the page and try again.")
}

// csrfForms checks the token of a urlencoded form (parsed here, within
// max bytes) before next runs; a multipart form must send the token as
// its first field (csrfMultipart).
func (h *Handler) csrfForms(max int64, next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); ct == "multipart/form-data" {
			if !h.csrfMultipart(w, r, max) {
				h.csrfRefused(w, r)
				return
			}
			next(w, r)
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, max)
		if err := r.ParseForm(); err != nil {
			h.errorPage(w, r, http.StatusBadRequest, "That did not work", "The form could not be read.")
			return
		}
		if !h.csrfValid(r, csrfForm, r.PostFormValue(csrfField)) {
			h.csrfRefused(w, r)
			return
		}
		next(w, r)
	}
}

// csrfMultipart reads a multipart body's first part, which must be the
// csrf_token field, and puts back what it read so that the handler passes
// the whole body on unchanged.
func (h *Handler) csrfMultipart(w http.ResponseWriter, r *http.Request, max int64) bool {
	_, params, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || params["boundary"] == "" {
		return false
	}
	body := http.MaxBytesReader(w, r.Body, max)
	var read bytes.Buffer
	mr := multipart.NewReader(io.TeeReader(body, &read), params["boundary"])
	part, err := mr.NextPart()
	if err != nil || part.FormName() != csrfField {
		return false
	}
	token, err := io.ReadAll(io.LimitReader(part, 256))
	if err != nil {
		return false
	}
	r.Body = struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(read.Bytes()), body), body}
	return h.csrfValid(r, csrfForm, string(token))
}
