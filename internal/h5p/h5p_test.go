package h5p_test

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lms-platform/lms/internal/access"
	"github.com/lms-platform/lms/internal/apitest"
	"github.com/lms-platform/lms/internal/auth"
	"github.com/lms-platform/lms/internal/h5p"
)

// get sends a GET to the H5P service on host with optional headers.
func get(env *apitest.Env, host, path, token string, headers map[string]string) *apitest.Response {
	env.T.Helper()
	return env.Do(apitest.Request{Method: "GET", Path: path, Host: host, Token: token, Headers: headers})
}

func strs(v any) []string {
	list, _ := v.([]any)
	out := []string{}
	for _, x := range list {
		s, _ := x.(string)
		out = append(out, s)
	}
	return out
}

// closedAddr is a loopback address nobody listens on.
func closedAddr(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// expiry is when the token of env's default tenant expires.
func expiry(t *testing.T, env *apitest.Env, token string) time.Time {
	tenant, release := env.OpenTenant(env.Tenant)
	defer release()
	c, err := auth.Parse(tenant, env.Clock.Now(), token, 0)
	if err != nil {
		t.Fatal(err)
	}
	return c.ExpiresAt.Time
}

func TestTenancy(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		internal := map[string]string{"X-Internal-Token": env.Server.Config.InternalKey}
		tenantID := float64(env.Tenant.ID)

		res := get(env, "nowhere.test", "/h5p/health", "", nil)
		if res.Status != 404 || res.String("message") != "Unknown tenant." || res.Get("success") != false {
			t.Errorf("unknown host: %d %s", res.Status, res.Body)
		}
		if res := get(env, "nowhere.test", "/h5p/whoami", "", nil); res.Status != 404 {
			t.Errorf("unknown host whoami: %d", res.Status)
		}
		for _, host := range []string{"school.test", "h5p.school.test", "a.b.school.test:8080", "SCHOOL.test."} {
			res := get(env, host, "/h5p/health", "", nil)
			if res.Status != 200 || res.Number("tenant") != tenantID {
				t.Errorf("%s: %d %s, want tenant %v", host, res.Status, res.Body, tenantID)
			}
		}
		plat, err := env.Server.Registry.Platform(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if res := get(env, "platform.test", "/h5p/health", "", nil); res.Number("tenant") != float64(plat.ID) {
			t.Errorf("platform host: %s", res.Body)
		}

		fwd := map[string]string{"X-Forwarded-Host": "school.test"}
		if res := get(env, "nowhere.test", "/h5p/health", "", fwd); res.Status != 404 {
			t.Errorf("X-Forwarded-Host without internal token: %d, want 404", res.Status)
		}
		fwd["X-Internal-Token"] = env.Server.Config.InternalKey
		if res := get(env, "nowhere.test", "/h5p/health", "", fwd); res.Status != 200 || res.Number("tenant") != tenantID {
			t.Errorf("X-Forwarded-Host with internal token: %d %s", res.Status, res.Body)
		}
		for _, path := range []string{"/h5p/health", "/h5p/whoami"} {
			res := get(env, "school.test", path, "", map[string]string{"X-Internal-Token": "wrong"})
			if res.Status != 401 || res.Get("success") != false {
				t.Errorf("wrong internal token on %s: %d %s", path, res.Status, res.Body)
			}
		}
		if res := get(env, "school.test", "/h5p/whoami", "", internal); res.Get("data.system") != true ||
			res.String("data.id") != "system" || !slices.Contains(strs(res.Get("data.permissions")), "h5p_library_delete") {
			t.Errorf("internal token: %s", res.Body)
		}
		if res := get(env, "school.test", "/h5p/nothing-here", "", nil); res.Status != 404 {
			t.Errorf("unknown route: %d", res.Status)
		}
	})
}

