package scorm_test

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/lms-platform/lms/internal/apitest"
	"github.com/lms-platform/lms/internal/httpx"
	"github.com/lms-platform/lms/internal/kinds/scorm"
)

var pathParam = regexp.MustCompile(`\{([^}]+)\}`)

// TestTrackingTokenOnEveryRoute sends a learner's tracking token to every
// route of the API description, both as X-Lms-Tracking-Token and as a
// bearer token, and compares each answer with the same request sent with
// no credentials: the token opens nothing. A route an anonymous caller
// gets 401 from answers 401 with the token too, and no route answers a
// success with the token that it refuses without. The path parameters
// name the learner's own course, topic and package, so that a token that
// did authenticate would reach real rows. Only the tracking routes of the
// token's own SCO take it; those of another SCO refuse it (403).
func TestTrackingTokenOnEveryRoute(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		w := newWorld(t, env)
		pkg := apitest.Must(upload(t, env, w.tutor, "p.zip", fixture(t, "PrerequisitesTest_SCORM12.zip")))(t)
		own, other := pkg.Scos[0].ID, pkg.Scos[1].ID
		topic := scormTopic(t, w, "Modules", pkg.ID, own)
		s, _ := launch(t, env, w.learner, own, topic)

		// The sweep itself stays raw: it sends the token, as the header
		// and as a bearer token, to every route, described or not.
		fill := map[string]string{"course": fmt.Sprint(w.course), "topic": fmt.Sprint(topic), "id": fmt.Sprint(topic),
			"lesson": fmt.Sprint(w.lesson), "sco": fmt.Sprint(other), "package": fmt.Sprint(pkg.ID), "user": fmt.Sprint(w.learner.ID)}
		routes := httpx.Routes(env.Server.API)
		if len(routes) < 50 {
			t.Fatalf("only %d routes in the API description", len(routes))
		}
		checked := 0
		for _, route := range routes {
			method, path, _ := strings.Cut(route, " ")
			path = pathParam.ReplaceAllStringFunc(path, func(p string) string {
				name := strings.TrimSuffix(strings.Trim(p, "{}"), "...")
				if v, ok := fill[name]; ok {
					return v
				}
				return "1"
			})
			var body any
			switch {
			case strings.HasSuffix(path, "/commit"):
				// Valid bodies, so that only the token decides.
				body = map[string]any{"seq": 1000, "cmi": map[string]any{"cmi.core.lesson_status": "passed"}}
			case strings.HasSuffix(path, "/navigate"):
				body = map[string]any{"action": "continue"}
			case method != "GET" && method != "DELETE":
				body = map[string]any{}
			}
			send := func(headers map[string]string, token string) int {
				return env.Do(apitest.Request{Method: method, Path: path, Body: body, Headers: headers, Token: token}).Status
			}
			asHeader := send(map[string]string{scorm.TokenHeader: s.token}, "")
			asBearer := send(nil, s.token)
			anonymous := send(nil, "")
			tracking := strings.HasPrefix(path, "/api/scorm/tracks/")
			for how, got := range map[string]int{"header": asHeader, "bearer": asBearer} {
				switch {
				case tracking && how == "header" && got != 403:
					t.Errorf("%s %s (another SCO's tracking route), token as %s: %d, want 403", method, path, how, got)
				case !tracking && anonymous == 401 && got != 401:
					t.Errorf("%s %s, token as %s: %d, want 401 (as without credentials)", method, path, how, got)
				case got/100 == 2 && anonymous/100 != 2:
					t.Errorf("%s %s, token as %s: %d, but %d without credentials", method, path, how, got, anonymous)
				}
			}
			checked++
		}
		// The token still works where it belongs.
		if _, err := s.stored(t, env); err != nil {
			t.Fatalf("the token on its own SCO's track: %v", err)
		}
		t.Logf("%d routes checked", checked)
	})
}
