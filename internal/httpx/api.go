package httpx

import (
	"context"
	"errors"
	"net/http"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/danielgtaylor/huma/v2"
	"github.com/danielgtaylor/huma/v2/adapters/humago"
)

var hookOnce sync.Once

// Info describes the API for its OpenAPI document and GET /api/meta.
type Info struct {
	Title   string
	Version string
}

// NewAPI returns a huma API on mux publishing its description at
// /api/openapi.json.
func NewAPI(mux *http.ServeMux, info Info) huma.API {
	hookOnce.Do(hookHumaErrors)
	cfg := huma.DefaultConfig(info.Title, info.Version)
	cfg.OpenAPIPath = "/api/openapi"
	cfg.DocsPath = ""
	cfg.SchemasPath = "/api/schemas"
	cfg.Info.Description = "Multi-tenant learning platform API. The tenant is chosen by the request host. " +
		"Every response is an envelope {success, message, data}; lists add meta {current_page, per_page, total, last_page}. " +
		"Writes accept an Idempotency-Key header: a retry with the same key and body within 24 hours returns the stored response."
	cfg.Components.SecuritySchemes = map[string]*huma.SecurityScheme{
		"bearer": {Type: "http", Scheme: "bearer", BearerFormat: "JWT (RS256)"},
	}
	cfg.Components.Schemas = huma.NewMapRegistry("#/components/schemas/", schemaName)
	// One relative server: the API answers on whatever host names a
	// tenant, so no absolute URL is right for every reader.
	cfg.Servers = []*huma.Server{{URL: "/", Description: "The host you call; it selects the tenant."}}
	// Huma would add a $schema link to every body; our envelope has none.
	cfg.CreateHooks = nil
	return humago.New(newOverlapMux(mux), cfg)
}

// Who says who may call a route; the middleware enforces authentication,
// handlers enforce permissions through the capability's policy.
type Who int

const (
	Anyone Who = iota
	User       // an authenticated user
)

// Per says what a rate limit counts by.
type Per int

const (
	PerIP Per = iota
	PerUser
	PerUserOrIP
	// PerParam counts by the value of the path parameter RateLimit.Param
	// (a webhook id), whoever calls.
	PerParam
)

// RateLimit is a per-route fixed window limit of the spec's Limits table.
type RateLimit struct {
	Limit int
	Per   Per
	// Name groups routes that share one counter ("tokens").
	Name string
	// Param is the path parameter a PerParam limit counts by.
	Param string
	// Admit, when set, may refuse a request before it counts, so that
	// requests the route would refuse anyway (a report about no topic of
	// ours) cannot use up the limit of the ones it serves.
	Admit func(hc huma.Context) error
}

// Route describes one operation.
type Route struct {
	Method  string
	Path    string
	Summary string
	// Description is the operation's longer text in the API description.
	Description string
	Tags        []string
	Who         Who
	// Status is the success status (default 200).
	Status int
	// Also are other success statuses the handler may answer (an upsert's
	// 200 beside its 201), documented with the same body.
	Also  []int
	Limit *RateLimit
	// MaxBody caps the request body in bytes (default 1 MiB).
	MaxBody int64
	// Hidden keeps the route out of the OpenAPI document; only for routes
	// that are not part of the public interface.
	Hidden bool
	// Errors are the statuses the handler itself may answer beyond the
	// ones every route of its kind has (404, 401/403, 429).
	Errors []int
	// Credentials marks routes whose request or answer carries a password
	// or a token: the idempotency store never keeps their answers.
	Credentials bool
	// Scope is what a scoped personal token needs to call the route.
	Scope Scope
}

// Scope is the rule a route sets for scoped personal tokens (lms_pat_...):
// the name of the scope a token must hold, such as "courses:read" (a
// ":write" scope includes its ":read"), AnyToken or NoTokens. It is the
// operation's x-lms-scope in the API description. The package tokens
// knows the scope names and enforces the rule; a route without one
// refuses scoped tokens, and TestScopePolicy fails on it.
type Scope string

const (
	// AnyToken: every scoped token may call the route (health, the
	// caller's own profile and token, links that carry their own
	// authority).
	AnyToken Scope = "any"
	// NoTokens: no scoped token may call the route (sessions, passwords,
	// impersonation, account deletion, protocols with their own
	// credentials).
	NoTokens Scope = "none"
)

