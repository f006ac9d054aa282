package web

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/lms-platform/lms/client"
)

// The session is the API token itself, kept in the httpOnly cookie
// lms_session: page scripts never see it, and the frontend adds it as
// Authorization when it calls the API for the browser. A second httpOnly
// cookie, lms_demo, marks a session opened by the demo student button, so
// that an API 401 (the hourly demo reset ends every token) logs the demo
// student in again once instead of signing the visitor out.
const (
	sessionCookie = "lms_session"
	demoCookie    = "lms_demo"
	// ltiSessionTTL is the spec's LTI session cookie lifetime.
	ltiSessionTTL = 8 * time.Hour
)

// session is the caller's token as read from the cookie.
type session struct {
	token string
	demo  bool
	// iat and exp come from the token's payload, read without checking
	// the signature: they only tell when to refresh. Zero when unknown.
	iat, exp time.Time
}

func (h *Handler) readSession(r *http.Request) *session {
	c, err := r.Cookie(sessionCookie)
	if err != nil || c.Value == "" {
		return nil
	}
	s := &session{token: c.Value}
	if d, err := r.Cookie(demoCookie); err == nil && d.Value == "student" {
		s.demo = true
	}
	s.iat, s.exp = tokenTimes(s.token)
	return s
}

// tokenTimes reads iat and exp from a JWT's payload.
func tokenTimes(token string) (iat, exp time.Time) {
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return
	}
	raw, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return
	}
	var claims struct {
		IAT int64 `json:"iat"`
		EXP int64 `json:"exp"`
	}
	if json.Unmarshal(raw, &claims) != nil {
		return
	}
	if claims.IAT > 0 {
		iat = time.Unix(claims.IAT, 0)
	}
	if claims.EXP > 0 {
		exp = time.Unix(claims.EXP, 0)
	}
	return
}

// secure says whether cookies must be Secure: the request came over HTTPS,
// directly or (with trust proxy) through a TLS-terminating proxy.
func (h *Handler) secure(r *http.Request) bool {
	return h.scheme(r) == "https"
}

// setSession stores a token in the cookie until expires (zero: the
// browser session), marking demo student sessions.
func (h *Handler) setSession(w http.ResponseWriter, r *http.Request, tok client.Issued, demo bool, maxAge time.Duration) {
	c := &http.Cookie{Name: sessionCookie, Value: tok.Token, Path: "/", HttpOnly: true,
		SameSite: http.SameSiteLaxMode, Secure: h.secure(r)}
	switch {
	case maxAge > 0:
		c.MaxAge = int(maxAge / time.Second)
	case !tok.ExpiresAt.IsZero():
		c.MaxAge = max(int(tok.ExpiresAt.Sub(h.clock.Now())/time.Second), 1)
	}
	http.SetCookie(w, c)
	d := &http.Cookie{Name: demoCookie, Path: "/", HttpOnly: true, SameSite: http.SameSiteLaxMode, Secure: c.Secure}
	if demo {
		d.Value, d.MaxAge = "student", c.MaxAge
		if d.MaxAge == 0 {
			d.MaxAge = int(ltiSessionTTL / time.Second)
		}
	} else {
		d.MaxAge = -1
	}
	http.SetCookie(w, d)
}

func (h *Handler) clearSession(w http.ResponseWriter, r *http.Request) {
	for _, name := range []string{sessionCookie, demoCookie, teachCookie} {
		http.SetCookie(w, &http.Cookie{Name: name, Path: "/", MaxAge: -1, HttpOnly: true,
			SameSite: http.SameSiteLaxMode, Secure: h.secure(r)})
	}
}

// refresher renews tokens past half their lifetime. Refreshing revokes
// the old token, so parallel requests carrying the same old token (a page
// and its pings) share one refresh and its result for a while, instead
// of each revoking the token the other just received.
type refresher struct {
	mu    sync.Mutex
	calls map[[32]byte]*refreshCall
}

type refreshCall struct {
	done chan struct{}
	tok  client.Issued
	err  error
	at   time.Time
}

// refreshMemo is how long the result of a refresh answers for the old
// token.
const refreshMemo = 2 * time.Minute

// maybeRefresh renews s's token when it is past half its lifetime and
// still valid; the new token is set in the cookie and in s.
func (h *Handler) maybeRefresh(ctx context.Context, w http.ResponseWriter, r *http.Request, s *session) {
	now := h.clock.Now()
	if s == nil || s.exp.IsZero() || s.iat.IsZero() || !now.Before(s.exp) || now.Before(s.iat.Add(s.exp.Sub(s.iat)/2)) {
		return
	}
	key := sha256.Sum256([]byte(s.token))
	rf := &h.refresh
	rf.mu.Lock()
	if rf.calls == nil {
		rf.calls = map[[32]byte]*refreshCall{}
	}
	for k, c := range rf.calls {
		if now.Sub(c.at) > refreshMemo {
			select {
			case <-c.done:
				delete(rf.calls, k)
			default:
			}
		}
	}
	c, ok := rf.calls[key]
	if !ok {
		c = &refreshCall{done: make(chan struct{}), at: now}
		rf.calls[key] = c
	}
	rf.mu.Unlock()
	if !ok {
		// Detached from the request: the others waiting for it must not
		// fail because this browser went away.
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 15*time.Second)
		var tok *client.Issued
		if tok, c.err = h.api.as(h.apiHost(r), s.token).GetAuthRefresh(cctx); c.err == nil {
			c.tok = *tok
		}
		cancel()
		close(c.done)
	} else {
		select {
		case <-c.done:
		case <-ctx.Done():
			return
		}
	}
	if c.err != nil || c.tok.Token == "" {
		return
	}
	s.token = c.tok.Token
	s.iat, s.exp = tokenTimes(c.tok.Token)
	h.setSession(w, r, c.tok, s.demo, 0)
}

// demoRelogin logs the demo student in again after an API 401, once, when
// the tenant runs in demo mode and s was a demo student session.
func (h *Handler) demoRelogin(ctx context.Context, w http.ResponseWriter, r *http.Request, s *session) bool {
	if s == nil || !s.demo || !h.demoInfo(ctx, r).Enabled {
		return false
	}
	tok, err := h.api.as(h.apiHost(r), "").PostDemoLogin(ctx, client.DemoLoginInputBody{Role: "student"})
	if err != nil || tok.Token == "" {
		return false
	}
	s.token = tok.Token
	s.iat, s.exp = tokenTimes(tok.Token)
	h.setSession(w, r, *tok, true, 0)
	return true
}

// userCall makes an authenticated call for a page: fn calls the API with
// the typed client signed in as s. The token is refreshed when due, and a
// demo student session survives a demo reset. A final 401 clears the
// session.
func (h *Handler) userCall(w http.ResponseWriter, r *http.Request, s *session, fn func(api *client.Client) error) error {
	ctx := r.Context()
	h.maybeRefresh(ctx, w, r, s)
	call := func() error { return fn(h.api.as(h.apiHost(r), s.token)) }
	err := call()
	if client.StatusOf(err) == http.StatusUnauthorized {
		if h.demoRelogin(ctx, w, r, s) {
			err = call()
		}
		if client.StatusOf(err) == http.StatusUnauthorized {
			h.clearSession(w, r)
		}
	}
	return err
}
