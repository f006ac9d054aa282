package httpx

import (
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/lms-platform/lms/internal/apperr"
	"github.com/lms-platform/lms/internal/limit"
)

// Guard is the huma middleware that enforces each route's Who and rate
// limit before its handler runs. Limits are counted per tenant host.
func Guard(api huma.API, lim limit.Limiter) func(ctx huma.Context, next func(huma.Context)) {
	return func(hc huma.Context, next func(huma.Context)) {
		op := hc.Operation()
		ctx := hc.Context()
		if info := infoFrom(ctx); info != nil {
			info.route = op.Method + " " + op.Path
			info.credentials, _ = op.Metadata[metaCreds].(bool)
		}
		p := PrincipalFrom(ctx)
		if who, _ := op.Metadata[metaWho].(Who); who == User && p == nil {
			err := AuthError(ctx)
			if err == nil {
				err = apperr.New(apperr.Unauthorized, "Unauthenticated.")
			}
			writeGuardError(api, hc, err)
			return
		}
		if rl, ok := op.Metadata[metaLimit].(RateLimit); ok {
			if rl.Admit != nil {
				if err := rl.Admit(hc); err != nil {
					writeGuardError(api, hc, err)
					return
				}
			}
			if err := checkLimit(hc, lim, rl, op); err != nil {
				writeGuardError(api, hc, err)
				return
			}
		}
		next(hc)
	}
}

func checkLimit(hc huma.Context, lim limit.Limiter, rl RateLimit, op *huma.Operation) error {
	ctx := hc.Context()
	p := PrincipalFrom(ctx)
	// Per-user limits count anonymous callers by address.
	who := "ip:" + ClientIP(ctx)
	switch {
	case rl.Per == PerParam:
		who = "param:" + hc.Param(rl.Param)
	case rl.Per != PerIP && p != nil:
		who = "user:" + strconv.FormatInt(p.UserID, 10)
	}
	name := rl.Name
	if name == "" {
		name = op.OperationID
	}
	// Buckets are the tenant's, named by its database, which no other
	// tenant shares, even of another platform on the same Redis.
	tenant := ""
	if t := TenantFrom(ctx); t != nil {
		tenant = t.DatabaseName
	}
	d, err := lim.Allow(ctx, fmt.Sprintf("%s|%s|%s", tenant, name, who), rl.Limit, time.Minute)
	if err != nil {
		return apperr.Wrap(apperr.Unavailable, err, "The rate limiter is unavailable.")
	}
	hc.SetHeader("X-RateLimit-Limit", strconv.Itoa(rl.Limit))
	hc.SetHeader("X-RateLimit-Remaining", strconv.Itoa(max(d.Remaining, 0)))
	if !d.Allowed {
		e := apperr.New(apperr.RateLimited, "Too Many Attempts.")
		e.RetryAfter = int(math.Ceil(d.RetryAfter.Seconds()))
		e.RetryAfter = max(e.RetryAfter, 1)
		return e
	}
	return nil
}

func writeGuardError(api huma.API, hc huma.Context, err error) {
	body := ErrorFor(hc.Context(), err)
	for k, v := range body.GetHeaders() {
		for _, s := range v {
			hc.AppendHeader(k, s)
		}
	}
	hc.SetHeader("Content-Type", "application/json")
	hc.SetStatus(body.status)
	// The status is already sent; a failed write only means the caller left.
	_ = api.Marshal(hc.BodyWriter(), "application/json", body)
}
