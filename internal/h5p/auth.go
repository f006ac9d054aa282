package h5p

import (
	"context"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/lms-platform/lms/internal/access"
	"github.com/lms-platform/lms/internal/apperr"
	"github.com/lms-platform/lms/internal/auth"
	"github.com/lms-platform/lms/internal/cache"
	"github.com/lms-platform/lms/internal/content"
	"github.com/lms-platform/lms/internal/httpx"
	"github.com/lms-platform/lms/internal/platform"
	"github.com/lms-platform/lms/internal/tokens"
)

// Leeway is the clock tolerance for a token's exp and nbf.
const Leeway = 30 * time.Second

// User is the caller of an H5P request.
type User struct {
	ID          string   `json:"id"`
	Name        string   `json:"name"`
	Email       string   `json:"email"`
	Roles       []string `json:"roles"`
	Permissions []string `json:"permissions"`
	// System is the other parts of the platform calling with the internal
	// token: it holds every permission.
	System bool `json:"system"`
	// Anonymous callers may play content; nothing is saved for them.
	Anonymous bool `json:"anonymous"`
	// tokenID, scopes and rateLimit describe a scoped token's caller, for
	// its rate limit and the agent audit.
	tokenID   string
	scopes    []string
	rateLimit int
	// grant is set for a caller holding an H5P play grant: it may play
	// that one content and keep its own state of it, nothing more.
	grant *content.H5PGrant
}

// Can reports whether the user holds the permission.
func (u *User) Can(perm string) bool {
	if u == nil {
		return false
	}
	return u.System || slices.Contains(u.Permissions, perm)
}

// LoggedIn reports whether the caller is a user (or the system), not
// anonymous.
func (u *User) LoggedIn() bool { return u != nil && !u.Anonymous }

// Anonymous is the caller without a valid token.
func Anonymous() *User {
	return &User{ID: "anonymous", Name: "Anonymous", Email: "", Roles: []string{}, Permissions: []string{}, Anonymous: true}
}

// SystemUser is the caller with a valid internal token.
func SystemUser() *User {
	perms := make([]string, len(access.H5PPermissions))
	for i, p := range access.H5PPermissions {
		perms[i] = string(p)
	}
	return &User{ID: "system", Name: "System", Roles: []string{}, Permissions: perms, System: true}
}

type userKey struct{}

// UserFrom returns the request's caller; anonymous when none was set.
func UserFrom(ctx context.Context) *User {
	if u, ok := ctx.Value(userKey{}).(*User); ok {
		return u
	}
	return Anonymous()
}

func withUser(ctx context.Context, u *User) context.Context {
	ctx = context.WithValue(ctx, userKey{}, u)
	// The request log line carries the user id; the principal holds
	// nothing else and grants nothing.
	if id, err := strconv.ParseInt(u.ID, 10, 64); err == nil {
		ctx = httpx.WithPrincipal(ctx, &access.Principal{UserID: id, TokenID: u.tokenID, Scopes: u.scopes,
			RateLimit: u.rateLimit})
	}
	return ctx
}

// bearerToken is the token of the Authorization header, else of the
// _token query parameter the H5P library adds to its own AJAX calls.
func bearerToken(r *http.Request) string {
	if h := r.Header.Get("Authorization"); h != "" {
		scheme, token, ok := strings.Cut(h, " ")
		if ok && strings.EqualFold(scheme, "Bearer") {
			return strings.TrimSpace(token)
		}
	}
	return r.URL.Query().Get("_token")
}

// authenticate sets the caller of the request. It never refuses a
// request: routes decide what an anonymous caller may do.
func (s *Service) authenticate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t := httpx.TenantFrom(r.Context())
		u := s.identify(r, t)
		if u.grant != nil && !grantAllows(r, u.grant) {
			what := "play"
			if u.grant.Edit {
				what = "editor"
			}
			writeError(w, r, apperr.New(apperr.Forbidden, "An H5P grant opens only the "+what+" routes of its content."))
			return
		}
		next.ServeHTTP(w, r.WithContext(withUser(r.Context(), u)))
	})
}

