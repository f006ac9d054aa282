package h5p_test

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/lms-platform/lms/client"
	"github.com/lms-platform/lms/internal/apitest"
	"github.com/lms-platform/lms/internal/h5p/h5pstore"
)

// TestUserStateLimits: one saved state is at most 1 MB, and a user keeps
// at most 64 states in a content; beyond either the save is refused in
// the envelope and nothing is stored (a student had stored 120 MB in three
// seconds by changing the context id). Replacing a kept state stays
// possible at the cap.
func TestUserStateLimits(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		id := installTrueFalse(t, env)
		student := env.As("student")
		// The form saves are raw: the H5P player posts URL-encoded forms,
		// which the client does not send, and form encoding is what
		// triples a state's size on the wire.
		save := func(ctx, data string) *apitest.Response {
			p := fmt.Sprintf("/h5p/contentUserData/%d/state/0?contextId=%s", id, ctx)
			return env.Do(apitest.Request{Method: "POST", Path: p, Token: student.Token,
				Body: url.Values{"data": {data}, "preload": {"1"}}.Encode(), Type: "application/x-www-form-urlencoded"})
		}
		sid := strconv.FormatInt(id, 10)
		saveJSON := func(c *client.Client, ctx, data string) error {
			return c.PostH5PContentUserDataIDIDID(t.Context(), sid, "state", "0",
				client.PostH5PContentUserDataIDIDIDParams{ContextID: &ctx}, client.StateForm{Data: data})
		}
		rows := func() int {
			return env.Count(t, `SELECT COUNT(*) FROM h5p_content_user_data WHERE content_id = $1 AND user_id = $2`, id, student.ID)
		}

		// A state of exactly 1 MB, which form encoding triples, is kept; one
		// byte more is refused.
		limit := h5pstore.DefaultMaxStateSize
		state := strings.Repeat("{}", limit/2)
		if res := save("big", state); res.Status != 200 {
			t.Fatalf("a state of %d bytes: %d %.200s", len(state), res.Status, res.Body)
		}
		if res := save("bigger", state+" "); res.Status != 413 || res.Get("success") != false || !strings.Contains(res.String("message"), strconv.Itoa(limit)) {
			t.Errorf("form: a state of %d bytes: %d %.200s, want 413 naming the limit", len(state)+1, res.Status, res.Body)
		}
		if e := apitest.Refused(t, saveJSON(env.UserClient(student), "bigger", state+" "), 413); !apitest.Says(e, strconv.Itoa(limit)) {
			t.Errorf("JSON: a state of %d bytes: %v, want 413 naming the limit", len(state)+1, e)
		}
		if res := save("huge", strings.Repeat("x", 4*limit)); res.Status != 413 {
			t.Errorf("a body of 4 MB: %d %.200s, want 413", res.Status, res.Body)
		}
		if n := rows(); n != 1 {
			t.Fatalf("%d states kept, want 1", n)
		}

		for i := 1; i < h5pstore.DefaultMaxStates; i++ {
			if res := save("c"+strconv.Itoa(i), "s"); res.Status != 200 {
				t.Fatalf("state %d: %d %s", i+1, res.Status, res.Body)
			}
		}
		res := save("one-more", "s")
		if res.Status != 422 || res.Get("success") != false || !strings.Contains(res.String("message"), strconv.Itoa(h5pstore.DefaultMaxStates)) {
			t.Errorf("state %d: %d %s, want 422 naming the cap", h5pstore.DefaultMaxStates+1, res.Status, res.Body)
		}
		if res := save("c1", "replaced"); res.Status != 200 {
			t.Errorf("replacing a kept state at the cap: %d %s", res.Status, res.Body)
		}
		if n := rows(); n != h5pstore.DefaultMaxStates {
			t.Errorf("%d states kept, want %d", n, h5pstore.DefaultMaxStates)
		}
		// Another user has a cap of their own.
		other := env.NewUser("student")
		if err := saveJSON(env.UserClient(other), "one-more", "s"); err != nil {
			t.Errorf("another user's first state: %v", err)
		}
	})
}
