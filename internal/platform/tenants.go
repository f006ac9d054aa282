package platform

import (
	"container/list"
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"sync"
	"time"

	"github.com/lms-platform/lms/internal/access"
	"github.com/lms-platform/lms/internal/apperr"
	"github.com/lms-platform/lms/internal/blob"
	"github.com/lms-platform/lms/internal/changes"
	"github.com/lms-platform/lms/internal/clock"
	"github.com/lms-platform/lms/internal/sqldb"
)

// Tenant is an open tenant: its record and its own database, blob store,
// signing keys and role table. It is shared by concurrent requests.
type Tenant struct {
	Record
	DB   *sqldb.DB
	Blob blob.Store
	Keys KeyPair
	// URLKey signs links (e-mail verification, signed file URLs).
	URLKey []byte
	// RolePermissions is the tenant's role table, loaded at open.
	RolePermissions map[string][]access.Permission

	kick     chan struct{}
	kickOnce sync.Once
	locals   sync.Map
	watchMu  sync.RWMutex
	watchers []func(keys []string)
	stop     []func()
	mu       sync.Mutex
	users    int
	lastUse  time.Time
	// retired handles (see Evict) close when their last user releases.
	retired bool
	// borrowed is set while only background work (Borrow) that opened the
	// tenant has used it: the last such user closes it again.
	borrowed  bool
	closeOnce sync.Once
	// warm is the tenant's place among the warm tenants (nil: cold), under
	// Tenants.warmMu.
	warm *list.Element
}

// Local returns the tenant's value for key, made by create on first use.
// Capabilities keep per-tenant state here (caches) so
// it is dropped with the handle when the tenant is closed.
func (t *Tenant) Local(key any, create func() any) any {
	if v, ok := t.locals.Load(key); ok {
		return v
	}
	v, _ := t.locals.LoadOrStore(key, create())
	return v
}

// Coalesced returns the tenant's sqldb.Coalescer kept under key, made on
// first use to run query on the tenant's database: the batches of
// concurrent reads are shared by a tenant's requests, never across
// tenants.
func Coalesced[K comparable, V any](t *Tenant, key any, query func(context.Context, *sqldb.DB, []K) (map[K]V, error)) *sqldb.Coalescer[K, V] {
	return t.Local(key, func() any {
		return sqldb.NewCoalescer(func(ctx context.Context, keys []K) (map[K]V, error) {
			return query(ctx, t.DB, keys)
		})
	}).(*sqldb.Coalescer[K, V])
}

// Watch registers fn to hear the keys of the tenant's data that changed
// (sqldb.Changed), in this process or another one, while the handle is
// open. Capabilities drop what they cached from that data; fn must not
// block.
func (t *Tenant) Watch(fn func(keys []string)) {
	t.watchMu.Lock()
	t.watchers = append(t.watchers, fn)
	t.watchMu.Unlock()
}

func (t *Tenant) changed(keys []string) {
	t.watchMu.RLock()
	defer t.watchMu.RUnlock()
	for _, fn := range t.watchers {
		fn(keys)
	}
}

// PrimaryHost is the tenant's first host.
func (t *Tenant) PrimaryHost() string {
	if len(t.Hosts) == 0 {
		return ""
	}
	return t.Hosts[0]
}

// Kicked is signalled after a transaction that wrote events commits, so the
// tenant's dispatcher runs at once instead of at its next poll.
func (t *Tenant) Kicked() <-chan struct{} { return t.kickChan() }

// Kick wakes the tenant's event dispatcher without blocking.
func (t *Tenant) Kick() {
	select {
	case t.kickChan() <- struct{}{}:
	default:
	}
}

func (t *Tenant) kickChan() chan struct{} {
	t.kickOnce.Do(func() { t.kick = make(chan struct{}, 1) })
	return t.kick
}

// Tx runs fn in a transaction of the tenant database.
func (t *Tenant) Tx(ctx context.Context, fn func(tx *sqldb.Tx) error) error {
	return t.DB.Tx(ctx, fn)
}

// Options configure Tenants.
type Options struct {
	DataDir     string
	DatabaseURL string     // empty: SQLite under DataDir
	Blob        blob.Store // the root store; each tenant gets a sub-store
	Clock       clock.Clock
	Idle        time.Duration // 0: never evict
	// Warm is how many open tenants, the most recently used, keep their
	// idle database connections (0: DefaultWarm).
	Warm   int
	Logger *slog.Logger
	// Changes carries the notices of changed data between the processes
	// (nil: in this process only).
	Changes *changes.Feed
	// OnOpen starts per-tenant background work (the event dispatcher) and
	// returns its stop function, called when the tenant is closed.
	OnOpen []func(t *Tenant) (stop func())
}

