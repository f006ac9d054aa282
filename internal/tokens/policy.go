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

// The rule of each route is its httpx.Route's Scope, declared with the
// route: a scope name, httpx.AnyToken or httpx.NoTokens. Enforce applies
// it to requests made with a scoped token and Describe writes it into the
// API description (x-lms-scope).

// known reports whether s is a rule: AnyToken, NoTokens or a scope name.
// The zero Scope (a route that set none) is not.
func known(s httpx.Scope) bool {
	if s == httpx.AnyToken || s == httpx.NoTokens {
		return true
	}
	_, ok := scopeByName(string(s))
	return ok
}

// allows reports whether a token holding held passes the rule s. A route
// without a rule refuses scoped tokens.
func allows(s httpx.Scope, held []string) bool {
	switch {
	case s == httpx.AnyToken:
		return true
	case s == httpx.NoTokens || s == "":
		return false
	}
	return Has(held, string(s))
}

// ruleOf is the rule of a registered operation: its Scope, NoTokens when
// it set none. A scope name that does not exist is a mistake in the
// route's declaration, found when the API is described at start.
func ruleOf(op *huma.Operation) httpx.Scope {
	s := httpx.ScopeOf(op)
	if s == "" {
		return httpx.NoTokens
	}
	if !known(s) {
		panic("tokens: " + op.Method + " " + op.Path + " names the unknown scope " + string(s))
	}
	return s
}

func describe(s httpx.Scope) string {
	switch s {
	case httpx.NoTokens:
		return "Scoped tokens: refused (403)."
	case httpx.AnyToken:
		return "Scoped tokens: any scoped token may call it."
	}
	return "Scoped tokens: need scope `" + string(s) + "`."
}

const (
	scopeExtension = "x-lms-scope"
	rateLimited    = "This token exceeded its rate limit."
)

// Describe writes each operation's rule into the API description: the
// x-lms-scope extension, a line of its description and the 403 answer;
// and the scopes, the order of checks and the error codes into the
// document's description and its bearer scheme.
func Describe(api huma.API) {
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
			rule := ruleOf(op)
			if op.Extensions == nil {
				op.Extensions = map[string]any{}
			}
			op.Extensions[scopeExtension] = string(rule)
			if op.Description != "" {
				op.Description += "\n\n"
			}
			op.Description += describe(rule)
			notFound, ok := op.Responses["404"]
			if !ok {
				continue
			}
			if _, ok := op.Responses["403"]; !ok {
				op.Responses["403"] = &huma.Response{Description: "Forbidden", Content: notFound.Content}
			}
			// A token with rate_limit_per_minute may be refused on any
			// route it may call.
			if _, ok := op.Responses["429"]; !ok && rule != httpx.NoTokens {
				op.Responses["429"] = &huma.Response{Description: "Too Many Requests", Content: notFound.Content}
			}
		}
	}
}

// Enforce is the huma middleware that applies each operation's Scope to
// requests made with a scoped token, in the interface's order: the caller is already
// authenticated; a missing scope answers 403 without counting against the
// token's limit; then the token's rate_limit_per_minute (429 with error
// rate_limited and Retry-After), counted per tenant host in lim (Redis
// when configured, so every replica shares it). Other requests pass.
func Enforce(api huma.API, lim limit.Limiter) func(huma.Context, func(huma.Context)) {
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
		rule := httpx.ScopeOf(op)
		if !allows(rule, pr.Scopes) {
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

func refusal(s httpx.Scope) error {
	if s != httpx.AnyToken && s != httpx.NoTokens && s != "" {
		return apperr.New(apperr.Forbidden, "This token lacks the scope "+string(s)+".")
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
