package scorm_test

import (
	"testing"
	"time"

	"github.com/lms-platform/lms/internal/apitest"
)

// TestSessionTimeCappedByWallClock: a SCO's session_time counts at most
// the wall-clock time since its session's launch, in the track and in
// the learner's time on the topic, in SCORM 1.2 and 2004 alike.
func TestSessionTimeCappedByWallClock(t *testing.T) {
	cases := []struct {
		name, fixture, key, huge, honest string
		honestSeconds                    int
	}{
		{"1.2", "PrerequisitesTest_SCORM12.zip", "cmi.core.session_time", "9999:59:59", "00:00:40", 40},
		{"2004", "RuntimeBasicCalls_SCORM20043rdEdition.zip", "cmi.session_time", "PT9999H59M59S", "PT40S", 40},
	}
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		w := newWorld(t, env)
		for _, c := range cases {
			// Access tokens last 5 minutes: each case signs in afresh.
			w.learner.Token, _ = env.Login(env.Host, w.learner.Email, w.learner.Password)
			pkg := apitest.Must(upload(t, env, w.tutor, "p.zip", fixture(t, c.fixture)))(t)
			sco := pkg.Scos[0].ID
			topic := scormTopic(t, w, c.name, pkg.ID, sco)
			seconds := func() int {
				return env.Count(t, `SELECT seconds FROM topic_progress WHERE user_id = $1 AND topic_id = $2`, w.learner.ID, topic)
			}

			s, _ := launch(t, env, w.learner, sco, topic)
			env.Clock.Advance(2 * time.Minute)
			s.commit(t, env, 1, map[string]any{c.key: c.huge})
			if got := seconds(); got != 120 {
				t.Errorf("%s: %s after 2 minutes counts %d s, want 120", c.name, c.huge, got)
			}
			// A later commit of the same session counts up to the time
			// since the launch, not since the previous commit.
			env.Clock.Advance(time.Minute)
			s.commit(t, env, 2, map[string]any{c.key: c.huge})
			if got := seconds(); got != 180 {
				t.Errorf("%s: second commit: %d s, want 180", c.name, got)
			}
			// A new session starts its own clock; an honest time counts as sent.
			s2, _ := launch(t, env, w.learner, sco, topic)
			s2.commit(t, env, 1, map[string]any{c.key: c.huge})
			env.Clock.Advance(time.Minute)
			s2.commit(t, env, 2, map[string]any{c.key: c.honest})
			if got := seconds(); got != 180+c.honestSeconds {
				t.Errorf("%s: new session: %d s, want %d", c.name, got, 180+c.honestSeconds)
			}
		}
	})
}
