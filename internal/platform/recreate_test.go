package platform_test

import (
	"context"
	"testing"

	"github.com/lms-platform/lms/internal/platform"
)

// TestRecreate empties a tenant's database in place while a handle is
// held: the holder keeps working, the next handle sees a new database with
// its schema and roles, and the platform tenant is always refused.
func TestRecreate(t *testing.T) {
	reg, ts, _, _ := setup(t, 0)
	ctx := context.Background()
	rec, err := reg.Create(ctx, platform.NewTenant{Host: "demo.test", IsDemo: true})
	if err != nil {
		t.Fatal(err)
	}
	old, release, err := ts.Get(ctx, rec)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := old.DB.ExecContext(ctx, `INSERT INTO categories (name, slug, created_at, updated_at)
		VALUES ('Kept?', 'kept', CURRENT_TIMESTAMP, CURRENT_TIMESTAMP)`); err != nil {
		t.Fatal(err)
	}
	if err := ts.Recreate(ctx, rec); err != nil {
		t.Fatal(err)
	}
	// The evicted handle still answers its holder until released.
	if err := old.DB.PingContext(ctx); err != nil {
		t.Errorf("held handle closed under its holder: %v", err)
	}
	release()

	fresh, release, err := ts.Get(ctx, rec)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	if fresh == old {
		t.Fatal("the old handle was served after the recreation")
	}
	var categories, roles int
	if err := fresh.DB.QueryRowContext(ctx, `SELECT (SELECT COUNT(*) FROM categories), (SELECT COUNT(*) FROM roles)`).
		Scan(&categories, &roles); err != nil {
		t.Fatal(err)
	}
	if categories != 0 || roles == 0 {
		t.Errorf("after recreation: %d categories, %d roles", categories, roles)
	}

	plat, err := reg.Create(ctx, platform.NewTenant{Host: "platform.test", IsPlatform: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := ts.Recreate(ctx, plat); err == nil {
		t.Error("the platform tenant was recreated")
	}
}
