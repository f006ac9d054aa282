package learning_test

import (
	"testing"
	"time"

	"github.com/lms-platform/lms/client"
	"github.com/lms-platform/lms/internal/apitest"
)

// TestKeptAnswersFollowChanges reads a learner's program again after each
// kind of change that a kept answer or a kept access decision depends on,
// each made in SQL as an operator or another package would, so that only
// the database's counters can tell the caches: every read must show the
// change at once.
func TestKeptAnswersFollowChanges(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		c, _, ts := grid(t, env, courseRow{}, 2, 2)
		learner := env.NewUser("student")
		program := func() (*client.LearnerProgram, error) {
			return env.UserClient(learner).GetCoursesIDProgram(t.Context(), c)
		}
		// status reads the program, refused unless want is 200, and
		// returns the first topic's status.
		status := func(want int) int64 {
			t.Helper()
			prog, err := program()
			if want != 200 {
				apitest.Refused(t, err, want)
				return -1
			}
			first := apitest.Must(prog, err)(t).Lessons[0].Topics[0].Progress
			if first == nil {
				t.Fatalf("no progress in the first topic: %+v", prog.Lessons[0].Topics[0])
			}
			return first.Status
		}
		status(403)
		assign(t, env, c, learner.ID, nil)
		if got := status(200); got != 0 {
			t.Fatalf("first read: status %v", got)
		}
		status(200) // served from the kept answer

		// Progress rows written, changed and removed outside learning.
		now := env.Clock.Now()
		exec(t, env, `INSERT INTO topic_progress (user_id, topic_id, course_id, status, seconds, updated_at)
			VALUES ($1, $2, $3, 1, 7, $4)`, learner.ID, ts[0][0], c, now)
		if got := status(200); got != 1 {
			t.Errorf("after a progress row was added: status %v, want 1", got)
		}
		exec(t, env, `UPDATE topic_progress SET status = 2 WHERE user_id = $1`, learner.ID)
		if got := status(200); got != 2 {
			t.Errorf("after a progress row changed: status %v, want 2", got)
		}
		exec(t, env, `DELETE FROM topic_progress WHERE user_id = $1`, learner.ID)
		if got := status(200); got != 0 {
			t.Errorf("after a progress row was removed: status %v, want 0", got)
		}
		exec(t, env, `INSERT INTO course_progress (user_id, course_id, started_at, updated_at) VALUES ($1, $2, $3, $3)`,
			learner.ID, c, now)
		if got := apitest.Must(program())(t).Progress; got == nil || got.Status != "started" {
			t.Errorf("after the course row was added: course progress %+v, want started", got)
		}

		// Access taken away and given back through assignments and groups.
		exec(t, env, `DELETE FROM course_users WHERE user_id = $1`, learner.ID)
		status(403)
		parent := addGroup(t, env, 0)
		child := addGroup(t, env, parent)
		exec(t, env, `INSERT INTO course_groups (course_id, group_id, created_at) VALUES ($1, $2, $3)`, c, parent, now)
		status(403)
		exec(t, env, `INSERT INTO user_group_members (group_id, user_id, created_at) VALUES ($1, $2, $3)`,
			child, learner.ID, now)
		status(200)
		exec(t, env, `UPDATE user_groups SET parent_id = NULL WHERE id = $1`, child)
		status(403)
		exec(t, env, `UPDATE user_groups SET parent_id = $1 WHERE id = $2`, parent, child)
		status(200)
		exec(t, env, `DELETE FROM user_group_members WHERE user_id = $1`, learner.ID)
		status(403)

		// An assignment that ends is forgotten when it ends, with no change
		// to any row.
		assign(t, env, c, learner.ID, at(now.Add(2*time.Hour)))
		status(200)
		advance(env, time.Hour, learner)
		status(200)
		advance(env, 90*time.Minute, learner)
		status(403)
	})
}
