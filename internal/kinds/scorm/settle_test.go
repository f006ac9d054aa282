package scorm_test

import (
	"context"
	"testing"
	"time"

	"github.com/lms-platform/lms/client"
	"github.com/lms-platform/lms/internal/apitest"
)

// failCompletions makes the database refuse every write that completes a
// topic, as a lost connection or a crash between the track's write and
// the topic's would; the returned function lifts it.
func failCompletions(t testing.TB, env *apitest.Env) func() {
	t.Helper()
	tn, release := env.OpenTenant(env.Tenant)
	defer release()
	ctx := context.Background()
	stmts := []string{
		`CREATE TRIGGER test_fail_completion_ins BEFORE INSERT ON topic_progress WHEN NEW.status = 1
			BEGIN SELECT RAISE(ABORT, 'injected failure'); END`,
		`CREATE TRIGGER test_fail_completion_upd BEFORE UPDATE ON topic_progress WHEN NEW.status = 1
			BEGIN SELECT RAISE(ABORT, 'injected failure'); END`,
	}
	undo := []string{`DROP TRIGGER test_fail_completion_ins`, `DROP TRIGGER test_fail_completion_upd`}
	if env.Backend == "postgres" {
		stmts = []string{
			`CREATE FUNCTION test_fail_completion() RETURNS trigger LANGUAGE plpgsql AS $$
			BEGIN IF NEW.status = 1 THEN RAISE EXCEPTION 'injected failure'; END IF; RETURN NEW; END $$`,
			`CREATE TRIGGER test_fail_completion BEFORE INSERT OR UPDATE ON topic_progress
				FOR EACH ROW EXECUTE FUNCTION test_fail_completion()`,
		}
		undo = []string{`DROP TRIGGER test_fail_completion ON topic_progress`, `DROP FUNCTION test_fail_completion()`}
	}
	for _, q := range stmts {
		if _, err := tn.DB.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	return func() {
		t.Helper()
		tn, release := env.OpenTenant(env.Tenant)
		defer release()
		for _, q := range undo {
			if _, err := tn.DB.ExecContext(ctx, q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
	}
}

// TestCommitRetryCompletesTopic: a commit that stores the track as
// completed but fails to complete the topic is retried by the player with
// the same seq; the retry, which changes nothing in the track, completes
// the topic. A later launch heals a topic the same way.
func TestCommitRetryCompletesTopic(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		w := newWorld(t, env)
		pkg := apitest.Must(upload(t, env, w.tutor, "g.zip", fixture(t, "RuntimeBasicCalls_SCORM20043rdEdition.zip")))(t)
		sco := pkg.Scos[0].ID
		topic := scormTopic(t, w, "Golf", pkg.ID, 0)
		s, _ := launch(t, env, w.learner, sco, topic)
		env.Clock.Advance(2 * time.Minute)
		s.commit(t, env, 1, map[string]any{"cmi.completion_status": "incomplete", "cmi.session_time": "PT30S"})

		finish := client.CommitInput{Seq: 2, Terminate: client.Ptr(true), Cmi: map[string]any{"cmi.completion_status": "completed",
			"cmi.success_status": "passed", "cmi.exit": "normal", "cmi.session_time": "PT1M"}}
		lift := failCompletions(t, env)
		_, err := s.send(t, env, finish)
		lift()
		apitest.Refused(t, err, 500) // the topic's completion failing
		// The track was stored completed; the topic was not.
		if got := env.Count(t, `SELECT COUNT(*) FROM scorm_tracks WHERE sco_id = $1 AND completed_at IS NOT NULL AND seq = 2`, sco); got != 1 {
			t.Fatalf("stored tracks completed at seq 2: %d", got)
		}
		if got := topicStatus(t, env, w.learner, w.course, topic); got == 1 {
			t.Fatal("topic complete though its completion failed")
		}
		// The player retries the commit it got no answer for.
		retry := apitest.Must(s.send(t, env, finish))(t)
		if retry.Applied || retry.Status != "passed" {
			t.Fatalf("retry: %+v", retry)
		}
		if got := topicStatus(t, env, w.learner, w.course, topic); got != 1 {
			t.Fatalf("topic status %v after the retried commit", got)
		}
		if tr := tracks(t, env, w.learner, w.course); len(tr) == 0 || tr[0].Status != "passed" || tr[0].Seconds != 60 {
			t.Errorf("tracks: %+v", tr)
		}
	})
}

// TestLaunchCompletesTopicOfDoneTrack: the learner closed the tab after
// the failed commit; launching the SCO again completes the topic.
func TestLaunchCompletesTopicOfDoneTrack(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		w := newWorld(t, env)
		pkg := apitest.Must(upload(t, env, w.tutor, "g.zip", fixture(t, "RuntimeBasicCalls_SCORM12.zip")))(t)
		sco := pkg.Scos[0].ID
		topic := scormTopic(t, w, "Golf", pkg.ID, 0)
		s, _ := launch(t, env, w.learner, sco, topic)
		lift := failCompletions(t, env)
		_, err := s.send(t, env, client.CommitInput{Seq: 1, Cmi: map[string]any{"cmi.core.lesson_status": "completed",
			"cmi.core.session_time": "00:00:10"}})
		lift()
		apitest.Refused(t, err, 500)
		if topicStatus(t, env, w.learner, w.course, topic) == 1 {
			t.Fatal("failed commit completed the topic")
		}
		_, l := launch(t, env, w.learner, sco, topic)
		if got := topicStatus(t, env, w.learner, w.course, topic); l.Attempt != 2 || got != 1 {
			t.Fatalf("relaunch: %+v; topic status %v", l, got)
		}
	})
}
