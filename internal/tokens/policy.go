package tokens

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"strings"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/lms-platform/lms/internal/apperr"
	"github.com/lms-platform/lms/internal/httpx"
	"github.com/lms-platform/lms/internal/limit"
)

// Rule is what one route asks of a scoped token: a scope, any scoped
// token at all, or none (the route refuses scoped tokens).
type Rule struct {
	scope  string
	any    bool
	refuse bool
}

// Needs is the rule of a route that a token holding scope may call.
func Needs(scope string) Rule {
	if _, ok := scopeByName(scope); !ok {
		panic("tokens: unknown scope " + scope)
	}
	return Rule{scope: scope}
}

var (
	// AnyToken is the rule of a route every scoped token may call (health,
	// the caller's own profile and token).
	AnyToken = Rule{any: true}
	// NoTokens is the rule of a route no scoped token may call: sessions,
	// passwords, impersonation, account deletion.
	NoTokens = Rule{refuse: true}
)

// Scope is the scope the rule needs, "" for AnyToken and NoTokens.
func (r Rule) Scope() string { return r.scope }

// Allows reports whether a token holding held passes the rule.
func (r Rule) Allows(held []string) bool {
	return !r.refuse && (r.any || Has(held, r.scope))
}

// Extension is the value of the x-lms-scope extension of the route's
// OpenAPI operation: the scope, "any" or "none".
func (r Rule) Extension() string {
	switch {
	case r.refuse:
		return "none"
	case r.any:
		return "any"
	}
	return r.scope
}

func (r Rule) describe() string {
	switch {
	case r.refuse:
		return "Scoped tokens: refused (403)."
	case r.any:
		return "Scoped tokens: any scoped token may call it."
	}
	return "Scoped tokens: need scope `" + r.scope + "`."
}

// Policy maps every route ("METHOD /path" as registered) to its rule. A
// route it does not name refuses scoped tokens, and a test fails on it.
type Policy map[string]Rule

// Rule returns the route's rule; a route without one refuses.
func (p Policy) Rule(route string) (Rule, bool) {
	r, ok := p[route]
	if !ok {
		return NoTokens, false
	}
	return r, true
}

const (
	scopeExtension = "x-lms-scope"
	rateLimited    = "This token exceeded its rate limit."
)

// Describe writes each operation's rule into the API description: the
// x-lms-scope extension, a line of its description and the 403 answer;
// and the scopes, the order of checks and the error codes into the
// document's description and its bearer scheme.
func Describe(api huma.API, p Policy) {
	doc := api.OpenAPI()
	if doc.Info != nil {
		doc.Info.Description += "\n\n" + overview()
	}
	if doc.Components != nil {
		if b := doc.Components.SecuritySchemes["bearer"]; b != nil {
			b.Description = "A signed access token (RS256 JWT from a login), or a scoped personal token " +
				"(lms_pat_..., POST /api/auth/tokens) limited to its scopes."
		}
	}
	for _, item := range doc.Paths {
		for _, op := range []*huma.Operation{item.Get, item.Post, item.Put, item.Patch, item.Delete} {
			if op == nil {
				continue
			}
			rule, _ := p.Rule(op.Method + " " + op.Path)
			if op.Extensions == nil {
				op.Extensions = map[string]any{}
			}
			op.Extensions[scopeExtension] = rule.Extension()
			if op.Description != "" {
				op.Description += "\n\n"
			}
			op.Description += rule.describe()
			notFound, ok := op.Responses["404"]
			if !ok {
				continue
			}
			if _, ok := op.Responses["403"]; !ok {
				op.Responses["403"] = &huma.Response{Description: "Forbidden", Content: notFound.Content}
			}
			// A token with rate_limit_per_minute may be refused on any
			// route it may call.
			if _, ok := op.Responses["429"]; !ok && !rule.refuse {
				op.Responses["429"] = &huma.Response{Description: "Too Many Requests", Content: notFound.Content}
			}
		}
	}
}

