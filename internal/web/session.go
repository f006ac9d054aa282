package web

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
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
	// cookie is the token the browser sent, older than token when the
	// keeper renewed it meanwhile.
	cookie string
}

func (h *Handler) readSession(r *http.Request) *session {
	c, err := r.Cookie(sessionCookie)
	if err != nil || c.Value == "" {
		return nil
	}
	s := &session{token: c.Value, cookie: c.Value}
	if d, err := r.Cookie(demoCookie); err == nil && d.Value == "student" {
		s.demo = true
	}
	// The keeper may have renewed the token while the browser was away:
	// every use of the session (pages, sign-out) takes the newest.
	if cur := h.keeper.current(s.token, h.clock.Now()); cur != "" {
		s.token = cur
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

// sessionTTL is how long a session of short tokens lasts without being
// used: its cookie's life, during which the frontend keeps renewing the
// token (keeper.go). Remember-me tokens (a month) outlive it and are
// simply renewed when used.
const sessionTTL = 8 * time.Hour

// setSession stores a token in the cookie, marking demo student
// sessions. maxAge > 0 fixes the cookie's life (LTI); otherwise a short
// token's cookie lives as long as its session (sessionTTL from signing
// in, carried over by refreshes) and a long token's until it expires.
// Short tokens are handed to the keeper, which renews them while the
// cookie lives even when no tab is open.
func (h *Handler) setSession(w http.ResponseWriter, r *http.Request, tok client.Issued, demo bool, maxAge time.Duration) {
	now := h.clock.Now()
	c := &http.Cookie{Name: sessionCookie, Value: tok.Token, Path: "/", HttpOnly: true,
		SameSite: http.SameSiteLaxMode, Secure: h.secure(r)}
	iat, exp := tokenTimes(tok.Token)
	if exp.IsZero() {
		exp = tok.ExpiresAt
	}
	short := !iat.IsZero() && !exp.IsZero() && exp.Sub(iat) < sessionTTL
	var until time.Time
	switch {
	case maxAge > 0:
		until = now.Add(maxAge)
	case short:
		if until = h.keeper.until(tok.Token); until.IsZero() {
			until = now.Add(sessionTTL)
		}
	case !exp.IsZero():
		until = exp
	}
	if !until.IsZero() {
		c.MaxAge = max(int(until.Sub(now)/time.Second), 1)
	}
	if short {
		h.keeper.keep(h.apiHost(r), tok.Token, until, now)
		h.startKeeper()
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
	// The marker outlives the session: when the browser comes back
	// without a session but with it, the sign-in page says the session
	// ended instead of just asking to sign in.
	http.SetCookie(w, &http.Cookie{Name: endedCookie, Value: "1", Path: "/", HttpOnly: true,
		SameSite: http.SameSiteLaxMode, Secure: c.Secure, MaxAge: c.MaxAge + int(endedMemory/time.Second)})
}

// endedCookie marks a browser that had a session; endedMemory is how long
// after the session's end the sign-in page still says it ended.
const (
	endedCookie = "lms_had_session"
	endedMemory = 30 * 24 * time.Hour
)

// clearSession ends the browser's session (the API refused its token,
// or the user signed out); the marker of a past session stays, so that
// the sign-in page says the session ended. Signing out removes it too
// (forgetSession).
func (h *Handler) clearSession(w http.ResponseWriter, r *http.Request) {
	if s := h.readSession(r); s != nil {
		// An admin acting as the user loses the way back too: the
		// browser signs in again.
		if a := h.keeper.actingOf(s.token); a != nil {
			h.keeper.drop(a.admin)
		}
		h.keeper.drop(s.token)
	}
	for _, name := range []string{sessionCookie, demoCookie} {
		http.SetCookie(w, &http.Cookie{Name: name, Path: "/", MaxAge: -1, HttpOnly: true,
			SameSite: http.SameSiteLaxMode, Secure: h.secure(r)})
	}
}

// forgetSession removes the marker of a past session: after signing out
// on purpose there is nothing to tell.
func (h *Handler) forgetSession(w http.ResponseWriter, r *http.Request) {
	http.SetCookie(w, &http.Cookie{Name: endedCookie, Path: "/", MaxAge: -1, HttpOnly: true,
		SameSite: http.SameSiteLaxMode, Secure: h.secure(r)})
}

// sessionEnded tells the sign-in page whether to say that the browser's
// session ended: it had one (the marker) and holds none now. It says so
// once: the marker is removed.
func (h *Handler) sessionEnded(w http.ResponseWriter, r *http.Request) bool {
	if c, err := r.Cookie(endedCookie); err != nil || c.Value == "" || h.readSession(r) != nil {
		return false
	}
	h.forgetSession(w, r)
	return true
}

// sessionEndedText is the sign-in page's notice, by language.
var sessionEndedText = map[string]string{
	"en": "Your session has ended, please sign in again.",
	"pl": "Twoja sesja wygasła, zaloguj się ponownie.",
	"zh": "您的会话已结束，请重新登录。",
}

// refresher renews tokens past half their lifetime. Refreshing revokes
// the old token, so parallel requests carrying the same old token (a page
// and its pings, the keeper's round) share one refresh and its result for
// a while, instead of each revoking the token the other just received.
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

// refreshDue tells whether a token with these times is past half its
// lifetime and still valid.
func refreshDue(now, iat, exp time.Time) bool {
	return !exp.IsZero() && !iat.IsZero() && now.Before(exp) && !now.Before(iat.Add(exp.Sub(iat)/2))
}

// refreshShared renews token at the API for the tenant host, sharing one
// call among all who ask with the same token.
func (h *Handler) refreshShared(ctx context.Context, host, token string) (client.Issued, error) {
	now := h.clock.Now()
	key := sha256.Sum256([]byte(token))
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
		if tok, c.err = h.api.as(host, token).GetAuthRefresh(cctx); c.err == nil {
			c.tok = *tok
		}
		cancel()
		close(c.done)
		if c.err == nil && c.tok.Token != "" {
			h.keeper.rotated(token, c.tok.Token)
		}
	} else {
		select {
		case <-c.done:
		case <-ctx.Done():
			return client.Issued{}, ctx.Err()
		}
	}
	if c.err == nil && c.tok.Token == "" {
		return client.Issued{}, errors.New("web: refresh answered no token")
	}
	return c.tok, c.err
}

// maybeRefresh brings the browser's cookie up to date: the keeper's newer
// token (readSession took it) when it renewed the session while the
// browser was away, then a refresh when the token is past half its
// lifetime. A new token is set in the cookie and in s.
func (h *Handler) maybeRefresh(ctx context.Context, w http.ResponseWriter, r *http.Request, s *session) {
	if s == nil {
		return
	}
	now := h.clock.Now()
	if s.cookie != s.token {
		h.setSession(w, r, client.Issued{Token: s.token, ExpiresAt: s.exp}, s.demo, 0)
		s.cookie = s.token
	}
	if !refreshDue(now, s.iat, s.exp) {
		return
	}
	tok, err := h.refreshShared(ctx, h.apiHost(r), s.token)
	if err != nil {
		return
	}
	s.token, s.cookie = tok.Token, tok.Token
	s.iat, s.exp = tokenTimes(tok.Token)
	h.setSession(w, r, tok, s.demo, 0)
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
	s.token, s.cookie = tok.Token, tok.Token
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