const (
	metaWho   = "lms-who"
	metaLimit = "lms-limit"
	metaCreds = "lms-credentials"
	metaScope = "lms-scope"
)

// ScopeOf is the Scope of a registered operation, "" when its route set
// none.
func ScopeOf(op *huma.Operation) Scope {
	if op == nil {
		return ""
	}
	s, _ := op.Metadata[metaScope].(Scope)
	return s
}

var (
	nonWord = regexp.MustCompile(`[^a-zA-Z0-9]+`)
	// notInSchemaName is what OpenAPI forbids in a component name; huma's
	// namer keeps the spaces and braces of a type like map[string]interface {}.
	notInSchemaName = regexp.MustCompile(`[^a-zA-Z0-9._-]+`)
)

// schemaName is huma's schema name without the characters OpenAPI refuses.
func schemaName(t reflect.Type, hint string) string {
	return notInSchemaName.ReplaceAllString(huma.DefaultSchemaNamer(t, hint), "")
}

// Handle registers a typed handler. Errors the handler returns are mapped
// to the envelope and status in one place (ErrorFor).
func Handle[I, O any](api huma.API, r Route, h func(context.Context, *I) (*O, error)) {
	op := huma.Operation{
		OperationID:   operationID(r.Method, r.Path),
		Method:        r.Method,
		Path:          r.Path,
		Summary:       r.Summary,
		Description:   r.Description,
		Tags:          r.Tags,
		DefaultStatus: r.Status,
		MaxBodyBytes:  r.MaxBody,
		Hidden:        r.Hidden,
		Metadata:      map[string]any{metaWho: r.Who, metaCreds: r.Credentials, metaScope: r.Scope},
	}
	if r.Limit != nil {
		op.Metadata[metaLimit] = *r.Limit
	}
	// Every route answers 404 on a host that names no tenant.
	op.Errors = []int{http.StatusNotFound}
	if r.Who == User {
		op.Security = []map[string][]string{{"bearer": {}}}
		op.Errors = append(op.Errors, 401, 403)
	} else {
		// Anonymous callers are served, and a valid token, when sent,
		// identifies the caller: authentication is optional.
		op.Security = []map[string][]string{{}, {"bearer": {}}}
	}
	if r.Limit != nil {
		op.Errors = append(op.Errors, 429)
	}
	op.Errors = append(op.Errors, r.Errors...)
	status := r.Status
	if status == 0 {
		status = http.StatusOK
	}
	huma.Register(api, op, func(ctx context.Context, in *I) (*O, error) {
		out, err := h(ctx, in)
		if err != nil {
			// An error that already is an answer of its own shape (the H5P
			// service's package problems) is sent as it is.
			var answer huma.StatusError
			if errors.As(err, &answer) {
				return nil, answer
			}
			return nil, ErrorFor(ctx, err)
		}
		if s, ok := any(out).(interface{ defaultStatus(int) }); ok {
			s.defaultStatus(status)
		}
		return out, nil
	})
	if len(r.Also) > 0 {
		registered := OperationOf(api, r.Method, r.Path)
		main := registered.Responses[strconv.Itoa(status)]
		for _, code := range r.Also {
			also := *main
			also.Description = http.StatusText(code)
			registered.Responses[strconv.Itoa(code)] = &also
		}
	}
}

// operationID is "get-api-admin-users-id" for GET /api/admin/users/{id}.
func operationID(method, path string) string {
	return strings.ToLower(method) + "-" + strings.Trim(nonWord.ReplaceAllString(path, "-"), "-")
}

// operations are a path's operations by method.
func operations(item *huma.PathItem) map[string]*huma.Operation {
	return map[string]*huma.Operation{"GET": item.Get, "POST": item.Post, "PUT": item.Put,
		"PATCH": item.Patch, "DELETE": item.Delete}
}

// OperationOf is the registered operation of method and path, or nil.
func OperationOf(api huma.API, method, path string) *huma.Operation {
	item := api.OpenAPI().Paths[path]
	if item == nil {
		return nil
	}
	return operations(item)[method]
}

// Routes lists the method and path of every operation registered on api,
// sorted, for tests that check coverage (OpenAPI, the role matrix).
func Routes(api huma.API) []string {
	var out []string
	for path, item := range api.OpenAPI().Paths {
		for method, op := range operations(item) {
			if op != nil {
				out = append(out, method+" "+path)
			}
		}
	}
	slices.Sort(out)
	return out
}
