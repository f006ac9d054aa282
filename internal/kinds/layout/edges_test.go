package layout_test

import (
	"testing"

	"github.com/lms-platform/lms/client"
	"github.com/lms-platform/lms/internal/apitest"
)

// TestPatchEmptyFallback: a fallback sent empty on an update is checked
// and refused (the fallback is required), not taken for a field left out;
// a document sent empty is refused too.
func TestPatchEmptyFallback(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		w := newWorld(t, env)
		created := env.Call(t, 201, "POST", "/api/admin/topics", env.As("tutor").Token, w.body([]any{callout()}, "Read this first."))
		topic := int64(created.Number("data.id"))
		c := env.ClientAs("tutor")
		_, err := c.PatchAdminTopicsID(t.Context(), topic, client.PatchAdminTopicsIDBody{Fallback: client.Ptr("")})
		if e := apitest.Refused(t, err, 422); e.Errors["fallback"] == nil {
			t.Errorf("empty fallback: %v", e)
		}
		_, err = c.PatchAdminTopicsID(t.Context(), topic, client.PatchAdminTopicsIDBody{Fallback: client.Ptr("   ")})
		apitest.Refused(t, err, 422)
		// A fallback sent with text is taken.
		apitest.Must(c.PatchAdminTopicsID(t.Context(), topic, client.PatchAdminTopicsIDBody{Fallback: client.Ptr("Read the lesson.")}))(t)
	})
}