// Enforce is the huma middleware that applies the policy to requests made
// with a scoped token, in the interface's order: the caller is already
// authenticated; a missing scope answers 403 without counting against the
// token's limit; then the token's rate_limit_per_minute (429 with error
// rate_limited and Retry-After), counted per tenant host in lim (Redis
// when configured, so every replica shares it). Other requests pass.
func Enforce(api huma.API, lim limit.Limiter, p Policy) func(huma.Context, func(huma.Context)) {
	return func(hc huma.Context, next func(huma.Context)) {
		ctx := hc.Context()
		pr := httpx.PrincipalFrom(ctx)
		if !pr.Scoped() {
			next(hc)
			return
		}
		op := hc.Operation()
		route := op.Method + " " + op.Path
		if a := auditOf(ctx); a != nil {
			a.route = route
		}
		rule, _ := p.Rule(route)
		if !rule.Allows(pr.Scopes) {
			httpx.Refuse(api, hc, refusal(rule))
			return
		}
		if pr.RateLimit > 0 {
			if err := checkTokenLimit(ctx, lim, pr.TokenID, pr.RateLimit); err != nil {
				httpx.Refuse(api, hc, err)
				return
			}
		}
		next(hc)
	}
}

// Limit is Enforce's per-token limit for handlers outside the API's
// routes (the H5P service), whose scope is checked where the caller is
// identified.
func Limit(lim limit.Limiter) httpx.Middleware {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if p := httpx.PrincipalFrom(r.Context()); p.Scoped() && p.RateLimit > 0 {
				if err := checkTokenLimit(r.Context(), lim, p.TokenID, p.RateLimit); err != nil {
					httpx.WriteError(w, r, err)
					return
				}
			}
			next.ServeHTTP(w, r)
		})
	}
}

func refusal(r Rule) error {
	if r.scope != "" {
		return apperr.New(apperr.Forbidden, "This token lacks the scope "+r.scope+".")
	}
	return apperr.New(apperr.Forbidden, "This route does not accept scoped tokens.")
}

func checkTokenLimit(ctx context.Context, lim limit.Limiter, tokenID string, perMinute int) error {
	host := ""
	if t := httpx.TenantFrom(ctx); t != nil {
		host = t.PrimaryHost()
	}
	d, err := lim.Allow(ctx, fmt.Sprintf("%s|pat|%s", host, tokenID), perMinute, time.Minute)
	if err != nil {
		return apperr.Wrap(apperr.Unavailable, err, "The rate limiter is unavailable.")
	}
	if d.Allowed {
		return nil
	}
	e := apperr.New(apperr.RateLimited, rateLimited)
	e.Code = "rate_limited"
	e.RetryAfter = max(int(math.Ceil(d.RetryAfter.Seconds())), 1)
	return e
}

// auditKey holds the request's audit record in its context; the huma
// middleware fills in the route pattern the request matched.
type auditKey struct{}

type auditNote struct{ route string }

func auditOf(ctx context.Context) *auditNote {
	a, _ := ctx.Value(auditKey{}).(*auditNote)
	return a
}

// overview is the scoped-token part of the API description.
func overview() string {
	var b strings.Builder
	b.WriteString("Scoped personal tokens (lms_pat_...) are sent as Authorization: Bearer like access tokens. " +
		"A scoped token acts as its user with the user's permissions narrowed to its scopes; each operation names " +
		"what it needs in x-lms-scope (a scope, \"any\" for every scoped token, \"none\" when scoped tokens are refused). " +
		"Checks run in this order: authentication (401 for a malformed, unknown, revoked or expired token), " +
		"the scope (403, which does not count against the token's limit), then the token's rate_limit_per_minute " +
		"(429 {success:false, message:'This token exceeded its rate limit.', error:'rate_limited'} with Retry-After). " +
		"A \":write\" scope includes the \":read\" scope of the same name. Scopes:")
	for _, sc := range Scopes {
		b.WriteString("\n- " + sc.Name + ": " + sc.Description)
	}
	b.WriteString("\n\nError codes (field error of a failed answer): rate_limited (429, a scoped token over its limit).")
	return b.String()
}