func TestAuthentication(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		res := get(env, env.Host, "/h5p/whoami", "", nil)
		if res.Status != 200 || res.Get("success") != true || res.String("data.id") != "anonymous" ||
			res.String("data.name") != "Anonymous" || res.Get("data.email") != "" ||
			res.Get("data.permissions") == nil || len(strs(res.Get("data.permissions"))) != 0 {
			t.Errorf("anonymous: %s", res.Body)
		}
		if res := get(env, env.Host, "/h5p/whoami", "not-a-token", nil); res.String("data.id") != "anonymous" {
			t.Errorf("invalid token: %s", res.Body)
		}

		student := env.As("student")
		res = get(env, env.Host, "/h5p/whoami", student.Token, nil)
		perms := strs(res.Get("data.permissions"))
		if res.String("data.id") != strconv.FormatInt(student.ID, 10) || res.String("data.email") != student.Email ||
			!slices.Contains(perms, "user_read_self") || slices.Contains(perms, "h5p_create") ||
			!slices.Contains(strs(res.Get("data.roles")), "student") {
			t.Errorf("student: %s", res.Body)
		}
		res = get(env, env.Host, "/h5p/whoami?_token="+student.Token, "", nil)
		if res.String("data.id") != strconv.FormatInt(student.ID, 10) {
			t.Errorf("_token: %s", res.Body)
		}

		other := env.As("other-admin")
		if res := get(env, env.Host, "/h5p/whoami", other.Token, nil); res.String("data.id") != "anonymous" {
			t.Errorf("other tenant's token: %s", res.Body)
		}
		if res := get(env, "other.test", "/h5p/whoami", other.Token, nil); res.String("data.id") != strconv.FormatInt(other.ID, 10) {
			t.Errorf("other tenant's token on its host: %s", res.Body)
		}
	})
}

// TestRoleMatrix checks the seeded H5P permissions of each role as the
// service sees them through the API.
func TestRoleMatrix(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		want := map[string][]access.Permission{
			"admin": access.H5PPermissions,
			"tutor": {access.H5PAuthorList, access.H5PCreate, access.H5PAuthorUpdate, access.H5PAuthorDelete,
				access.H5PLibraryList, access.H5PLibraryRead},
			"student": nil,
		}
		for role, perms := range want {
			res := get(env, env.Host, "/h5p/whoami", env.As(role).Token, nil)
			got := strs(res.Get("data.permissions"))
			for _, p := range access.H5PPermissions {
				if has, should := slices.Contains(got, string(p)), slices.Contains(perms, p); has != should {
					t.Errorf("%s: %s held=%v, want %v", role, p, has, should)
				}
			}
		}
	})
}

// countingTransport counts the service's calls to the API.
type countingTransport struct{ n atomic.Int64 }

func (c *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	c.n.Add(1)
	return http.DefaultTransport.RoundTrip(r)
}

func TestProfileCache(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		calls := &countingTransport{}
		svc := withOptions(t, env, func(o *h5p.Options) { o.HTTPClient = &http.Client{Transport: calls} })
		student := env.As("student")
		id := strconv.FormatInt(student.ID, 10)
		for range 2 {
			if res := get(svc, env.Host, "/h5p/whoami", student.Token, nil); res.String("data.id") != id {
				t.Fatalf("student: %s", res.Body)
			}
		}
		if n := calls.n.Load(); n != 1 {
			t.Errorf("two requests made %d API calls, want 1", n)
		}
		if env.Server.Redis != nil {
			t.Log("Redis expires entries in real time; the fake clock cannot age them")
			return
		}
		env.Clock.Advance(h5p.ProfileTTL + time.Second)
		get(svc, env.Host, "/h5p/whoami", student.Token, nil)
		if n := calls.n.Load(); n != 2 {
			t.Errorf("after 61 s: %d API calls, want 2", n)
		}

		// Cached 10 s before expiry, the profile is gone at expiry even though
		// the token is still accepted locally; the API then refuses it.
		env.Clock.Set(expiry(t, env, student.Token).Add(-10 * time.Second))
		get(svc, env.Host, "/h5p/whoami", student.Token, nil)
		before := calls.n.Load()
		env.Clock.Advance(11 * time.Second)
		res := get(svc, env.Host, "/h5p/whoami", student.Token, nil)
		if calls.n.Load() != before+1 || res.String("data.id") != "anonymous" {
			t.Errorf("past expiry: %d calls (want %d), %s", calls.n.Load(), before+1, res.Body)
		}
	})
}