func (s *Service) identify(r *http.Request, t *platform.Tenant) *User {
	if httpx.InternalTokenValid(r, s.internalKey) {
		return SystemUser()
	}
	raw := bearerToken(r)
	if raw == "" || t == nil {
		return Anonymous()
	}
	if strings.HasPrefix(raw, tokens.Prefix) {
		return s.scopedCaller(r, t, raw)
	}
	if content.IsH5PGrant(raw) {
		return grantCaller(r, t, raw, s.clock.Now())
	}
	claims, err := auth.Parse(t, s.clock.Now(), raw, Leeway)
	if err != nil || claims.Subject == "" {
		return Anonymous()
	}
	news := s.newsOf(t)
	if news.revoked(claims.ID) {
		return Anonymous()
	}
	news.saw(claims.ID, claims.Subject, profileKey(t, raw))
	return s.profile(r.Context(), t, raw, claims)
}

// news is what the service heard of a tenant's revoked tokens and changed
// accounts (platform.Tenant.Watch: from this process at once, from the
// others through Redis). A revoked token is anonymous at once, without
// asking the API, for as long as a profile cached before the revocation
// may live. A change drops the cached profiles of the tokens this process
// saw, so that their next request asks the API again: a changed user's
// (roles, blocked, deleted), a revoked token's, or every one of a
// recreated tenant.
type news struct {
	now   func() time.Time
	cache cache.Cache

	mu    sync.Mutex
	ended map[string]time.Time // revoked token id → until
	seen  map[string]seenToken // token id → its profile
	// sweepAt is the size of seen at which saw forgets old entries: twice
	// what the last sweep left, so sweeps cost little per request.
	sweepAt int
}

// seenToken is a token whose profile may be cached.
type seenToken struct {
	key   string // the profile's cache key
	user  string // access.UserKey of the token's subject
	until time.Time
}

type newsKey struct{}

func (s *Service) newsOf(t *platform.Tenant) *news {
	return t.Local(newsKey{}, func() any {
		n := &news{now: s.clock.Now, cache: s.cache, ended: map[string]time.Time{}, seen: map[string]seenToken{},
			sweepAt: minSweep}
		t.Watch(n.heard)
		return n
	}).(*news)
}

func (n *news) revoked(tokenID string) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	until, ok := n.ended[tokenID]
	return ok && n.now().Before(until)
}

// saw notes that the profile of the token (its jti, or a scoped token's
// id) of the user subject may be cached under key from now on.
func (n *news) saw(tokenID, subject, key string) {
	id, _ := strconv.ParseInt(subject, 10, 64)
	n.mu.Lock()
	defer n.mu.Unlock()
	now := n.now()
	if len(n.seen) >= n.sweepAt {
		n.forget(now)
		n.sweepAt = max(minSweep, 2*len(n.seen))
	}
	n.seen[tokenID] = seenToken{key: key, user: access.UserKey(id), until: now.Add(ProfileTTL)}
}

// minSweep is the size of seen below which saw never sweeps.
const minSweep = 1024

func (n *news) heard(keys []string) {
	var drop []string
	n.mu.Lock()
	now := n.now()
	n.forget(now)
	for _, k := range keys {
		if id, ok := access.RevokedToken(k); ok {
			n.ended[id] = now.Add(ProfileTTL)
			if tok, ok := n.seen[id]; ok {
				drop = append(drop, tok.key)
			}
			continue
		}
		for _, tok := range n.seen {
			if k == access.TenantKey || k == tok.user {
				drop = append(drop, tok.key)
			}
		}
	}
	n.mu.Unlock()
	// The cache only saves calls: a failed delete leaves an old profile for
	// its time to live, and revoked tokens are refused above anyway.
	_ = n.cache.Delete(context.Background(), drop...)
}

