package lti_test

import (
	"context"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lms-platform/lms/client"
	"github.com/lms-platform/lms/internal/apitest"
	"github.com/lms-platform/lms/internal/config"
	"github.com/lms-platform/lms/internal/kinds/lti"
	"github.com/lms-platform/lms/internal/nodetest"
)

// startJosePlatform runs platform.mjs, a platform written on jose from
// the 1EdTech specifications, and waits for it to listen. Without node or
// the installed jose the test is skipped; under CI=true it fails.
func startJosePlatform(t *testing.T) (*nodetest.Process, string) {
	t.Helper()
	node := nodetest.Need(t, "jose platform", ltijsDir, "jose")
	p := nodetest.Start(t, node, ltijsDir, "platform.mjs")
	ev := p.Next(t, "listening")
	return p, "http://127.0.0.1:" + strconv.Itoa(int(ev["port"].(float64)))
}

// TestJosePlatform: an independent platform, written on jose from the
// specifications, launches our tool role (its own login initiation and
// id_token), rotates its key and launches again at once (accepted,
// though our key set cache was filled a moment before), and receives the
// first learner's grade through its token endpoint and score service
// (checked by its own rules).
func TestJosePlatform(t *testing.T) {
	for _, backend := range apitest.Backends(t) {
		t.Run(backend, func(t *testing.T) {
			platform, platformOrigin := startJosePlatform(t)
			env := apitest.New(t, backend, apitest.Options{Configure: func(c *config.Config) { c.FetchAllowPrivate = true }})
			env.AddTenant("127.0.0.1")
			_, port, _ := strings.Cut(strings.TrimPrefix(env.HTTP.URL, "http://"), ":")
			origin := "http://127.0.0.1:" + port
			token, _ := env.Login("127.0.0.1", "admin@127.0.0.1", "admin-password")
			admin := env.Client(strings.TrimPrefix(origin, "http://"), token)
			ctx := context.Background()

			published := "published"
			course := apitest.Must(admin.PostAdminCourses(ctx, client.CourseBody{Title: "Launched by jose", Status: &published}))(t).ID
			lesson := apitest.Must(admin.PostAdminLessons(ctx, client.CreateLessonInputBody{Title: "L", CourseID: course}))(t).ID
			topic := apitest.Must(admin.PostAdminTopics(ctx, client.PostAdminTopicsBody{Lesson: lesson, Title: "Read",
				Topicable: `Lms\TopicTypes\Models\TopicContent\RichText`, Markdown: ptrTo("Text.")}))(t).ID
			apitest.Must(admin.PostAdminLTIRegistrations(ctx, client.RegistrationInput{Name: "jose platform", Issuer: platformOrigin,
				ClientID: "jose-tool", AuthLoginURL: platformOrigin + "/auth", JwksURL: platformOrigin + "/jwks",
				TokenURL: ptrTo(platformOrigin + "/token"), DeploymentIDs: []string{"deployment-1"}, CourseID: &course}))(t)
			platform.Send(t, map[string]any{"cmd": "setup", "client_id": "jose-tool", "deployment_id": "deployment-1",
				"tool": map[string]string{"login_url": origin + lti.LoginPath, "launch_url": origin + lti.LaunchPath,
					"jwks_url": origin + lti.JWKSPath}})
			platform.Next(t, "ready")

			launch := func(sub string) *url.URL {
				t.Helper()
				// Both sides check the other's times against their own clocks.
				env.Clock.Set(time.Now())
				platform.Send(t, map[string]any{"cmd": "launch", "sub": sub, "custom": map[string]string{"topic_id": strconv.FormatInt(topic, 10)}})
				ev := platform.Next(t, "launched")
				location, _ := ev["location"].(string)
				loc, err := url.Parse(location)
				if ev["status"] != float64(303) || err != nil || loc.Query().Get("course") != strconv.FormatInt(course, 10) {
					t.Fatalf("launch of %s: %v", sub, ev)
				}
				return loc
			}
			loc := launch("learner-1")
			first := env.Clock.Now()
			// The platform rotates its key and launches at once: within the
			// floor between two fetches of its key set, so the launch is
			// accepted only if we fetch the set once more for the new kid.
			platform.Send(t, map[string]any{"cmd": "rotate"})
			platform.Next(t, "rotated")
			launch("learner-2")
			if gap := env.Clock.Now().Sub(first); gap >= 10*time.Second {
				t.Fatalf("the second launch came %s after the first, past the 10 s floor: the rotation was not tested", gap)
			}
			issued := apitest.Must(env.Client(strings.TrimPrefix(origin, "http://"), "").PostLTIToolExchange(ctx, client.ExchangeInputBody{Code: loc.Query().Get("code")}))(t)
			apitest.Must(env.Client(strings.TrimPrefix(origin, "http://"), issued.Token).PatchCoursesProgressID(ctx, course,
				client.WriteInputBody{Progress: []client.ProgressWrite{{TopicID: topic, Status: 1}}}))(t)
			// The server's dispatcher posts the grade after the commit: the
			// platform is asked until it has it.
			var ev map[string]any
			var scores []any
			for deadline := time.Now().Add(time.Minute); len(scores) == 0; time.Sleep(100 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatalf("the platform got no score: %v", ev)
				}
				platform.Send(t, map[string]any{"cmd": "scores"})
				ev = platform.Next(t, "scores")
				scores, _ = ev["scores"].([]any)
			}
			if refused, _ := ev["refused"].([]any); len(refused) != 0 || len(scores) != 1 {
				t.Fatalf("the platform got %v, refused %v", scores, ev["refused"])
			}
			got := scores[0].(map[string]any)
			score := got["score"].(map[string]any)
			if got["lineitem"] != "learner-1" || score["userId"] != "learner-1" || score["scoreGiven"] != float64(1) ||
				score["scoreMaximum"] != float64(1) || score["activityProgress"] != "Completed" || score["gradingProgress"] != "FullyGraded" {
				t.Fatalf("the score the platform got: %v", got)
			}
		})
	}
}
