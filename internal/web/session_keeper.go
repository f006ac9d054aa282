package web

import (
	"context"
	"crypto/sha256"
	"net/http"
	"sync"
	"time"

	"github.com/lms-platform/lms/client"
)

// A session of short tokens (five minutes by default) would end whenever
// the browser stays away longer than one token: the API refreshes only a
// valid token. The keeper renews such tokens on the server side, past
// half their lifetime, for as long as the session's cookie lives, so a
// learner who closes the tab for ten minutes comes back signed in. The
// browser's cookie keeps the token it was last given; the keeper maps it
// to the newest one, which the next request adopts.
//
// Sessions live in this process only: after a restart, or on another
// replica, a browser that stayed away longer than its token signs in
// again and is told that its session ended.
type keeper struct {
	mu sync.Mutex
	// byToken finds a session by the hash of any token a browser may
	// still present: the current one and those handed out in cookies.
	byToken map[[32]byte]*keptSession
	running bool
}

type keptSession struct {
	host  string
	token string
	until time.Time
	// handed are the tokens given to the browser in a cookie, with when;
	// only they (and the current token) are looked up.
	handed map[[32]byte]time.Time
	// acting is set when the session is an admin's impersonation of a
	// user: the admin's own session waits here, never in the browser.
	acting *acting
}

// acting is an admin acting as a user: the admin's token (resolved
// through the keeper, which keeps renewing it) and both names for the
// banner.
type acting struct {
	admin               string
	adminName, userName string
	userID              int64
}

const (
	// maxKept bounds the sessions kept alive: past it, new sessions live
	// only as long as their tokens while unused.
	maxKept = 100_000
	// keeperTick is how often the keeper looks for tokens to renew; well
	// under half the shortest sensible token lifetime (a minute).
	keeperTick = 15 * time.Second
)

func tokenKey(token string) [32]byte { return sha256.Sum256([]byte(token)) }

// keep records that token was handed to a browser for a session that
// lasts until until. A token the keeper knows joins its session.
func (k *keeper) keep(host, token string, until, now time.Time) {
	key := tokenKey(token)
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.byToken == nil {
		k.byToken = map[[32]byte]*keptSession{}
	}
	e := k.byToken[key]
	if e == nil {
		if len(k.byToken) >= maxKept {
			return
		}
		e = &keptSession{host: host, token: token, until: until, handed: map[[32]byte]time.Time{}}
		k.byToken[key] = e
	}
	e.handed[key] = now
}

// until is the end of the session token belongs to, or zero.
func (k *keeper) until(token string) time.Time {
	k.mu.Lock()
	defer k.mu.Unlock()
	if e := k.byToken[tokenKey(token)]; e != nil {
		return e.until
	}
	return time.Time{}
}

// current is the newest token of the session the browser's token belongs
// to ("" when the keeper does not know it). Once the browser presents the
// newest token, older ones it was given stop being looked up after
// refreshMemo (parallel requests may still carry them).
func (k *keeper) current(token string, now time.Time) string {
	key := tokenKey(token)
	k.mu.Lock()
	defer k.mu.Unlock()
	e := k.byToken[key]
	if e == nil {
		return ""
	}
	if e.token == token {
		for hk, at := range e.handed {
			if hk != key && now.Sub(at) > refreshMemo {
				delete(e.handed, hk)
				delete(k.byToken, hk)
			}
		}
	}
	return e.token
}

// rotated records a refresh of old into new (by a request or by the
// keeper's round). Tokens never handed to a browser are forgotten.
func (k *keeper) rotated(old, new string) {
	oldKey := tokenKey(old)
	k.mu.Lock()
	defer k.mu.Unlock()
	e := k.byToken[oldKey]
	if e == nil || e.token != old {
		return
	}
	if _, handed := e.handed[oldKey]; !handed {
		delete(k.byToken, oldKey)
	}
	e.token = new
	k.byToken[tokenKey(new)] = e
}

// actAs records that the session of token is an admin acting as a user.
// A token the keeper does not know yet (a long one) gets a session of
// its own until until, so that the admin can come back.
func (k *keeper) actAs(host, token string, a acting, until, now time.Time) {
	k.keep(host, token, until, now)
	k.mu.Lock()
	defer k.mu.Unlock()
	if e := k.byToken[tokenKey(token)]; e != nil {
		e.acting = &a
	}
	// The admin's token is looked up again when the admin comes back,
	// after the keeper may have renewed it.
	if e := k.byToken[tokenKey(a.admin)]; e != nil {
		e.handed[tokenKey(a.admin)] = now
	}
}

// actingOf is the impersonation the session of token is, with the
// admin's newest token, or nil.
func (k *keeper) actingOf(token string) *acting {
	k.mu.Lock()
	defer k.mu.Unlock()
	e := k.byToken[tokenKey(token)]
	if e == nil || e.acting == nil {
		return nil
	}
	a := *e.acting
	if admin := k.byToken[tokenKey(a.admin)]; admin != nil {
		a.admin = admin.token
	}
	return &a
}

// drop forgets the session token belongs to: it ended.
func (k *keeper) drop(token string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if e := k.byToken[tokenKey(token)]; e != nil {
		k.forget(e)
	}
}

func (k *keeper) forget(e *keptSession) {
	for hk := range e.handed {
		delete(k.byToken, hk)
	}
	delete(k.byToken, tokenKey(e.token))
}

// due lists the sessions whose tokens should be renewed now, forgetting
// those whose cookie has ended or whose token expired unrenewed.
func (k *keeper) due(now time.Time) []keptSession {
	k.mu.Lock()
	defer k.mu.Unlock()
	var out []keptSession
	seen := map[*keptSession]bool{}
	for _, e := range k.byToken {
		if seen[e] {
			continue
		}
		seen[e] = true
		iat, exp := tokenTimes(e.token)
		switch {
		case !now.Before(e.until) || exp.IsZero() || !now.Before(exp):
			k.forget(e)
		case refreshDue(now, iat, exp):
			out = append(out, keptSession{host: e.host, token: e.token})
		}
	}
	return out
}

// keepSessions renews every kept token that is due, one at a time (the
// same shared refresh a request would use). A token the API refuses ends
// its session; one it cannot renew now (unreachable) is tried next round.
func (h *Handler) keepSessions(ctx context.Context) {
	for _, e := range h.keeper.due(h.clock.Now()) {
		if ctx.Err() != nil {
			return
		}
		_, err := h.refreshShared(ctx, e.host, e.token)
		if st := client.StatusOf(err); st == http.StatusUnauthorized || st == http.StatusForbidden || st == http.StatusNotFound {
			h.keeper.drop(e.token)
		}
	}
}

// startKeeper runs keepSessions every keeperTick while sessions are kept;
// keep calls it through setSession, so the loop exists only when needed.
func (h *Handler) startKeeper() {
	k := &h.keeper
	k.mu.Lock()
	if k.running || len(k.byToken) == 0 {
		k.mu.Unlock()
		return
	}
	k.running = true
	k.mu.Unlock()
	go func() {
		t := time.NewTicker(keeperTick)
		defer t.Stop()
		for range t.C {
			h.keepSessions(context.Background())
			k.mu.Lock()
			if len(k.byToken) == 0 {
				k.running = false
				k.mu.Unlock()
				return
			}
			k.mu.Unlock()
		}
	}()
}