// forget drops what is older than any cached profile.
func (n *news) forget(now time.Time) {
	for id, until := range n.ended {
		if !now.Before(until) {
			delete(n.ended, id)
		}
	}
	for id, tok := range n.seen {
		if !now.Before(tok.until) {
			delete(n.seen, id)
		}
	}
}

// grantCaller is the caller of an H5P grant (content.H5PGrant): its user,
// confined to the grant's content by grantAllows. A play grant holds no
// permission and comes only from the Authorization header. An edit grant
// holds what editing its content needs, h5p_create for a new one and
// h5p_update for another, checked when it was issued (editGrant); it may
// also come as _token, because the H5P editor client builds its AJAX and
// upload URLs itself and cannot send a header. A bad or expired grant is
// anonymous, as a bad token is.
func grantCaller(r *http.Request, t *platform.Tenant, raw string, now time.Time) *User {
	g, err := content.VerifyH5PGrant(t.URLKey, raw, now)
	if err != nil || !g.Edit && r.Header.Get("Authorization") == "" {
		return Anonymous()
	}
	perms := []string{}
	switch {
	case g.Edit && g.ContentID == content.NewContent:
		perms = []string{string(access.H5PCreate)}
	case g.Edit:
		perms = []string{string(access.H5PUpdate)}
	}
	return &User{ID: strconv.FormatInt(g.UserID, 10), Roles: []string{}, Permissions: perms, grant: &g}
}

// playRoutes are the routes a play grant opens: what the player needs to
// run its content and keep the grant user's state and result of it. The
// value names the request's content: a path value, a query parameter
// (?name), or "" for routes of no one content.
var playRoutes = map[string]string{
	"GET /h5p/contents/{id}/play":                                     "id",
	"GET /h5p/contentUserData/{contentId}/{dataType}/{subContentId}":  "contentId",
	"POST /h5p/contentUserData/{contentId}/{dataType}/{subContentId}": "contentId",
	"GET /h5p/finishedData":                                           "?contentId",
	// The body names the content: saveResult checks it (confined).
	"POST /h5p/finishedData":              "",
	"GET /h5p/content/{id}/{file...}":     "id",
	"GET /h5p/libraries/{uber}/{file...}": "",
	"GET /h5p/embed/play/{id}":            "id",
}

// editRoutes are the routes an edit grant opens: the editor page, its
// model, the editor's AJAX actions (those that install libraries need a
// permission the grant does not hold) and uploads, and saving the content:
// PATCH for a content, POST for a new one (id new).
var editRoutes = map[string]string{
	"GET /h5p/embed/edit/{id}":            "id",
	"GET /h5p/contents/{id}/edit":         "id",
	"PATCH /h5p/contents/{id}":            "id",
	"POST /h5p/contents":                  "=" + content.NewContent,
	"GET /h5p/ajax":                       "",
	"POST /h5p/ajax":                      "",
	"GET /h5p/temp-files/{path...}":       "",
	"GET /h5p/content/{id}/{file...}":     "id",
	"GET /h5p/libraries/{uber}/{file...}": "",
}

// grantAllows tells whether a grant opens the request's route for the
// content it names.
func grantAllows(r *http.Request, g *content.H5PGrant) bool {
	routes := playRoutes
	if g.Edit {
		routes = editRoutes
	}
	param, ok := routes[r.Pattern]
	if !ok {
		return false
	}
	switch {
	case param == "":
		return true
	case strings.HasPrefix(param, "="):
		return g.ContentID == param[1:]
	case strings.HasPrefix(param, "?"):
		return r.URL.Query().Get(param[1:]) == g.ContentID
	default:
		return r.PathValue(param) == g.ContentID
	}
}

// confined refuses a grant's caller the contents other than its own.
func (u *User) confined(contentID int64) error {
	if u.grant != nil && u.grant.ContentID != strconv.FormatInt(contentID, 10) {
		return apperr.New(apperr.Forbidden, "The H5P grant is for another content.")
	}
	return nil
}
