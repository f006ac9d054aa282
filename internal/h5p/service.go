// Package h5p is the H5P content service, served under /h5p on the API's
// listener. It resolves its own tenant from the host, authenticates callers
// with the tenant's public key and takes their profile from the API over
// HTTP, the same way it would when deployed on another machine.
package h5p

import (
	"log/slog"
	"net/http"

	"github.com/danielgtaylor/huma/v2"
	"github.com/redis/go-redis/v9"

	"github.com/lms-platform/lms/client"
	"github.com/lms-platform/lms/internal/cache"
	"github.com/lms-platform/lms/internal/clock"
	"github.com/lms-platform/lms/internal/h5p/h5ppackage"
	"github.com/lms-platform/lms/internal/h5p/h5pstore"
	"github.com/lms-platform/lms/internal/httpx"
	"github.com/lms-platform/lms/internal/lock"
	"github.com/lms-platform/lms/internal/platform"
	"github.com/lms-platform/lms/internal/scan"
)

// Options configure the service.
type Options struct {
	Tenants *platform.Tenants
	// Scanner, when set, checks uploaded packages for malware.
	Scanner scan.Scanner
	// Cache keeps callers' profiles (in process or Redis).
	Cache cache.Cache
	// Redis is reported by the health check; nil means Redis is disabled.
	Redis *redis.Client
	Clock clock.Clock
	Log   *slog.Logger
	// InternalKey is the X-Internal-Token the other parts send.
	InternalKey string
	// TrustProxy honours X-Forwarded-Host without the internal token.
	TrustProxy bool
	// APIURL is the base URL of the API, for GET /api/profile/me.
	APIURL string
	// HTTPClient carries the typed client's calls to the API (tests count
	// them); nil means a client with a short timeout.
	HTTPClient *http.Client
	// Store keeps the tenants' libraries and contents; nil means a store
	// with the service's clock and an in-process lock.
	Store *h5pstore.Store
	// HubURL, when set, is the content-type endpoint of the H5P hub, put
	// in the store's settings (LMS_H5P_HUB_URL).
	HubURL string
	// MaxUploadSize caps a package upload in bytes; 0 means
	// h5ppackage.DefaultMaxTotalSize (256 MB).
	MaxUploadSize int64
	// CoreDir holds the H5P core player files served under /h5p/core/
	// (h5p-standalone's dist directory); empty or missing: the player
	// page reports that the player is not installed.
	CoreDir string
	// EditorDir holds the H5P editor client served under /h5p/editor/;
	// empty: the editor page reports that the editor is not installed.
	EditorDir string
	// API is the API whose OpenAPI document describes the service's REST
	// routes; nil: a document of the service's own.
	API huma.API
	// EmbedOrigins are the origins allowed to frame the embed pages and
	// exchange messages with them; "*" allows any.
	EmbedOrigins []string
	// Scoped, when set, wraps every route once the caller is known: what
	// the platform applies to requests made with scoped tokens (their rate
	// limit, the agent audit).
	Scoped httpx.Middleware
}

// Service is the H5P service.
type Service struct {
	tenants     *platform.Tenants
	cache       cache.Cache
	clock       clock.Clock
	log         *slog.Logger
	scoped      httpx.Middleware
	internalKey string
	trustProxy  bool
	redis       *redis.Client
	// API fetches callers' profiles from the API.
	API     *APIClient
	handler http.Handler
	// Store keeps the tenants' libraries and contents.
	Store     *h5pstore.Store
	scanner   scan.Scanner
	maxUpload int64
	embed     embedConfig
}

// New builds the service.
func New(opts Options) *Service {
	s := &Service{
		tenants:     opts.Tenants,
		cache:       opts.Cache,
		clock:       opts.Clock,
		log:         opts.Log,
		scoped:      opts.Scoped,
		internalKey: opts.InternalKey,
		trustProxy:  opts.TrustProxy,
		scanner:     opts.Scanner,
		redis:       opts.Redis,
		maxUpload:   opts.MaxUploadSize,
	}
	var doer client.Doer
	if opts.HTTPClient != nil {
		doer = opts.HTTPClient
	}
	s.API = NewAPIClient(opts.APIURL, doer)
	if s.clock == nil {
		s.clock = clock.System{}
	}
	if s.log == nil {
		s.log = slog.Default()
	}
	if s.cache == nil {
		s.cache = cache.NewMemory(s.clock)
	}
	s.Store = opts.Store
	if s.Store == nil {
		s.Store = &h5pstore.Store{Clock: s.clock, Locker: lock.NewMemory(s.clock)}
	}
	if opts.HubURL != "" {
		set := s.Store.Settings()
		set.HubURL = opts.HubURL
		s.Store.SetSettings(set)
	}
	if s.maxUpload <= 0 {
		s.maxUpload = h5ppackage.DefaultMaxTotalSize
	}
	s.embed = newEmbedConfig(opts.CoreDir, opts.EditorDir, opts.EmbedOrigins)
	doc := opts.API
	if doc == nil {
		doc = ownDocument()
	}
	s.handler = s.routes(doc)
	return s
}

// Handler serves every route under /h5p/.
func (s *Service) Handler() http.Handler { return s.handler }
