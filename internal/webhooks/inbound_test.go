package webhooks_test

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lms-platform/lms/internal/apitest"
	"github.com/lms-platform/lms/internal/apperr"
	"github.com/lms-platform/lms/internal/webhooks"
)

// Verify accepts what Sign makes, with any of several signatures (a
// rotation), and a secret with or without the whsec_ prefix; it refuses
// a changed body, id or time, an unknown version and a time out of
// tolerance, each as Unauthorized.
func TestVerify(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	body := []byte(`{"meeting":"lesson-1"}`)
	sign := func(secret, id string, at time.Time) webhooks.Signed {
		sig, err := webhooks.Sign(secret, id, at.Unix(), body)
		if err != nil {
			t.Fatal(err)
		}
		return webhooks.Signed{ID: id, Timestamp: strconv.FormatInt(at.Unix(), 10), Signature: sig}
	}
	secret, old := webhooks.NewSecret(), webhooks.NewSecret()
	good := sign(secret, "msg_1", now)
	for name, h := range map[string]webhooks.Signed{
		"whsec secret":       good,
		"typed secret":       sign("a secret an operator typed", "msg_1", now),
		"during a rotation":  {ID: "msg_1", Timestamp: good.Timestamp, Signature: sign(old, "msg_1", now).Signature + " " + good.Signature},
		"4 minutes early":    sign(secret, "msg_1", now.Add(4*time.Minute)),
		"4 minutes and late": sign(secret, "msg_1", now.Add(-4*time.Minute)),
	} {
		key := secret
		if name == "typed secret" {
			key = "a secret an operator typed"
		}
		if err := webhooks.Verify(key, h, body, now); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	for name, c := range map[string]struct {
		secret string
		h      webhooks.Signed
		body   string
	}{
		"no headers":      {secret, webhooks.Signed{}, string(body)},
		"other body":      {secret, good, `{"meeting":"lesson-2"}`},
		"other id":        {secret, webhooks.Signed{ID: "msg_2", Timestamp: good.Timestamp, Signature: good.Signature}, string(body)},
		"other secret":    {old, good, string(body)},
		"no secret":       {"", good, string(body)},
		"v2 signature":    {secret, webhooks.Signed{ID: "msg_1", Timestamp: good.Timestamp, Signature: "v2" + good.Signature[2:]}, string(body)},
		"6 minutes late":  {secret, sign(secret, "msg_1", now.Add(-6*time.Minute)), string(body)},
		"6 minutes early": {secret, sign(secret, "msg_1", now.Add(6*time.Minute)), string(body)},
		"not a time":      {secret, webhooks.Signed{ID: "msg_1", Timestamp: "soon", Signature: good.Signature}, string(body)},
	} {
		err := webhooks.Verify(c.secret, c.h, []byte(c.body), now)
		if e := apperr.As(err); e == nil || e.Kind != apperr.Unauthorized {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// TestInboundRoutesDescribed: the API description of both inbound routes
// names the signature headers and gives the scheme; the Jitsi route's
// payload has its schema.
func TestInboundRoutesDescribed(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		spec := env.Call(t, 200, "GET", "/api/openapi.json", "", nil)
		for _, op := range []string{"paths./api/jitsi/recorded-video.post", "paths./api/living-course/webhooks/{id}.post"} {
			params, _ := spec.Get(op + ".parameters").([]any)
			headers := map[string]bool{}
			for _, p := range params {
				if m, _ := p.(map[string]any); m["in"] == "header" {
					headers[m["name"].(string)] = true
				}
			}
			if !headers["webhook-id"] || !headers["webhook-timestamp"] || !headers["webhook-signature"] {
				t.Errorf("%s: header parameters %v", op, headers)
			}
			if d := spec.String(op + ".description"); !strings.Contains(d, webhooks.SignedDoc) {
				t.Errorf("%s: the description does not give the scheme: %q", op, d)
			}
		}
		ref := spec.String("paths./api/jitsi/recorded-video.post.requestBody.content.application/json.schema.$ref")
		body := "components.schemas." + strings.TrimPrefix(ref, "#/components/schemas/")
		for _, field := range []string{"meeting", "url", "title"} {
			if spec.Get(body+".properties."+field) == nil {
				t.Errorf("the recording's schema %q lacks %s: %v", ref, field, spec.Get(body))
			}
		}
	})
}
