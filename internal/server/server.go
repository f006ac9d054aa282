// Package server assembles the platform from its configuration: storage,
// tenants, the API routes and their middleware. The lms command and the
// test harness both build the platform through it, so tests run exactly
// what operators run.
package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"github.com/redis/go-redis/v9"

	"github.com/lms-platform/lms/internal/auth"
	"github.com/lms-platform/lms/internal/blob"
	"github.com/lms-platform/lms/internal/cache"
	"github.com/lms-platform/lms/internal/certificates"
	"github.com/lms-platform/lms/internal/changes"
	"github.com/lms-platform/lms/internal/clock"
	"github.com/lms-platform/lms/internal/config"
	"github.com/lms-platform/lms/internal/content"
	"github.com/lms-platform/lms/internal/courses"
	"github.com/lms-platform/lms/internal/demo"
	"github.com/lms-platform/lms/internal/events"
	"github.com/lms-platform/lms/internal/files"
	"github.com/lms-platform/lms/internal/h5p"
	"github.com/lms-platform/lms/internal/h5p/h5pstore"
	"github.com/lms-platform/lms/internal/httpx"
	"github.com/lms-platform/lms/internal/jobs"
	"github.com/lms-platform/lms/internal/learning"
	"github.com/lms-platform/lms/internal/limit"
	"github.com/lms-platform/lms/internal/lock"
	"github.com/lms-platform/lms/internal/media"
	"github.com/lms-platform/lms/internal/media/pdf"
	"github.com/lms-platform/lms/internal/notify"
	"github.com/lms-platform/lms/internal/platform"
	"github.com/lms-platform/lms/internal/platformadmin"
	"github.com/lms-platform/lms/internal/queue"
	"github.com/lms-platform/lms/internal/redisconn"
	"github.com/lms-platform/lms/internal/scan"
	"github.com/lms-platform/lms/internal/settings"
	"github.com/lms-platform/lms/internal/sqldb"
	"github.com/lms-platform/lms/internal/tokens"
	"github.com/lms-platform/lms/internal/topics"
)

// Name and Version describe the API in /api/meta and the OpenAPI document.
const (
	Name    = "LMS"
	Version = "0.1.0"
)

// Server is the assembled platform.
type Server struct {
	Config     *config.Config
	Clock      clock.Clock
	Log        *slog.Logger
	PlatformDB *sqldb.DB
	Registry   *platform.Registry
	Tenants    *platform.Tenants
	Blob       blob.Store
	Redis      *redis.Client // nil without LMS_REDIS_URL
	Limiter    limit.Limiter
	Cache      cache.Cache
	Locker     lock.Locker
	Scanner    scan.Scanner // nil without LMS_CLAMAV_ADDR
	// Changes carries the notices of changed data (principals, H5P
	// profiles) between the replicas, through Redis when configured.
	Changes *changes.Feed
	Mailer  notify.Mailer // nil: mail is only recorded
	// Mail sends events on their e-mail templates.
	Mail *notify.Channels
	// PDF is the PDF service (/pdf/, internal token); Certificates makes
	// the course certificates through it.
	PDF          *pdf.Service
	Certificates *certificates.Service
	Passwords    *auth.Passwords
	Settings     *settings.Service
	Dispatcher   *events.Dispatcher
	// Jobs runs the scheduled jobs of every tenant (started by Run).
	Jobs *jobs.Scheduler
	// Queue runs the enqueued background jobs (started by Run); Videos
	// transcodes uploaded videos on it.
	Queue  *queue.Queue
	Videos *media.Videos
	topics *topics.Service
	// Courses owns courses, lessons, access and course status; its jobs
	// expire access and activate courses.
	Courses *courses.Service
	// Learning serves programs and progress; other capabilities call it
	// (topics completes project topics through it) and reacts to changes of
	// course content (its Listener).
	Learning *learning.Service
	// Kinds are the topic content kinds (topics and learning use them).
	Kinds *content.Registry
	// Files signs the links of stored files.
	Files     *files.Signer
	MasterKey platform.MasterKey
	API       huma.API
	// H5P is the H5P service, served under /h5p/ on the API's listener.
	H5P *h5p.Service
	// Demo is demo mode: demo login, seed and reset (docs/demo.md).
	Demo *demo.Service
	// Tokens issues and revokes scoped personal tokens (the device login
	// issues through it too).
	Tokens *tokens.Service
	// Audit writes the agent audit of scoped-token requests in the
	// background.
	Audit *tokens.Recorder
	// Handler serves the API with every middleware, and the H5P service.
	Handler http.Handler
}

// Options are what tests inject; zero values mean the real thing.
type Options struct {
	Clock  clock.Clock
	Logger *slog.Logger
	// NoDispatch leaves recorded events undelivered, as when the process
	// dies after a commit: tests of the outbox's guarantee use it.
	NoDispatch bool
	// Registry changes the tenant registry (tests share its keys).
	Registry []platform.RegistryOption
}

