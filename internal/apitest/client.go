package apitest

import (
	"errors"
	"strings"
	"testing"

	"github.com/lms-platform/lms/client"
)

// ClientAs is the typed API client of the default tenant signed in as the
// role's user (As), or anonymous for "anonymous" and "". Calls through it
// name routes and fields by Go identifiers, so a renamed route or field
// fails to compile instead of at run time.
func (e *Env) ClientAs(role string) *client.Client {
	e.T.Helper()
	if role == "" || role == "anonymous" {
		return e.Client("", "")
	}
	return e.UserClient(e.As(role))
}

// UserClient is the typed API client of the default tenant signed in as u.
func (e *Env) UserClient(u *User) *client.Client {
	return e.Client("", u.Token)
}

// Clients holds a typed client per role, each user created on first use
// as As does.
type Clients struct {
	Admin, Tutor, Student, Anonymous *client.Client
}

// Clients signs in one user of each role and returns their clients.
func (e *Env) Clients() Clients {
	e.T.Helper()
	return Clients{Admin: e.ClientAs("admin"), Tutor: e.ClientAs("tutor"), Student: e.ClientAs("student"),
		Anonymous: e.ClientAs("anonymous")}
}

// Must takes a client call's answer and error and, given the test, fails
// it when the call failed or returns the answer:
//
//	course := apitest.Must(admin.PostAdminCourses(ctx, body))(t)
func Must[T any](v T, err error) func(testing.TB) T {
	return func(t testing.TB) T {
		t.Helper()
		if err != nil {
			t.Fatalf("API call: %v", err)
		}
		return v
	}
}

// OK fails the test when a client call without an answer failed.
func OK(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("API call: %v", err)
	}
}

// Refused fails the test unless err is the API's answer with status, and
// returns that answer for further checks.
func Refused(t testing.TB, err error, status int) *client.Error {
	t.Helper()
	var e *client.Error
	if !errors.As(err, &e) {
		t.Fatalf("want an answer %d, got %v", status, err)
	}
	if e.Status != status {
		t.Fatalf("status %d, want %d: %v", e.Status, status, e)
	}
	return e
}

// Says reports whether the refusal's message or one of its field
// messages contains text.
func Says(e *client.Error, text string) bool {
	if strings.Contains(e.Message, text) {
		return true
	}
	for _, msgs := range e.Errors {
		for _, m := range msgs {
			if strings.Contains(m, text) {
				return true
			}
		}
	}
	for _, p := range e.Problems {
		if strings.Contains(p.Message, text) {
			return true
		}
	}
	return false
}

// AtOnce runs do(0) … do(n-1) side by side, as n clients sending their
// requests at the same time, and fails the test with each error returned.
func AtOnce(t testing.TB, n int, do func(i int) error) {
	t.Helper()
	errs := make(chan error, n)
	for i := range n {
		go func() { errs <- do(i) }()
	}
	for range n {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}
