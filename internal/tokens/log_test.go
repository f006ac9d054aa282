package tokens_test

import (
	"bytes"
	"strings"
	"sync"
	"testing"

	"github.com/lms-platform/lms/internal/apitest"
)

// lockedBuffer collects the server's log lines from its goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestSecretsStayOutOfLogs: creating, using, refusing and revoking a token
// leaves its secret out of the server's log.
func TestSecretsStayOutOfLogs(t *testing.T) {
	var log lockedBuffer
	env := apitest.New(t, "sqlite", apitest.Options{Log: &log})
	u := env.NewUser("student")
	id, secret := create(t, env, u.Token, map[string]any{"name": "n", "scopes": []string{"profile:read"}})
	env.Call(t, 200, "GET", "/api/profile/me", secret, nil)
	env.Call(t, 403, "GET", "/api/courses/progress", secret, nil)
	env.Call(t, 401, "GET", "/api/profile/me", secret[:len(secret)-1], nil)
	env.Call(t, 200, "DELETE", "/api/auth/tokens/"+id, u.Token, nil)
	env.Call(t, 401, "GET", "/api/profile/me", secret, nil)
	env.Do(apitest.Request{Method: "GET", Path: "/h5p/contents", Token: secret})
	if !strings.Contains(log.String(), "/api/profile/me") {
		t.Fatal("no request was logged")
	}
	// The random part alone must not appear either.
	if strings.Contains(log.String(), secret[len(secret)-40:]) {
		t.Fatal("the secret reached the log")
	}
}
