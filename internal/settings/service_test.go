package settings

import (
	"context"
	"os"
	"reflect"
	"testing"
	"time"

	"github.com/lms-platform/lms/internal/apperr"
	"github.com/lms-platform/lms/internal/clock"
	"github.com/lms-platform/lms/internal/platform"
	"github.com/lms-platform/lms/internal/sqldb"
	"github.com/lms-platform/lms/internal/sqldb/sqldbtest"
)

// backends opens a fresh migrated tenant database per call: SQLite always,
// PostgreSQL when LMS_TEST_PG_URL is set (required under CI=true).
func backends(t *testing.T) map[string]func(t *testing.T) *platform.Tenant {
	out := map[string]func(t *testing.T) *platform.Tenant{"sqlite": openSQLite}
	pgURL := os.Getenv("LMS_TEST_PG_URL")
	switch {
	case pgURL != "":
		out["postgres"] = func(t *testing.T) *platform.Tenant { return openPostgres(t, pgURL) }
	case os.Getenv("CI") == "true":
		t.Fatal("LMS_TEST_PG_URL is not set; CI=true requires PostgreSQL")
	}
	return out
}

func openSQLite(t *testing.T) *platform.Tenant {
	t.Helper()
	ctx := context.Background()
	db, err := sqldb.OpenSQLite(ctx, t.TempDir()+"/t.db")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if err := sqldb.Migrate(ctx, db, sqldb.TenantSet); err != nil {
		t.Fatal(err)
	}
	return &platform.Tenant{DB: db}
}

func openPostgres(t *testing.T, serverURL string) *platform.Tenant {
	return &platform.Tenant{DB: sqldbtest.Postgres(t, serverURL, "settings_test", sqldb.TenantSet)}
}

var epoch = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

func TestService(t *testing.T) {
	for name, open := range backends(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			for _, tc := range []struct {
				name string
				run  func(t *testing.T, tn *platform.Tenant)
			}{
				{"precedence", testPrecedence},
				{"typed helpers", testTyped},
				{"update validates", testUpdateRefusals},
				{"update is atomic", testAtomic},
				{"update overwrites", testOverwrite},
				{"all public and private", testAll},
				{"demo group", testDemo},
			} {
				t.Run(tc.name, func(t *testing.T) { tc.run(t, open(t)) })
			}
		})
	}
}

func mustGet(t *testing.T, s *Service, tn *platform.Tenant, key string) any {
	t.Helper()
	v, err := s.Get(context.Background(), tn, key)
	if err != nil {
		t.Fatalf("Get %s: %v", key, err)
	}
	return v
}

func testPrecedence(t *testing.T, tn *platform.Tenant) {
	ctx := context.Background()
	file := map[string]any{"lms_auth.registration": "disabled", "lms_gift_quiz.max_quiz_time": 30.0,
		"invoices.seller.attributes.phone": "+1 555"}
	s := New(file, clock.NewFake(epoch))

	// Built-in default where the file says nothing; file default otherwise.
	if v := mustGet(t, s, tn, "lms_auth.auto_verified_email"); v != "disabled" {
		t.Fatalf("built-in default: %v", v)
	}
	if v := mustGet(t, s, tn, "lms_auth.registration"); v != "disabled" {
		t.Fatalf("file default: %v", v)
	}
	// The tenant's value wins over both, including a stored null.
	if err := s.Update(ctx, tn, map[string]any{"lms_auth.registration": "enabled",
		"lms_auth.auto_verified_email": "enabled", "invoices.seller.attributes.phone": nil}); err != nil {
		t.Fatal(err)
	}
	for key, want := range map[string]any{"lms_auth.registration": "enabled",
		"lms_auth.auto_verified_email": "enabled", "invoices.seller.attributes.phone": nil,
		"lms_gift_quiz.max_quiz_time": 30.0} {
		if v := mustGet(t, s, tn, key); v != want {
			t.Errorf("%s = %#v, want %#v", key, v, want)
		}
	}
	// Another service over the same tenant (another replica) sees the
	// stored values, and its own file defaults for the rest.
	other := New(map[string]any{"lms_gift_quiz.max_quiz_time": 45.0}, nil)
	if v := mustGet(t, other, tn, "lms_auth.registration"); v != "enabled" {
		t.Fatalf("stored value on another service: %v", v)
	}
	if v := mustGet(t, other, tn, "lms_gift_quiz.max_quiz_time"); v != 45.0 {
		t.Fatalf("other file default: %v", v)
	}
	if _, err := s.Get(ctx, tn, "lms_auth.nope"); err == nil {
		t.Fatal("unknown key read")
	}
}

