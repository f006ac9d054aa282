// Package kinds is what the topic kinds (one package per kind below it)
// need from the rest of the platform, declared once as small interfaces
// in Deps, and the optional parts a kind may add to the server: routes,
// scheduled jobs and event listeners. Every kind is built by its New from
// a Deps, after topics and learning, so nothing is wired into a kind
// once it is built.
package kinds

import (
	"context"

	"github.com/danielgtaylor/huma/v2"

	"github.com/lms-platform/lms/internal/access"
	"github.com/lms-platform/lms/internal/cache"
	"github.com/lms-platform/lms/internal/clock"
	"github.com/lms-platform/lms/internal/content"
	"github.com/lms-platform/lms/internal/events"
	"github.com/lms-platform/lms/internal/jobs"
	"github.com/lms-platform/lms/internal/limit"
	"github.com/lms-platform/lms/internal/lock"
	"github.com/lms-platform/lms/internal/platform"
	"github.com/lms-platform/lms/internal/scan"
	"github.com/lms-platform/lms/internal/sqldb"
	"github.com/lms-platform/lms/internal/topics"
)

// Deps is everything a kind may use. Fields a kind does not need may be
// nil; a server built only for its API description leaves out the
// learning side-effects it never calls.
type Deps struct {
	Clock    clock.Clock
	Settings Settings
	Cache    cache.Cache
	Locker   lock.Locker
	Limiter  limit.Limiter
	// Scanner, when set, checks uploaded packages for malware.
	Scanner scan.Scanner
	// Topics reads and writes topics (package topics).
	Topics Topics
	// Learning records learners' progress (package learning).
	Learning Learning
	// FileURL signs links to stored files.
	FileURL func(t *platform.Tenant, key string) string
	// Videos transcodes uploaded videos (package media).
	Videos Videos
	// H5P is the H5P service's client address, for the kinds that call it.
	H5P H5P
	// Config holds the configuration values kinds read.
	Config Config
}

// Config are the configuration values of the kinds.
type Config struct {
	// InternalKey authenticates calls to the H5P service.
	InternalKey string
	// FetchAllowPrivate lets outbound fetches reach private addresses.
	FetchAllowPrivate bool
	// ScormPlayerDir holds the scorm-again build.
	ScormPlayerDir string
	// LiaScriptDir holds LiaScript's runtime.
	LiaScriptDir string
}

// Settings reads the tenant's settings (package settings).
type Settings interface {
	Bool(ctx context.Context, t *platform.Tenant, key string) (bool, error)
	Int(ctx context.Context, t *platform.Tenant, key string) (int, error)
	String(ctx context.Context, t *platform.Tenant, key string) (string, error)
}

// Topics is what kinds do with topics besides their own content.
type Topics interface {
	Get(ctx context.Context, t *platform.Tenant, p *access.Principal, id int64) (topics.View, error)
	CreateJSON(ctx context.Context, t *platform.Tenant, p *access.Principal, body []byte) (topics.View, error)
	UpdateJSON(ctx context.Context, t *platform.Tenant, p *access.Principal, id int64, body []byte) (topics.View, error)
	Learnable(ctx context.Context, t *platform.Tenant, p *access.Principal, topicID int64) (topics.Topic, error)
	ReadUpload(ctx context.Context, body topics.Upload, maxFile int64) (content.Input, func(), error)
}

// Gate says whether p may record progress in a topic now.
type Gate interface {
	CanRecord(ctx context.Context, t *platform.Tenant, p *access.Principal, topicID int64) error
	// RecordableTopic is CanRecord answering the topic too, from the
	// program cache, so that the kind need not read it again. Its Content
	// is shared: it must not be changed.
	RecordableTopic(ctx context.Context, t *platform.Tenant, p *access.Principal, topicID int64) (topics.Topic, error)
}

// Learning is what kinds do with learners' progress.
type Learning interface {
	topics.ScoredCompleter
	Gate
	// AddTopicTime adds seconds of the learner's time to the topic.
	AddTopicTime(ctx context.Context, q sqldb.Querier, userID, topicID, seconds int64) error
	// TopicResult tells whether the learner's topic is complete, and the
	// score it keeps.
	TopicResult(ctx context.Context, t *platform.Tenant, userID, topicID int64) (bool, *topics.TopicScore, error)
}

// Videos queues the transcoding of a video topic inside its transaction.
type Videos interface {
	Enqueue(ctx context.Context, tx *sqldb.Tx, t *platform.Tenant, topicID int64) error
}

// H5P is where the H5P service is reached.
type H5P interface {
	BaseURL() string
}

// Router is a kind that serves routes of its own.
type Router interface {
	Routes(api huma.API)
}

// Scheduler is a kind with scheduled jobs.
type Scheduler interface {
	Jobs() []jobs.Job
}

// Listener is a kind that reacts to recorded events.
type Listener interface {
	Listeners() []Reaction
}

// Reaction is one listener of a kind: its name, the events it gets a
// pair of (events.Dispatcher.ListenTo) and what it runs.
type Reaction struct {
	Name string
	On   []string
	Run  events.Listener
}