func TestAPIUnreachable(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		student := env.As("student")
		id := strconv.FormatInt(student.ID, 10)
		svc := withOptions(t, env, func(o *h5p.Options) { o.APIURL = "http://" + closedAddr(t) })
		res := get(svc, env.Host, "/h5p/whoami", student.Token, nil)
		if res.String("data.id") != id || len(strs(res.Get("data.permissions"))) != 0 || res.Get("data.anonymous") != false {
			t.Errorf("API down: %s", res.Body)
		}
		// The token's times are checked locally with 30 s of tolerance.
		exp := expiry(t, env, student.Token)
		env.Clock.Set(exp.Add(h5p.Leeway - time.Second))
		if res := get(svc, env.Host, "/h5p/whoami", student.Token, nil); res.String("data.id") != id {
			t.Errorf("within the tolerance: %s", res.Body)
		}
		env.Clock.Set(exp.Add(h5p.Leeway + time.Second))
		if res := get(svc, env.Host, "/h5p/whoami", student.Token, nil); res.String("data.id") != "anonymous" {
			t.Errorf("past the tolerance: %s", res.Body)
		}
	})
}

func TestHealth(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		res := get(env, env.Host, "/h5p/health", "", nil)
		wantRedis := "disabled"
		if env.Server.Redis != nil {
			wantRedis = "ok"
		}
		if res.Status != 200 || res.Get("ok") != true || res.Number("tenant") != float64(env.Tenant.ID) ||
			res.String("db") != "ok" || res.String("s3") != "ok" || res.String("redis") != wantRedis {
			t.Errorf("health: %d %s", res.Status, res.Body)
		}
		for _, host := range []string{"localhost", "127.0.0.1:8080", "[::1]"} {
			res := get(env, host, "/h5p/health", "", nil)
			m, _ := res.JSON.(map[string]any)
			if _, has := m["tenant"]; res.Status != 200 || !has || m["tenant"] != nil || res.Get("ok") != true ||
				res.String("redis") != wantRedis {
				t.Errorf("loopback %s: %d %s", host, res.Status, res.Body)
			}
		}
		rdb := redis.NewClient(&redis.Options{Addr: closedAddr(t), MaxRetries: -1, DialTimeout: time.Second})
		defer rdb.Close()
		down := withOptions(t, env, func(o *h5p.Options) { o.Redis = rdb })
		res = get(down, env.Host, "/h5p/health", "", nil)
		if res.Status != 503 || res.Get("ok") != false || res.String("redis") != "down" || res.String("db") != "ok" {
			t.Errorf("Redis down: %d %s", res.Status, res.Body)
		}
	})
}

// syncBuffer is a log sink safe for the server's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestTokensNeverLogged(t *testing.T) {
	var log syncBuffer
	env := apitest.New(t, "sqlite", apitest.Options{Log: &log})
	student := env.As("student")
	// The API unreachable: the warning path logs too.
	svc := withOptions(t, env, func(o *h5p.Options) { o.APIURL = "http://" + closedAddr(t) })
	get(svc, env.Host, "/h5p/whoami?_token="+student.Token, "", nil)
	get(svc, env.Host, "/h5p/whoami", student.Token, nil)
	get(svc, env.Host, "/h5p/whoami", "", map[string]string{"X-Internal-Token": env.Server.Config.InternalKey})
	out := log.String()
	if !strings.Contains(out, `"route":"GET /h5p/whoami"`) {
		t.Fatalf("no request log line for the H5P route: %s", out)
	}
	for name, secret := range map[string]string{"token": student.Token, "internal token": env.Server.Config.InternalKey} {
		if strings.Contains(out, secret) {
			t.Errorf("the log holds the %s", name)
		}
	}
}
