package settings

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/lms-platform/lms/internal/apperr"
	"github.com/lms-platform/lms/internal/clock"
	"github.com/lms-platform/lms/internal/platform"
	"github.com/lms-platform/lms/internal/sqldb"
)

// DemoFunc reports whether tenant t runs in demo mode and, if so, the
// values of the lms_demo keys it sets (by full key name); keys it leaves
// out keep their defaults.
type DemoFunc func(ctx context.Context, t *platform.Tenant) (values map[string]any, on bool)

// Option configures a Service.
type Option func(*Service)

// WithDemo makes the lms_demo group follow demo mode: shown by All only
// while fn reports it on, with fn's values. Without it the group is never
// shown.
func WithDemo(fn DemoFunc) Option {
	return func(s *Service) { s.demo = fn }
}

// Service reads and changes the settings of tenants. It holds no tenant
// state: every call names its tenant.
type Service struct {
	defaults map[string]any
	clock    clock.Clock
	demo     DemoFunc
}

// New returns a service whose operator defaults are fileDefaults (as
// returned by LoadDefaults, LoadDefaultsFile or DefaultsFromEnv, which
// check them; keys that are not settings and values that are not JSON are
// ignored here).
func New(fileDefaults map[string]any, clk clock.Clock, opts ...Option) *Service {
	if clk == nil {
		clk = clock.System{}
	}
	s := &Service{defaults: map[string]any{}, clock: clk}
	for k, v := range fileDefaults {
		if _, ok := byName[k]; !ok {
			continue
		}
		if v, err := normalize(v); err == nil {
			s.defaults[k] = clone(v)
		}
	}
	for _, o := range opts {
		o(s)
	}
	return s
}

// fallback is the value of k when the tenant has not set it.
func (s *Service) fallback(k Key) any {
	if v, ok := s.defaults[k.Name]; ok {
		return clone(v)
	}
	return clone(k.Default)
}

// demoValues returns the demo mode values of t, and whether it is on.
func (s *Service) demoValues(ctx context.Context, t *platform.Tenant) (map[string]any, bool) {
	if s.demo == nil {
		return nil, false
	}
	return s.demo(ctx, t)
}

func isDemo(name string) bool { return strings.HasPrefix(name, demoGroup+".") }

// Get returns the value of key in force for tenant t.
func (s *Service) Get(ctx context.Context, t *platform.Tenant, key string) (any, error) {
	k, ok := Lookup(key)
	if !ok {
		return nil, fmt.Errorf("settings: unknown key %q", key)
	}
	if isDemo(key) {
		if values, on := s.demoValues(ctx, t); on {
			if v, ok := values[key]; ok {
				return clone(v), nil
			}
		}
	}
	stored, err := s.stored(ctx, t)
	if err != nil {
		return nil, err
	}
	v, ok := stored[key]
	if !ok {
		return s.fallback(k), nil
	}
	return clone(v), nil
}

// String returns a string setting; null is "".
func (s *Service) String(ctx context.Context, t *platform.Tenant, key string) (string, error) {
	v, err := s.Get(ctx, t, key)
	if err != nil || v == nil {
		return "", err
	}
	str, ok := v.(string)
	if !ok {
		return "", fmt.Errorf("settings: %s is %T, not a string", key, v)
	}
	return str, nil
}

// Bool returns a boolean setting; null is false.
func (s *Service) Bool(ctx context.Context, t *platform.Tenant, key string) (bool, error) {
	v, err := s.Get(ctx, t, key)
	if err != nil || v == nil {
		return false, err
	}
	b, ok := v.(bool)
	if !ok {
		return false, fmt.Errorf("settings: %s is %T, not a boolean", key, v)
	}
	return b, nil
}

// Int returns an integer setting; null is 0.
func (s *Service) Int(ctx context.Context, t *platform.Tenant, key string) (int, error) {
	v, err := s.Get(ctx, t, key)
	if err != nil || v == nil {
		return 0, err
	}
	f, ok := v.(float64)
	if !ok || f != math.Trunc(f) || math.Abs(f) > 1<<53 {
		return 0, fmt.Errorf("settings: %s is %v, not an integer", key, v)
	}
	return int(f), nil
}

// All returns the values in force for tenant t, nested along the keys'
// dots: {"lms_auth": {"registration": "enabled", ...}, ...}. Private keys
// are left out unless includePrivate; the lms_demo group is shown only in
// demo mode.
func (s *Service) All(ctx context.Context, t *platform.Tenant, includePrivate bool) (map[string]any, error) {
	stored, err := storedValues(ctx, t.DB)
	if err != nil {
		return nil, err
	}
	demo, demoOn := s.demoValues(ctx, t)
	out := map[string]any{}
	for _, k := range registry {
		if !k.Public && !includePrivate {
			continue
		}
		v, ok := stored[k.Name]
		if isDemo(k.Name) {
			if !demoOn {
				continue
			}
			v, ok = demo[k.Name]
		}
		if ok {
			v = clone(v)
		} else {
			v = s.fallback(k)
		}
		put(out, k.Name, v)
	}
	return out, nil
}

// put sets v at the dotted path in m, creating the maps on the way. No key
// is a prefix of another (a test checks), so paths never collide.
func put(m map[string]any, path string, v any) {
	parts := strings.Split(path, ".")
	for _, p := range parts[:len(parts)-1] {
		next, ok := m[p].(map[string]any)
		if !ok {
			next = map[string]any{}
			m[p] = next
		}
		m = next
	}
	m[parts[len(parts)-1]] = v
}

// Update stores values (key → JSON value) for tenant t. Every key is
// checked first; when any is unknown, read-only or breaks its rule the
// answer is a 422 with messages keyed by setting key and nothing is
// written. Otherwise all values are written in one transaction.
func (s *Service) Update(ctx context.Context, t *platform.Tenant, values map[string]any) error {
	names := make([]string, 0, len(values))
	for name := range values {
		names = append(names, name)
	}
	slices.Sort(names)

	clean := make(map[string]any, len(values))
	fields := map[string][]string{}
	var first string
	fail := func(name, msg string) {
		fields[name] = append(fields[name], msg)
		if first == "" {
			first = msg
		}
	}
	for _, name := range names {
		k, ok := Lookup(name)
		switch {
		case !ok:
			fail(name, fmt.Sprintf("The %s setting does not exist.", name))
			continue
		case k.ReadOnly:
			fail(name, fmt.Sprintf("The %s setting is read-only.", name))
			continue
		}
		v, err := normalize(values[name])
		if err != nil {
			fail(name, fmt.Sprintf("The %s must be a JSON value.", name))
			continue
		}
		v, msg := k.Validate(v)
		if msg != "" {
			fail(name, msg)
			continue
		}
		clean[name] = v
	}
	if len(fields) > 0 {
		e := apperr.Validation(fields)
		e.Message = first
		if n := len(fields) - 1; n > 0 {
			e.Message += fmt.Sprintf(" (and %d more %s)", n, plural(n, "error", "errors"))
		}
		return e
	}
	if len(clean) == 0 {
		return nil
	}
	now := s.clock.Now()
	return t.DB.Tx(ctx, func(tx *sqldb.Tx) error {
		for _, name := range names {
			if err := storeValue(ctx, tx, name, clean[name], now); err != nil {
				return err
			}
		}
		// This process forgets the old values even where no change feed
		// is wired (a bare tenant handle); the feed tells the others.
		tx.AfterCommit(memoOf(t).drop)
		sqldb.Changed(tx, changedKey)
		return nil
	})
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