// New opens the platform's storage and builds the API. It migrates the
// platform database; tenants migrate when they are opened.
func New(ctx context.Context, cfg *config.Config, opts Options) (*Server, error) {
	s := &Server{Config: cfg, Clock: opts.Clock, Log: opts.Logger}
	if s.Clock == nil {
		s.Clock = clock.System{}
	}
	if s.Log == nil {
		s.Log = slog.New(slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: logLevel(cfg.LogLevel)}))
	}
	ok := false
	defer func() {
		if !ok {
			s.Close()
		}
	}()
	var err error
	if s.MasterKey, err = platform.LoadMasterKey(cfg.MasterKey, cfg.DataDir); err != nil {
		return nil, err
	}
	if cfg.InternalKey == "" {
		cfg.InternalKey = fmt.Sprintf("%x", s.MasterKey.Derive("internal-token"))
	}
	if s.PlatformDB, err = openPlatformDB(ctx, cfg); err != nil {
		return nil, err
	}
	if s.Blob, err = blob.Open(ctx, cfg.BlobURL, cfg.DataDir); err != nil {
		return nil, err
	}
	if err := s.openShared(ctx); err != nil {
		return nil, err
	}
	if cfg.ClamAVAddr != "" {
		c, err := scan.NewClamd(cfg.ClamAVAddr)
		if err != nil {
			return nil, err
		}
		s.Scanner = c
	}
	if cfg.SMTPURL != "" {
		smtpCfg, err := notify.ParseSMTPURL(cfg.SMTPURL)
		if err != nil {
			return nil, err
		}
		s.Mailer = notify.NewSMTP(smtpCfg)
	}
	if err := checkDemo(cfg); err != nil {
		return nil, err
	}
	if s.Settings, err = newSettings(cfg, settings.WithDemo(s.demoSettings)); err != nil {
		return nil, err
	}
	s.Passwords = auth.NewPasswords(cfg.PasswordCost)
	s.Dispatcher = events.NewDispatcher(s.Clock, s.Log,
		events.Tuning{Poll: cfg.EventsPoll, Lease: cfg.EventsLease, Window: s.retryWindow})
	s.Registry = platform.NewRegistry(s.PlatformDB, s.MasterKey, s.Clock.Now, opts.Registry...)
	var onOpen []func(*platform.Tenant) func()
	if !opts.NoDispatch {
		onOpen = append(onOpen, s.Dispatcher.Start)
	}
	s.Tenants = platform.NewTenants(s.Registry, platform.Options{
		DataDir: cfg.DataDir, DatabaseURL: cfg.DatabaseURL, Blob: s.Blob, Clock: s.Clock,
		Idle: cfg.TenantIdle, Warm: cfg.TenantWarm, Logger: s.Log, Changes: s.Changes, OnOpen: onOpen,
	})
	scheds, err := jobs.ParseSchedules(cfg.JobSchedules)
	if err != nil {
		return nil, fmt.Errorf("server: LMS_JOB_SCHEDULES: %w", err)
	}
	s.Jobs = jobs.New(s.Clock, s.Locker, s.Tenants, s.Log, jobs.Tuning{Poll: cfg.JobsPoll, Schedules: scheds})
	s.newMedia()
	s.buildAPI()
	ok = true
	return s, nil
}

func openPlatformDB(ctx context.Context, cfg *config.Config) (*sqldb.DB, error) {
	loc := filepath.Join(cfg.DataDir, "platform.db")
	if cfg.DatabaseURL != "" {
		if !sqldb.IsPostgresURL(cfg.DatabaseURL) {
			return nil, errors.New("server: LMS_DATABASE_URL must be a postgres:// URL (leave it empty for SQLite)")
		}
		loc = cfg.DatabaseURL
	}
	db, err := sqldb.Open(ctx, loc)
	if err != nil {
		return nil, err
	}
	if err := sqldb.Migrate(ctx, db, sqldb.PlatformSet); err != nil {
		db.Close()
		return nil, err
	}
	return db, nil
}

// openShared picks Redis-backed or in-process limiter, cache and locks.
func (s *Server) openShared(ctx context.Context) error {
	if s.Config.RedisURL == "" {
		s.Limiter = limit.NewMemory(s.Clock)
		s.Cache = cache.NewMemory(s.Clock)
		s.Locker = lock.NewMemory(s.Clock)
		s.Changes, _ = changes.New(ctx, nil, s.Log)
		return nil
	}
	rdb, err := redisconn.Open(ctx, s.Config.RedisURL)
	if err != nil {
		return err
	}
	s.Redis = rdb
	s.Limiter = limit.NewRedis(rdb, s.Clock)
	s.Cache = cache.NewRedis(rdb)
	s.Locker = lock.NewRedis(rdb)
	s.Changes, err = changes.New(ctx, rdb, s.Log)
	return err
}

func newSettings(cfg *config.Config, opts ...settings.Option) (*settings.Service, error) {
	defaults, err := settings.LoadDefaults(cfg.SettingsFile, os.Environ())
	if err != nil {
		return nil, err
	}
	return settings.New(defaults, nil, opts...), nil
}

