package h5p_test

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"testing"

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
		save := func(ctx, data string, asJSON bool) *apitest.Response {
			p := fmt.Sprintf("/h5p/contentUserData/%d/state/0?contextId=%s", id, ctx)
			if asJSON {
				return env.Do(apitest.Request{Method: "POST", Path: p, Token: student.Token, Body: map[string]any{"data": data}})
			}
			return env.Do(apitest.Request{Method: "POST", Path: p, Token: student.Token,
				Body: url.Values{"data": {data}, "preload": {"1"}}.Encode(), Type: "application/x-www-form-urlencoded"})
		}
		rows := func() int {
			return env.Count(t, `SELECT COUNT(*) FROM h5p_content_user_data WHERE content_id = $1 AND user_id = $2`, id, student.ID)
		}

		// A state of exactly 1 MB, which form encoding triples, is kept; one
		// byte more is refused.
		limit := h5pstore.DefaultMaxStateSize
		state := strings.Repeat("{}", limit/2)
		if res := save("big", state, false); res.Status != 200 {
			t.Fatalf("a state of %d bytes: %d %.200s", len(state), res.Status, res.Body)
		}
		for name, asJSON := range map[string]bool{"form": false, "JSON": true} {
			res := save("bigger", state+" ", asJSON)
			if res.Status != 413 || res.Get("success") != false || !strings.Contains(res.String("message"), strconv.Itoa(limit)) {
				t.Errorf("%s: a state of %d bytes: %d %.200s, want 413 naming the limit", name, len(state)+1, res.Status, res.Body)
			}
		}
		if res := save("huge", strings.Repeat("x", 4*limit), false); res.Status != 413 {
			t.Errorf("a body of 4 MB: %d %.200s, want 413", res.Status, res.Body)
		}
		if n := rows(); n != 1 {
			t.Fatalf("%d states kept, want 1", n)
		}

		for i := 1; i < h5pstore.DefaultMaxStates; i++ {
			if res := save("c"+strconv.Itoa(i), "s", false); res.Status != 200 {
				t.Fatalf("state %d: %d %s", i+1, res.Status, res.Body)
			}
		}
		res := save("one-more", "s", false)
		if res.Status != 422 || res.Get("success") != false || !strings.Contains(res.String("message"), strconv.Itoa(h5pstore.DefaultMaxStates)) {
			t.Errorf("state %d: %d %s, want 422 naming the cap", h5pstore.DefaultMaxStates+1, res.Status, res.Body)
		}
		if res := save("c1", "replaced", false); res.Status != 200 {
			t.Errorf("replacing a kept state at the cap: %d %s", res.Status, res.Body)
		}
		if n := rows(); n != h5pstore.DefaultMaxStates {
			t.Errorf("%d states kept, want %d", n, h5pstore.DefaultMaxStates)
		}
		// Another user has a cap of their own.
		other := env.NewUser("student")
		p := fmt.Sprintf("/h5p/contentUserData/%d/state/0?contextId=one-more", id)
		if res := env.Do(apitest.Request{Method: "POST", Path: p, Token: other.Token, Body: "data=s",
			Type: "application/x-www-form-urlencoded"}); res.Status != 200 {
			t.Errorf("another user's first state: %d %s", res.Status, res.Body)
		}
	})
}
