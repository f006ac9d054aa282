package tokens_test

import (
	"bytes"
	"strings"
	"sync"
	"testing"

	"github.com/lms-platform/lms/client"
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
	ctx := t.Context()
	u := env.UserClient(env.NewUser("student"))
	id, secret := create(t, u, client.CreateInputBody{Name: "n", Scopes: []string{"profile:read"}})
	scoped := env.Client("", secret)
	apitest.Must(scoped.GetProfileMe(ctx))(t)
	_, err := scoped.GetCoursesProgress(ctx, client.GetCoursesProgressParams{})
	apitest.Refused(t, err, 403)
	_, err = env.Client("", secret[:len(secret)-1]).GetProfileMe(ctx)
	apitest.Refused(t, err, 401)
	apitest.OK(t, u.DeleteAuthTokensID(ctx, id))
	_, err = scoped.GetProfileMe(ctx)
	apitest.Refused(t, err, 401)
	scoped.GetH5PContents(ctx, client.GetH5PContentsParams{})
	if !strings.Contains(log.String(), "/api/profile/me") {
		t.Fatal("no request was logged")
	}
	// The random part alone must not appear either.
	if strings.Contains(log.String(), secret[len(secret)-40:]) {
		t.Fatal("the secret reached the log")
	}
}