func logLevel(name string) slog.Level {
	var l slog.Level
	if err := l.UnmarshalText([]byte(name)); err != nil {
		return slog.LevelInfo
	}
	return l
}

// buildAPI registers every capability's routes and wraps them in the
// middleware, outermost first.
func (s *Server) buildAPI() {
	mux := http.NewServeMux()
	s.API = httpx.NewAPI(mux, httpx.Info{Title: Name + " API", Version: Version})
	// Scoped tokens are checked before the route's own rules and limits:
	// a missing scope is a 403 that counts against no limit.
	s.API.UseMiddleware(tokens.Enforce(s.API, s.Limiter))
	s.API.UseMiddleware(httpx.Guard(s.API, s.Limiter))
	s.Kinds = content.NewRegistry()
	s.Files = &files.Signer{Clock: s.Clock, TTL: time.Hour}
	s.Tokens = &tokens.Service{Clock: s.Clock, Settings: s.Settings}
	s.PDF = s.pdfService()
	s.Audit = tokens.NewRecorder(s.Tenants, s.Clock, s.Log)
	// The H5P service is built before the kinds: the H5P kind calls it
	// through its client.
	store := &h5pstore.Store{Clock: s.Clock, Locker: s.Locker, Cache: s.Cache}
	s.H5P = h5p.New(h5p.Options{Tenants: s.Tenants, Cache: s.Cache, Redis: s.Redis, Clock: s.Clock, Log: s.Log, Scanner: s.Scanner,
		InternalKey: s.Config.InternalKey, TrustProxy: s.Config.TrustProxy, APIURL: s.apiURL(),
		Store: store, HubURL: s.Config.H5PHubURL,
		CoreDir: s.Config.H5PCoreDir, EditorDir: s.Config.H5PEditorDir, EmbedOrigins: s.Config.H5PEmbedOrigins,
		API: s.API, Scoped: func(h http.Handler) http.Handler { return s.Audit.Middleware()(tokens.Limit(s.Limiter)(h)) }})
	s.routes()
	api := httpx.Chain(httpx.Unmatched(mux, nil),
		httpx.Tenancy(s.Tenants, s.Config.TrustProxy, s.Config.InternalKey),
		platformadmin.OnlyOnPlatformHost,
		auth.Authenticate(s.Clock),
		s.Audit.Middleware(),
		httpx.Idempotency(s.Clock),
	)
	tokens.Describe(s.API)
	if s.Jobs != nil {
		s.Jobs.Add(s.H5P.Jobs()...)
		s.Jobs.Add(s.Tokens.Jobs()...)
	}
	h5pHandler := s.H5P.Handler()
	pdfHandler := s.PDF.Handler()
	// The H5P service resolves its tenant and callers itself (sub-hosts,
	// _token, profiles from the API), so it bypasses the API's tenancy and
	// authentication and shares only the request log.
	s.Handler = httpx.Observe(s.Log, s.Config.TrustProxy)(httpx.NoNUL(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/h5p/") {
			h5pHandler.ServeHTTP(w, r)
			return
		}
		if strings.HasPrefix(r.URL.Path, "/pdf/") {
			pdfHandler.ServeHTTP(w, r)
			return
		}
		api.ServeHTTP(w, r)
	})))
}

// apiURL is where the H5P service calls the API.
func (s *Server) apiURL() string {
	if s.Config.APIURL != "" {
		return s.Config.APIURL
	}
	return "http://" + s.Config.APIAddr
}

// Run serves the API on the configured address until ctx ends, with idle
// tenant eviction and the scheduled jobs in the background.
func (s *Server) Run(ctx context.Context, ready func(addr string)) error {
	ln, err := listen(s.Config.APIAddr)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: s.Handler, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 120 * time.Second}
	go s.Tenants.RunEviction(ctx, time.Minute)
	go s.Jobs.Run(ctx)
	go s.Queue.Run(ctx)
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	go s.seedDemoTenants(ctx)
	if ready != nil {
		ready(ln.Addr().String())
	}
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return srv.Shutdown(shutdown)
}

// Close releases every handle.
func (s *Server) Close() {
	if s.Audit != nil {
		s.Audit.Close()
	}
	if s.Tenants != nil {
		s.Tenants.CloseAll()
	}
	if s.Changes != nil {
		s.Changes.Close()
	}
	if s.Redis != nil {
		s.Redis.Close()
	}
	if s.PlatformDB != nil {
		s.PlatformDB.Close()
	}
}

// retryWindow is the tenant's lms_events.retry_window_hours: how long a
// failing event delivery is retried before it is a dead letter.
func (s *Server) retryWindow(ctx context.Context, t *platform.Tenant) time.Duration {
	hours, err := s.Settings.Int(ctx, t, "lms_events.retry_window_hours")
	if err != nil || hours <= 0 {
		return events.DefaultWindow
	}
	return time.Duration(hours) * time.Hour
}