func testTyped(t *testing.T, tn *platform.Tenant) {
	ctx := context.Background()
	s := New(nil, clock.NewFake(epoch))
	if err := s.Update(ctx, tn, map[string]any{"lms_auth.token_expiration_minutes": 15, "lms_interactive.enabled": false,
		"lms_auth.return_url": "https://app.example.com"}); err != nil {
		t.Fatal(err)
	}
	if n, err := s.Int(ctx, tn, "lms_auth.token_expiration_minutes"); err != nil || n != 15 {
		t.Fatalf("Int = %d, %v", n, err)
	}
	if n, err := s.Int(ctx, tn, "lms_courses.reminder_of_deadline_count_days"); err != nil || n != 3 {
		t.Fatalf("Int default = %d, %v", n, err)
	}
	if b, err := s.Bool(ctx, tn, "lms_interactive.enabled"); err != nil || b {
		t.Fatalf("Bool = %v, %v", b, err)
	}
	if b, err := s.Bool(ctx, tn, "lms_demo.enabled"); err != nil || b {
		t.Fatalf("Bool demo = %v, %v", b, err)
	}
	if str, err := s.String(ctx, tn, "lms_auth.return_url"); err != nil || str != "https://app.example.com" {
		t.Fatalf("String = %q, %v", str, err)
	}
	if str, err := s.String(ctx, tn, "lms_auth.socialite.google.client_id"); err != nil || str != "" {
		t.Fatalf("String of null = %q, %v", str, err)
	}
	if _, err := s.Int(ctx, tn, "lms_auth.registration"); err == nil {
		t.Fatal("Int of a string setting")
	}
	if _, err := s.Bool(ctx, tn, "lms_auth.registration"); err == nil {
		t.Fatal("Bool of a string setting")
	}
	if _, err := s.String(ctx, tn, "lms_interactive.enabled"); err == nil {
		t.Fatal("String of a boolean setting")
	}
	if _, err := s.Int(ctx, tn, "lms_cart.min_product_price"); err != nil {
		t.Fatal(err) // 0 is whole
	}
	if err := s.Update(ctx, tn, map[string]any{"lms_cart.min_product_price": 1.5}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Int(ctx, tn, "lms_cart.min_product_price"); err == nil {
		t.Fatal("Int of 1.5")
	}
}

// fieldsOf returns the 422 messages of err keyed by setting.
func fieldsOf(t *testing.T, err error) map[string][]string {
	t.Helper()
	e := apperr.As(err)
	if e == nil || e.Kind != apperr.Invalid {
		t.Fatalf("want a validation error, got %v", err)
	}
	return e.Fields
}

func testUpdateRefusals(t *testing.T, tn *platform.Tenant) {
	ctx := context.Background()
	s := New(nil, clock.NewFake(epoch))
	for _, c := range []struct {
		values map[string]any
		key    string
		msg    string
	}{
		{map[string]any{"lms_auth.nope": 1}, "lms_auth.nope", "The lms_auth.nope setting does not exist."},
		{map[string]any{"lms_demo.enabled": true}, "lms_demo.enabled", "The lms_demo.enabled setting is read-only."},
		{map[string]any{"lms_demo.front_url": nil}, "lms_demo.front_url", "The lms_demo.front_url setting is read-only."},
		{map[string]any{"lms_auth.registration": "maybe"}, "lms_auth.registration",
			"The lms_auth.registration must be one of: enabled, disabled."},
		{map[string]any{"lms_gift_quiz.max_quiz_time": 0}, "lms_gift_quiz.max_quiz_time",
			"The lms_gift_quiz.max_quiz_time must be at least 1."},
		{map[string]any{"lms_auth.return_url": nil}, "lms_auth.return_url", "The lms_auth.return_url field is required."},
		{map[string]any{"lms_video.bitrates": func() {}}, "lms_video.bitrates", "The lms_video.bitrates must be a JSON value."},
	} {
		err := s.Update(ctx, tn, c.values)
		fields := fieldsOf(t, err)
		if len(fields) != 1 || len(fields[c.key]) != 1 || fields[c.key][0] != c.msg {
			t.Errorf("%v: errors %v, want %s: %q", c.values, fields, c.key, c.msg)
		}
		if apperr.As(err).Message != c.msg {
			t.Errorf("%v: message %q", c.values, apperr.As(err).Message)
		}
	}
	// Typed Go values are accepted as the JSON they encode to.
	if err := s.Update(ctx, tn, map[string]any{"lms_video.bitrates": []int{360, 720}}); err != nil {
		t.Fatal(err)
	}
	if v := mustGet(t, s, tn, "lms_video.bitrates"); !reflect.DeepEqual(v, []any{360.0, 720.0}) {
		t.Fatalf("bitrates = %#v", v)
	}
	if err := s.Update(ctx, tn, map[string]any{}); err != nil {
		t.Fatal(err)
	}
}

func storedCount(t *testing.T, tn *platform.Tenant) int {
	t.Helper()
	var n int
	if err := tn.DB.QueryRowContext(context.Background(), `SELECT COUNT(*) FROM settings`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func testAtomic(t *testing.T, tn *platform.Tenant) {
	ctx := context.Background()
	s := New(nil, clock.NewFake(epoch))
	err := s.Update(ctx, tn, map[string]any{
		"lms_auth.registration":         "disabled",
		"lms_courses.course_visibility": "show_only_public",
		"lms_payments.default_currency": "usd",
		"lms_demo.admin_url":            "https://admin.example.com",
		"lms_unknown.key":               true,
	})
	fields := fieldsOf(t, err)
	if len(fields) != 3 || fields["lms_payments.default_currency"] == nil || fields["lms_demo.admin_url"] == nil ||
		fields["lms_unknown.key"] == nil {
		t.Fatalf("errors = %v", fields)
	}
	if msg := apperr.As(err).Message; msg != "The lms_demo.admin_url setting is read-only. (and 2 more errors)" {
		t.Fatalf("message = %q", msg)
	}
	if n := storedCount(t, tn); n != 0 {
		t.Fatalf("%d values stored after a refused update", n)
	}
	if v := mustGet(t, s, tn, "lms_auth.registration"); v != "enabled" {
		t.Fatalf("registration = %v", v)
	}
}

func testOverwrite(t *testing.T, tn *platform.Tenant) {
	ctx := context.Background()
	clk := clock.NewFake(epoch)
	s := New(nil, clk)
	if err := s.Update(ctx, tn, map[string]any{"lms_auth.registration": "disabled", "lms_cart.min_product_price": "12.5"}); err != nil {
		t.Fatal(err)
	}
	clk.Advance(time.Hour)
	if err := s.Update(ctx, tn, map[string]any{"lms_auth.registration": "enabled"}); err != nil {
		t.Fatal(err)
	}
	if n := storedCount(t, tn); n != 2 {
		t.Fatalf("%d rows, want 2", n)
	}
	if v := mustGet(t, s, tn, "lms_auth.registration"); v != "enabled" {
		t.Fatalf("registration = %v", v)
	}
	// Numeric strings are stored as numbers.
	if v := mustGet(t, s, tn, "lms_cart.min_product_price"); v != 12.5 {
		t.Fatalf("price = %#v", v)
	}
	var value string
	var updated time.Time
	if err := tn.DB.QueryRowContext(ctx, `SELECT value, updated_at FROM settings WHERE key = $1`,
		"lms_auth.registration").Scan(&value, &updated); err != nil {
		t.Fatal(err)
	}
	if value != `"enabled"` || !updated.Equal(epoch.Add(time.Hour)) {
		t.Fatalf("row = %s, %v", value, updated)
	}
}

func testAll(t *testing.T, tn *platform.Tenant) {
	ctx := context.Background()
	s := New(map[string]any{"lms_jitsi.host": "https://meet.example.com"}, clock.NewFake(epoch))
	if err := s.Update(ctx, tn, map[string]any{"lms_auth.registration": "disabled",
		"lms_payments.drivers.stripe.secret_key": "sk_test", "lms_gift_quiz.max_quiz_time": 20}); err != nil {
		t.Fatal(err)
	}
	public, err := s.All(ctx, tn, false)
	if err != nil {
		t.Fatal(err)
	}
	private, err := s.All(ctx, tn, true)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range Keys() {
		if k.ReadOnly {
			continue
		}
		if _, ok := lookupPath(public, k.Name); ok != k.Public {
			t.Errorf("%s in public config: %v", k.Name, ok)
		}
		if _, ok := lookupPath(private, k.Name); !ok {
			t.Errorf("%s missing from full config", k.Name)
		}
	}
	auth := public["lms_auth"].(map[string]any)
	if auth["registration"] != "disabled" || auth["return_url"] != "http://localhost:3000" {
		t.Fatalf("lms_auth = %v", auth)
	}
	if v, _ := lookupPath(private, "lms_payments.drivers.stripe.secret_key"); v != "sk_test" {
		t.Fatalf("secret key = %v", v)
	}
	if v, _ := lookupPath(private, "lms_gift_quiz.max_quiz_time"); v != 20.0 {
		t.Fatalf("quiz time = %v", v)
	}
	if v, _ := lookupPath(public, "lms_jitsi.host"); v != "https://meet.example.com" {
		t.Fatalf("jitsi host = %v", v)
	}
	if _, ok := public["lms_demo"]; ok {
		t.Fatal("demo group shown outside demo mode")
	}
	// Results are copies: changing one does not change the next.
	private["lms_video"].(map[string]any)["bitrates"] = append(private["lms_video"].(map[string]any)["bitrates"].([]any), 1.0)
	again, _ := s.All(ctx, tn, true)
	if v, _ := lookupPath(again, "lms_video.bitrates"); len(v.([]any)) != 0 {
		t.Fatalf("bitrates = %v", v)
	}
}

func lookupPath(m map[string]any, path string) (any, bool) {
	var cur any = m
	start := 0
	for i := 0; i <= len(path); i++ {
		if i == len(path) || path[i] == '.' {
			mm, ok := cur.(map[string]any)
			if !ok {
				return nil, false
			}
			cur, ok = mm[path[start:i]]
			if !ok {
				return nil, false
			}
			start = i + 1
		}
	}
	return cur, true
}

func testDemo(t *testing.T, tn *platform.Tenant) {
	ctx := context.Background()
	on := true
	s := New(map[string]any{"lms_demo.admin_url": "https://admin.example.com"}, clock.NewFake(epoch),
		WithDemo(func(_ context.Context, _ *platform.Tenant) (map[string]any, bool) {
			return map[string]any{"lms_demo.enabled": true, "lms_demo.front_url": "https://demo.example.com"}, on
		}))
	public, err := s.All(ctx, tn, false)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"enabled": true, "front_url": "https://demo.example.com", "admin_url": "https://admin.example.com"}
	if !reflect.DeepEqual(public["lms_demo"], want) {
		t.Fatalf("lms_demo = %#v", public["lms_demo"])
	}
	if b, err := s.Bool(ctx, tn, "lms_demo.enabled"); err != nil || !b {
		t.Fatalf("demo enabled = %v, %v", b, err)
	}
	on = false
	public, _ = s.All(ctx, tn, true)
	if _, ok := public["lms_demo"]; ok {
		t.Fatal("demo group shown with demo mode off")
	}
	if b, _ := s.Bool(ctx, tn, "lms_demo.enabled"); b {
		t.Fatal("demo enabled with demo mode off")
	}
}
