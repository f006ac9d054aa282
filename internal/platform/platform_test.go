package platform_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/lms-platform/lms/internal/apperr"
	"github.com/lms-platform/lms/internal/blob"
	"github.com/lms-platform/lms/internal/clock"
	"github.com/lms-platform/lms/internal/platform"
	"github.com/lms-platform/lms/internal/sqldb"
)

// setup makes a registry and its tenants; warm, when given, is Options.Warm.
func setup(t *testing.T, idle time.Duration, warm ...int) (*platform.Registry, *platform.Tenants, *clock.Fake, platform.MasterKey) {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	db, err := sqldb.OpenSQLite(ctx, filepath.Join(dir, "platform.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if err := sqldb.Migrate(ctx, db, sqldb.PlatformSet); err != nil {
		t.Fatal(err)
	}
	mk, err := platform.LoadMasterKey("", dir)
	if err != nil {
		t.Fatal(err)
	}
	store, err := blob.NewFS(filepath.Join(dir, "files"))
	if err != nil {
		t.Fatal(err)
	}
	clk := clock.NewFake(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	reg := platform.NewRegistry(db, mk, clk.Now)
	opts := platform.Options{DataDir: dir, Blob: store, Clock: clk, Idle: idle}
	if len(warm) > 0 {
		opts.Warm = warm[0]
	}
	ts := platform.NewTenants(reg, opts)
	t.Cleanup(ts.CloseAll)
	return reg, ts, clk, mk
}

func TestResolveAndIsolation(t *testing.T) {
	ctx := context.Background()
	reg, ts, _, _ := setup(t, 0)
	a, err := reg.Create(ctx, platform.NewTenant{Host: "A.example.test:8080"})
	if err != nil {
		t.Fatal(err)
	}
	if a.Hosts[0] != "a.example.test" {
		t.Fatalf("host not normalised: %v", a.Hosts)
	}
	if _, err := reg.Create(ctx, platform.NewTenant{Host: "a.example.test"}); !apperr.Is(err, apperr.Invalid) {
		t.Fatalf("duplicate host: %v", err)
	}
	if _, err := reg.Create(ctx, platform.NewTenant{Host: "bad host!"}); !apperr.Is(err, apperr.Invalid) {
		t.Fatalf("invalid host: %v", err)
	}
	b, _ := reg.Create(ctx, platform.NewTenant{Host: "b.example.test"})
	for _, rec := range []platform.Record{a, b} {
		if err := ts.Provision(ctx, rec); err != nil {
			t.Fatal(err)
		}
	}
	ta, releaseA, err := ts.Resolve(ctx, "a.example.test")
	if err != nil {
		t.Fatal(err)
	}
	defer releaseA()
	tb, releaseB, err := ts.Resolve(ctx, "B.EXAMPLE.TEST")
	if err != nil {
		t.Fatal(err)
	}
	defer releaseB()
	if ta.DB == tb.DB || ta.Keys.ID == tb.Keys.ID || ta.BlobPrefix == tb.BlobPrefix {
		t.Fatal("tenants must not share database, keys or blob prefix")
	}
	if len(ta.RolePermissions["admin"]) == 0 || len(ta.RolePermissions["student"]) == 0 {
		t.Fatal("roles are not seeded")
	}
	if _, _, err := ts.Resolve(ctx, "nowhere.test"); !apperr.Is(err, apperr.NotFound) {
		t.Fatalf("unknown host: %v", err)
	}
	// A tenant registered after the manager started is served at once.
	c, _ := reg.Create(ctx, platform.NewTenant{Host: "c.example.test"})
	ts.Provision(ctx, c)
	if _, release, err := ts.Resolve(ctx, "c.example.test"); err != nil {
		t.Fatalf("new tenant: %v", err)
	} else {
		release()
	}
}

func TestIdleEviction(t *testing.T) {
	ctx := context.Background()
	reg, ts, clk, _ := setup(t, 30*time.Minute)
	rec, _ := reg.Create(ctx, platform.NewTenant{Host: "a.test"})
	_, release, err := ts.Resolve(ctx, "a.test")
	if err != nil {
		t.Fatal(err)
	}
	clk.Advance(time.Hour)
	if n := ts.CloseIdle(); n != 0 {
		t.Fatal("a tenant in use must not be closed")
	}
	release()
	clk.Advance(29 * time.Minute)
	if n := ts.CloseIdle(); n != 0 {
		t.Fatal("closed before the idle time")
	}
	clk.Advance(time.Minute)
	if n := ts.CloseIdle(); n != 1 || ts.OpenCount() != 0 {
		t.Fatalf("closed %d, open %d", n, ts.OpenCount())
	}
	// It opens again on the next request.
	tn, release, err := ts.Resolve(ctx, "a.test")
	if err != nil || tn.ID != rec.ID {
		t.Fatalf("reopen: %v", err)
	}
	release()
}

func TestNoEvictionWhenIdleIsZero(t *testing.T) {
	ctx := context.Background()
	reg, ts, clk, _ := setup(t, 0)
	reg.Create(ctx, platform.NewTenant{Host: "a.test"})
	_, release, _ := ts.Resolve(ctx, "a.test")
	release()
	clk.Advance(1000 * time.Hour)
	if ts.CloseIdle() != 0 || ts.OpenCount() != 1 {
		t.Fatal("LMS_TENANT_IDLE=0 must never evict")
	}
}

func TestWarmTenantsKeepConnections(t *testing.T) {
	ctx := context.Background()
	reg, ts, _, _ := setup(t, 0, 2)
	open := map[string]*platform.Tenant{}
	for _, host := range []string{"a.test", "b.test", "c.test"} {
		reg.Create(ctx, platform.NewTenant{Host: host})
		tn, release, err := ts.Resolve(ctx, host)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tn.DB.ExecContext(ctx, `SELECT 1`); err != nil {
			t.Fatal(err)
		}
		release()
		open[host] = tn
	}
	// a.test, the least recently used, left the two warm tenants: its pool
	// closed its idle connections, the others keep theirs.
	if ts.WarmCount() != 2 || ts.OpenCount() != 3 {
		t.Fatalf("warm %d, open %d", ts.WarmCount(), ts.OpenCount())
	}
	if n := open["a.test"].DB.Stats().OpenConnections; n != 0 {
		t.Fatalf("cold tenant holds %d connections", n)
	}
	for _, host := range []string{"b.test", "c.test"} {
		if n := open[host].DB.Stats().Idle; n == 0 {
			t.Fatalf("warm tenant %s holds no idle connection", host)
		}
	}
	// Used again, a.test queries as before and pushes b.test out.
	tn, release, err := ts.Resolve(ctx, "a.test")
	if err != nil || tn != open["a.test"] {
		t.Fatalf("resolve a.test again: %v", err)
	}
	var n int
	if err := tn.DB.QueryRowContext(ctx, `SELECT COUNT(*) FROM roles`).Scan(&n); err != nil || n == 0 {
		t.Fatalf("query after its connections closed: %d, %v", n, err)
	}
	release()
	if n := open["b.test"].DB.Stats().OpenConnections; n != 0 {
		t.Fatalf("b.test, now cold, holds %d connections", n)
	}
}

func TestBorrowClosesWhatItOpened(t *testing.T) {
	ctx := context.Background()
	reg, ts, _, _ := setup(t, 0)
	a, _ := reg.Create(ctx, platform.NewTenant{Host: "a.test"})
	b, _ := reg.Create(ctx, platform.NewTenant{Host: "b.test"})
	// Borrowed while closed: closed again on release.
	tn, release, err := ts.Borrow(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	if ts.OpenCount() != 1 {
		t.Fatal("a borrowed tenant is open while held")
	}
	release()
	if ts.OpenCount() != 0 || tn.DB.Ping() == nil {
		t.Fatalf("a tenant only borrowed stays open: %d open", ts.OpenCount())
	}
	// Borrowed while a request holds it, or used by one meanwhile: left
	// open for the requests.
	_, releaseReq, err := ts.Resolve(ctx, "b.test")
	if err != nil {
		t.Fatal(err)
	}
	_, release, _ = ts.Borrow(ctx, b)
	release()
	releaseReq()
	_, release, _ = ts.Borrow(ctx, a)
	_, releaseReq, _ = ts.Resolve(ctx, "a.test")
	release()
	releaseReq()
	if ts.OpenCount() != 2 {
		t.Fatalf("open %d, want both tenants a request used", ts.OpenCount())
	}
	tn, release, err = ts.Resolve(ctx, "a.test")
	if err != nil || tn.DB.Ping() != nil {
		t.Fatalf("resolve after borrow: %v", err)
	}
	release()
}

func TestMasterKey(t *testing.T) {
	dir := t.TempDir()
	k1, err := platform.LoadMasterKey("", dir)
	if err != nil {
		t.Fatal(err)
	}
	k2, _ := platform.LoadMasterKey("", dir)
	if k1 != k2 {
		t.Fatal("the generated key must be kept in the data dir")
	}
	if _, err := platform.LoadMasterKey("c2hvcnQ=", dir); err == nil {
		t.Fatal("a short key must be refused")
	}
	// A tenant whose key was sealed with another master key cannot open.
	ctx := context.Background()
	reg, _, _, _ := setup(t, 0)
	rec, _ := reg.Create(ctx, platform.NewTenant{Host: "a.test"})
	other := platform.NewTenants(platform.NewRegistry(reg.DB(), k1, time.Now), platform.Options{DataDir: dir})
	if _, _, err := other.Get(ctx, rec); err == nil {
		t.Fatal("a wrong master key must not unseal tenant keys")
	}
}

// Registries made WithSharedKeys share their keys across platform
// databases, never within one: also a registry opened again on the same
// database (a restart) gives a new tenant a key no tenant there has.
func TestSharedKeys(t *testing.T) {
	ctx := context.Background()
	open := func(path string) *sqldb.DB {
		db, err := sqldb.OpenSQLite(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		if err := sqldb.Migrate(ctx, db, sqldb.PlatformSet); err != nil {
			t.Fatal(err)
		}
		return db
	}
	var mk platform.MasterKey
	dir := t.TempDir()
	one, two := open(filepath.Join(dir, "one.db")), open(filepath.Join(dir, "two.db"))
	create := func(reg *platform.Registry, host string) string {
		t.Helper()
		rec, err := reg.Create(ctx, platform.NewTenant{Host: host})
		if err != nil {
			t.Fatal(err)
		}
		return rec.KeyID
	}
	a := platform.NewRegistry(one, mk, time.Now, platform.WithSharedKeys())
	a1, a2 := create(a, "a1.test"), create(a, "a2.test")
	if a1 == a2 {
		t.Fatal("two tenants of one platform share a key")
	}
	b := platform.NewRegistry(two, mk, time.Now, platform.WithSharedKeys())
	if b1, b2 := create(b, "b1.test"), create(b, "b2.test"); b1 != a1 || b2 != a2 {
		t.Fatalf("another platform's keys %s %s, want the shared %s %s", b1, b2, a1, a2)
	}
	again := platform.NewRegistry(one, mk, time.Now, platform.WithSharedKeys())
	if a3 := create(again, "a3.test"); a3 == a1 || a3 == a2 {
		t.Fatal("a tenant made after a restart takes the key of another tenant of its platform")
	}
	fresh := platform.NewRegistry(two, mk, time.Now)
	if b3 := create(fresh, "b3.test"); b3 == a1 || b3 == a2 {
		t.Fatal("a registry without shared keys takes a shared one")
	}
}
