package learning_test

import (
	"testing"
	"time"

	"github.com/lms-platform/lms/internal/apitest"
)

// TestPingChecksFollowChanges pings a topic again after each change that
// the kept topic course or the kept assignment of a ping depends on, each
// made in SQL as an operator or another package would, so that only the
// database's counters can tell the memos: every ping must follow at once.
func TestPingChecksFollowChanges(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		c, _, ts := grid(t, env, courseRow{}, 1, 2)
		other, otherLessons, _ := grid(t, env, courseRow{}, 1, 1)
		learner := env.NewUser("student")
		topic := ts[0][0]
		ping := func(want int) {
			t.Helper()
			// A new client each time: advance signs the learner in again.
			_, err := env.UserClient(learner).PutCoursesProgressIDPing(t.Context(), topic)
			if want == 200 {
				apitest.OK(t, err)
				return
			}
			apitest.Refused(t, err, want)
		}
		ping(403)
		assign(t, env, c, learner.ID, nil)
		ping(200)
		ping(200) // the memos answer

		// The topic moves to a course the learner is not assigned to, and
		// its place is only known to the database.
		exec(t, env, `UPDATE topics SET course_id = $1, lesson_id = $2 WHERE id = $3`, other, otherLessons[0], topic)
		ping(403)
		assign(t, env, other, learner.ID, nil)
		ping(200)
		if n := count(t, env, `SELECT COUNT(*) FROM course_progress WHERE user_id = $1 AND course_id = $2`,
			learner.ID, other); n != 1 {
			t.Errorf("the moved topic's ping started %d rows of its new course, want 1", n)
		}
		exec(t, env, `UPDATE topics SET course_id = $1, lesson_id = (SELECT lesson_id FROM topics WHERE id = $2)
			WHERE id = $3`, c, ts[0][1], topic)
		ping(200)

		// Access taken away and given back through assignments and groups.
		exec(t, env, `DELETE FROM course_users WHERE user_id = $1 AND course_id = $2`, learner.ID, c)
		ping(403)
		group := addGroup(t, env, 0)
		now := env.Clock.Now()
		exec(t, env, `INSERT INTO course_groups (course_id, group_id, created_at) VALUES ($1, $2, $3)`, c, group, now)
		ping(403)
		exec(t, env, `INSERT INTO user_group_members (group_id, user_id, created_at) VALUES ($1, $2, $3)`,
			group, learner.ID, now)
		ping(200)
		exec(t, env, `DELETE FROM user_group_members WHERE user_id = $1`, learner.ID)
		ping(403)

		// The course closes, the topic is hidden, then goes.
		assign(t, env, c, learner.ID, nil)
		ping(200)
		exec(t, env, `UPDATE courses SET status = 'draft' WHERE id = $1`, c)
		ping(403)
		exec(t, env, `UPDATE courses SET status = 'published' WHERE id = $1`, c)
		ping(200)
		exec(t, env, `UPDATE topics SET active = $1 WHERE id = $2`, false, topic)
		ping(404)
		exec(t, env, `UPDATE topics SET active = $1 WHERE id = $2`, true, topic)
		ping(200)
		exec(t, env, `DELETE FROM topics WHERE id = $1`, topic)
		ping(404)

		// An assignment that ends is forgotten when it ends, with no change
		// to any row.
		topic = ts[0][1]
		exec(t, env, `DELETE FROM course_users WHERE user_id = $1 AND course_id = $2`, learner.ID, c)
		assign(t, env, c, learner.ID, at(now.Add(2*time.Hour)))
		ping(200)
		advance(env, time.Hour, learner)
		ping(200)
		advance(env, 90*time.Minute, learner)
		ping(403)
	})
}
