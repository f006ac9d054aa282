package h5p

import (
	"context"
	"net/http"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/lms-platform/lms/internal/httpx"
	"github.com/lms-platform/lms/internal/platform"
)

// pingTimeout bounds each dependency check of the health route.
const pingTimeout = 3 * time.Second

// Dependency states in the health answer.
const (
	stateOK       = "ok"
	stateDown     = "down"
	stateDisabled = "disabled"
)

// Health is the answer of GET /h5p/health. Loopback hosts that are no
// tenant get only ok, a null tenant and redis.
type Health struct {
	OK     bool   `json:"ok"`
	Tenant *int64 `json:"tenant"`
	DB     string `json:"db,omitempty"`
	Redis  string `json:"redis"`
	S3     string `json:"s3,omitempty"`
}

// check pings what the service depends on for the tenant (nil: only the
// shared dependencies).
func (s *Service) check(ctx context.Context, t *platform.Tenant) Health {
	h := Health{Redis: s.pingRedis(ctx)}
	if t != nil {
		id := t.ID
		h.Tenant = &id
		h.DB = ping(ctx, t.DB.PingContext)
		// The blob store is reported as s3 whichever store it is.
		h.S3 = stateDisabled
		if t.Blob != nil {
			h.S3 = ping(ctx, t.Blob.Ping)
		}
	}
	h.OK = h.Redis != stateDown && h.DB != stateDown && h.S3 != stateDown
	return h
}

func (s *Service) pingRedis(ctx context.Context) string {
	rdb := s.redis
	if rdb == nil {
		return stateDisabled
	}
	return ping(ctx, func(ctx context.Context) error { return rdb.Ping(ctx).Err() })
}

func ping(ctx context.Context, fn func(context.Context) error) string {
	ctx, cancel := context.WithTimeout(ctx, pingTimeout)
	defer cancel()
	if fn(ctx) != nil {
		return stateDown
	}
	return stateOK
}

type healthOutput struct {
	Status       int
	CacheControl string `header:"Cache-Control"`
	Body         Health
}

func (s *Service) healthRoutes(api huma.API) {
	httpx.Handle(api, httpx.Route{Method: "GET", Path: "/h5p/health", Tags: h5pTags, Who: httpx.Anyone, Scope: httpx.AnyToken,
		Summary: "Check the H5P service and what it depends on (503 when something is down)"}, s.health)
	describe(api, "GET", "/h5p/health", func(op *huma.Operation, schema func(any) *huma.Schema) {
		op.Responses["503"] = &huma.Response{Description: "A dependency is down.",
			Content: map[string]*huma.MediaType{"application/json": {Schema: schema(Health{})}}}
	})
}

// health answers the check as a bare object, the shape the spec gives for
// load balancers, with 503 when a dependency is down.
func (s *Service) health(ctx context.Context, _ *struct{}) (*healthOutput, error) {
	h := s.check(ctx, httpx.TenantFrom(ctx))
	status := http.StatusOK
	if !h.OK {
		status = http.StatusServiceUnavailable
	}
	return &healthOutput{Status: status, CacheControl: "no-store", Body: h}, nil
}