// DefaultWarm is how many tenants keep their idle database connections
// when Options.Warm is not set. An SQLite connection holds about half a
// megabyte (parsed schema, page cache, prepared statements), so 100 warm
// tenants hold about 50 MB whatever the number of open tenants.
const DefaultWarm = 100

type entry struct {
	ready  chan struct{}
	tenant *Tenant
	err    error
}

// Tenants resolves hosts to open tenants, opening them on first use and
// closing them after they have been idle.
type Tenants struct {
	reg  *Registry
	opts Options

	mu     sync.Mutex
	open   map[int64]*entry
	byHost map[string]int64

	// warm lists the open tenants whose pools keep idle connections, most
	// recently used first; one pushed out of its opts.Warm places closes
	// them. An open tenant otherwise costs a few tens of kilobytes, its
	// connections many times that, so touching every tenant of a large
	// platform once must not leave each with its connections for
	// SQLiteIdleConn.
	warmMu sync.Mutex
	warm   list.List
}

// NewTenants manages the tenants of reg.
func NewTenants(reg *Registry, opts Options) *Tenants {
	if opts.Clock == nil {
		opts.Clock = clock.System{}
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Warm <= 0 {
		opts.Warm = DefaultWarm
	}
	if opts.Changes == nil {
		// In process only: New cannot fail without Redis.
		opts.Changes, _ = changes.New(context.Background(), nil, opts.Logger)
	}
	ts := &Tenants{reg: reg, opts: opts, open: map[int64]*entry{}, byHost: map[string]int64{}}
	opts.Changes.Subscribe(ts.dispatch)
	opts.Changes.Subscribe(ts.evictChanged)
	return ts
}

// Changes is the feed of changed data the tenants publish to and hear from.
func (ts *Tenants) Changes() *changes.Feed { return ts.opts.Changes }

// dispatch hands a notice to the open tenant it names, or to every open
// tenant when it names none.
func (ts *Tenants) dispatch(n changes.Notice) {
	keys := n.Keys
	if n.Tenant == 0 {
		keys = []string{access.TenantKey}
	}
	var open []*Tenant
	ts.mu.Lock()
	for id, e := range ts.open {
		if n.Tenant != 0 && id != n.Tenant {
			continue
		}
		select {
		case <-e.ready:
			if e.tenant != nil {
				open = append(open, e.tenant)
			}
		default:
			// Still opening: it has cached nothing yet.
		}
	}
	ts.mu.Unlock()
	for _, t := range open {
		t.changed(keys)
	}
}

// Registry returns the tenant registry.
func (ts *Tenants) Registry() *Registry { return ts.reg }

// Resolve returns the open tenant serving host, and a release function the
// caller must call when done with it. Unknown hosts are NotFound with the
// message "Unknown tenant.".
func (ts *Tenants) Resolve(ctx context.Context, host string) (*Tenant, func(), error) {
	host = NormalizeHost(host)
	ts.mu.Lock()
	id, known := ts.byHost[host]
	ts.mu.Unlock()
	if !known {
		rec, err := ts.reg.ByHost(ctx, host)
		if err != nil {
			return nil, nil, err
		}
		return ts.acquire(ctx, rec, false)
	}
	return ts.acquireID(ctx, id)
}

// Get opens the tenant with the given id.
func (ts *Tenants) Get(ctx context.Context, rec Record) (*Tenant, func(), error) {
	return ts.acquire(ctx, rec, false)
}

// Borrow is Get for background work that visits every tenant (the job
// scheduler): a tenant it had to open is closed again once released, unless
// a request or Get used it meanwhile, so that a restart does not leave every
// tenant open with its connections until it is idle for opts.Idle.
func (ts *Tenants) Borrow(ctx context.Context, rec Record) (*Tenant, func(), error) {
	return ts.acquire(ctx, rec, true)
}

func (ts *Tenants) acquireID(ctx context.Context, id int64) (*Tenant, func(), error) {
	ts.mu.Lock()
	e := ts.open[id]
	ts.mu.Unlock()
	if e == nil {
		// Evicted since the host was cached: look the record up again.
		recs, err := ts.reg.List(ctx)
		if err != nil {
			return nil, nil, err
		}
		for _, rec := range recs {
			if rec.ID == id {
				return ts.acquire(ctx, rec, false)
			}
		}
		return nil, nil, apperr.New(apperr.NotFound, "Unknown tenant.")
	}
	return ts.wait(ctx, e, false)
}

func (ts *Tenants) acquire(ctx context.Context, rec Record, borrow bool) (*Tenant, func(), error) {
	if rec.Suspended() {
		return nil, nil, ErrSuspended
	}
	ts.mu.Lock()
	e := ts.open[rec.ID]
	if e == nil {
		e = &entry{ready: make(chan struct{})}
		ts.open[rec.ID] = e
		ts.mu.Unlock()
		// Open outside the lock: a slow tenant must not stall the others.
		// A detached context: the first caller going away must not fail the
		// open for everyone waiting on it.
		e.tenant, e.err = ts.openTenant(context.WithoutCancel(ctx), rec)
		if e.err == nil {
			e.tenant.borrowed = borrow
		}
		ts.mu.Lock()
		if e.err != nil {
			delete(ts.open, rec.ID)
		} else {
			for _, h := range rec.Hosts {
				ts.byHost[h] = rec.ID
			}
		}
		close(e.ready)
	}
	ts.mu.Unlock()
	return ts.wait(ctx, e, borrow)
}

func (ts *Tenants) wait(ctx context.Context, e *entry, borrow bool) (*Tenant, func(), error) {
	select {
	case <-e.ready:
	case <-ctx.Done():
		return nil, nil, ctx.Err()
	}
	if e.err != nil {
		return nil, nil, e.err
	}
	t := e.tenant
	t.mu.Lock()
	if t.retired {
		// Evicted while this caller waited: open the tenant afresh.
		t.mu.Unlock()
		return ts.acquireID(ctx, t.ID)
	}
	t.users++
	t.lastUse = ts.opts.Clock.Now()
	t.borrowed = t.borrowed && borrow
	t.mu.Unlock()
	if !borrow {
		ts.warmUp(t)
	}
	var once sync.Once
	return t, func() {
		once.Do(func() {
			t.mu.Lock()
			t.users--
			t.lastUse = ts.opts.Clock.Now()
			lent := t.borrowed && t.users == 0 && !t.retired
			if lent {
				t.retired = true
			}
			last := t.retired && t.users == 0
			t.mu.Unlock()
			if lent {
				ts.drop(t)
			}
			if last {
				t.close()
			}
		})
	}, nil
}

// drop removes the handle t from the maps when it is still the open one,
// so that the next user opens the tenant afresh.
func (ts *Tenants) drop(t *Tenant) {
	ts.mu.Lock()
	if e := ts.open[t.ID]; e != nil && e.tenant == t {
		delete(ts.open, t.ID)
		for _, h := range t.Hosts {
			if ts.byHost[h] == t.ID {
				delete(ts.byHost, h)
			}
		}
	}
	ts.mu.Unlock()
	ts.coolDown(t)
}

// warmUp puts t first among the warm tenants. A tenant joining them
// pushes out the least recently used one beyond opts.Warm, whose pool
// closes its idle connections (the tenant stays open; its next query opens
// a connection again).
func (ts *Tenants) warmUp(t *Tenant) {
	ts.warmMu.Lock()
	if t.warm != nil {
		ts.warm.MoveToFront(t.warm)
		ts.warmMu.Unlock()
		return
	}
	t.warm = ts.warm.PushFront(t)
	var cold *Tenant
	if ts.warm.Len() > ts.opts.Warm {
		cold = ts.warm.Remove(ts.warm.Back()).(*Tenant)
		cold.warm = nil
	}
	ts.warmMu.Unlock()
	if cold != nil {
		cold.DB.CloseIdle()
	}
}

// coolDown takes t out of the warm tenants, when it is closed.
func (ts *Tenants) coolDown(t *Tenant) {
	ts.warmMu.Lock()
	defer ts.warmMu.Unlock()
	if t.warm != nil {
		ts.warm.Remove(t.warm)
		t.warm = nil
	}
}

// WarmCount is the number of tenants whose pools keep idle connections.
func (ts *Tenants) WarmCount() int {
	ts.warmMu.Lock()
	defer ts.warmMu.Unlock()
	return ts.warm.Len()
}

// databaseLocation is where a tenant's database lives.
func (ts *Tenants) databaseLocation(rec Record) (string, error) {
	if ts.opts.DatabaseURL == "" {
		return filepath.Join(ts.opts.DataDir, "tenants", rec.DatabaseName+".db"), nil
	}
	return sqldb.WithDatabase(ts.opts.DatabaseURL, rec.DatabaseName)
}

// Provision creates the tenant's database (on PostgreSQL), migrates it and
// seeds the roles. It is idempotent.
func (ts *Tenants) Provision(ctx context.Context, rec Record) error {
	if err := ts.createDatabase(ctx, rec); err != nil {
		return err
	}
	loc, err := ts.databaseLocation(rec)
	if err != nil {
		return err
	}
	db, err := sqldb.Open(ctx, loc)
	if err != nil {
		return err
	}
	defer db.Close()
	return migrateTenant(ctx, db)
}

// createDatabase creates the tenant's database on PostgreSQL, a copy of
// the migrated template, unless it exists; SQLite makes its file when it is
// opened.
func (ts *Tenants) createDatabase(ctx context.Context, rec Record) error {
	if ts.opts.DatabaseURL == "" {
		return nil
	}
	return sqldb.CreateMigrated(ctx, ts.opts.DatabaseURL, rec.DatabaseName, sqldb.TenantSet)
}

func migrateTenant(ctx context.Context, db *sqldb.DB) error {
	if err := sqldb.Migrate(ctx, db, sqldb.TenantSet); err != nil {
		return err
	}
	return access.SeedRoles(ctx, db)
}

func (ts *Tenants) openTenant(ctx context.Context, rec Record) (*Tenant, error) {
	kp, err := ts.reg.keyPair(rec)
	if err != nil {
		return nil, err
	}
	loc, err := ts.databaseLocation(rec)
	if err != nil {
		return nil, err
	}
	if err := ts.createDatabase(ctx, rec); err != nil {
		return nil, err
	}
	db, err := sqldb.Open(ctx, loc)
	if err != nil {
		return nil, err
	}
	if err := migrateTenant(ctx, db); err != nil {
		db.Close()
		return nil, fmt.Errorf("platform: migrate tenant %d: %w", rec.ID, err)
	}
	perms, err := access.RolePermissions(ctx, db)
	if err != nil {
		db.Close()
		return nil, err
	}
	t := &Tenant{
		Record:          rec,
		DB:              db,
		Keys:            kp,
		URLKey:          ts.reg.mk.Derive("url-signing:" + rec.DatabaseName),
		RolePermissions: perms,
		lastUse:         ts.opts.Clock.Now(),
	}
	db.Signal = t.Kick
	db.OnChange = func(keys []string) {
		ts.opts.Changes.Publish(context.Background(), changes.Notice{Tenant: rec.ID, Keys: keys})
	}
	if ts.opts.Blob != nil {
		t.Blob = blob.Sub(ts.opts.Blob, rec.BlobPrefix)
	}
	for _, start := range ts.opts.OnOpen {
		t.stop = append(t.stop, start(t))
	}
	ts.opts.Logger.Debug("tenant opened", "tenant", rec.ID, "host", t.PrimaryHost())
	return t, nil
}

// Close closes one tenant's handles now (the next request opens them again).
func (ts *Tenants) Close(id int64) {
	if t := ts.forget(id); t != nil {
		t.close()
	}
}

// forget drops the tenant's open handle from the maps, so that the next
// request opens a fresh one, and returns it (nil when none was open).
func (ts *Tenants) forget(id int64) *Tenant {
	ts.mu.Lock()
	e := ts.open[id]
	delete(ts.open, id)
	for h, tid := range ts.byHost {
		if tid == id {
			delete(ts.byHost, h)
		}
	}
	ts.mu.Unlock()
	if e == nil {
		return nil
	}
	<-e.ready
	if e.tenant != nil {
		ts.coolDown(e.tenant)
	}
	return e.tenant
}

func (t *Tenant) close() {
	t.closeOnce.Do(func() {
		for _, stop := range t.stop {
			if stop != nil {
				stop()
			}
		}
		t.DB.Close()
	})
}

// CloseIdle closes the tenants nobody has used for the idle time and that
// no request holds now. It returns how many it closed.
func (ts *Tenants) CloseIdle() int {
	if ts.opts.Idle <= 0 {
		return 0
	}
	now := ts.opts.Clock.Now()
	var idle []int64
	ts.mu.Lock()
	for id, e := range ts.open {
		select {
		case <-e.ready:
		default:
			continue
		}
		if e.tenant == nil {
			continue
		}
		t := e.tenant
		t.mu.Lock()
		if t.users == 0 && now.Sub(t.lastUse) >= ts.opts.Idle {
			idle = append(idle, id)
		}
		t.mu.Unlock()
	}
	ts.mu.Unlock()
	for _, id := range idle {
		ts.Close(id)
	}
	return len(idle)
}

// OpenCount is the number of open tenants.
func (ts *Tenants) OpenCount() int {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return len(ts.open)
}

// RunEviction closes idle tenants every interval until ctx ends.
func (ts *Tenants) RunEviction(ctx context.Context, interval time.Duration) {
	if ts.opts.Idle <= 0 {
		return
	}
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			if n := ts.CloseIdle(); n > 0 {
				ts.opts.Logger.Info("closed idle tenants", "count", n)
			}
		}
	}
}

// CloseAll closes every open tenant, at shutdown.
func (ts *Tenants) CloseAll() {
	ts.mu.Lock()
	ids := make([]int64, 0, len(ts.open))
	for id := range ts.open {
		ids = append(ids, id)
	}
	ts.mu.Unlock()
	for _, id := range ids {
		ts.Close(id)
	}
}
