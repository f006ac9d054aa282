package learning_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/lms-platform/lms/client"
	"github.com/lms-platform/lms/internal/apitest"
	"github.com/lms-platform/lms/internal/kinds/h5pcontent"
)

// The authoring routes belong to other packages, so tests build courses by
// inserting rows straight into the tenant database.

const richText = `Lms\TopicTypes\Models\TopicContent\RichText`

type courseRow struct {
	Title      string
	Status     string // default published
	Public     bool
	ActiveFrom *time.Time
	ActiveTo   *time.Time
	Hours      *int
}

type lessonRow struct {
	Parent     int64
	Inactive   bool
	ActiveFrom *time.Time
	ActiveTo   *time.Time
}

type topicRow struct {
	Inactive bool
	Preview  bool
	Type     string // default rich text; H5P topics hold content 42
}

func exec(t testing.TB, env *apitest.Env, query string, args ...any) {
	t.Helper()
	tenant, release := env.OpenTenant(env.Tenant)
	defer release()
	if _, err := tenant.DB.ExecContext(context.Background(), query, args...); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
}

func insertID(t testing.TB, env *apitest.Env, query string, args ...any) int64 {
	t.Helper()
	tenant, release := env.OpenTenant(env.Tenant)
	defer release()
	var id int64
	if err := tenant.DB.QueryRowContext(context.Background(), query+" RETURNING id", args...).Scan(&id); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return id
}

func count(t testing.TB, env *apitest.Env, query string, args ...any) int {
	t.Helper()
	tenant, release := env.OpenTenant(env.Tenant)
	defer release()
	var n int
	if err := tenant.DB.QueryRowContext(context.Background(), query, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return n
}

func addCourse(t testing.TB, env *apitest.Env, c courseRow) int64 {
	t.Helper()
	if c.Status == "" {
		c.Status = "published"
	}
	if c.Title == "" {
		c.Title = "Course"
	}
	now := env.Clock.Now()
	return insertID(t, env, `INSERT INTO courses (title, status, is_public, active_from, active_to, hours_to_complete,
		created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $7)`,
		c.Title, c.Status, c.Public, utc(c.ActiveFrom), utc(c.ActiveTo), c.Hours, now)
}

func addLesson(t testing.TB, env *apitest.Env, courseID int64, l lessonRow) int64 {
	t.Helper()
	var parent any
	if l.Parent != 0 {
		parent = l.Parent
	}
	now := env.Clock.Now()
	return insertID(t, env, `INSERT INTO lessons (course_id, parent_id, title, position, active, active_from, active_to,
		created_at, updated_at) VALUES ($1, $2, $3, (SELECT COUNT(*) FROM lessons WHERE course_id = $1), $4, $5, $6, $7, $7)`,
		courseID, parent, "Lesson", !l.Inactive, utc(l.ActiveFrom), utc(l.ActiveTo), now)
}

func addTopic(t testing.TB, env *apitest.Env, courseID, lessonID int64, tp topicRow) int64 {
	t.Helper()
	if tp.Type == "" {
		tp.Type = richText
	}
	value := `{"html":"<p>x</p>"}`
	if tp.Type == h5pcontent.Class {
		value = `{"content_id":"42","title":"Quiz","library":"H5P.TrueFalse 1.8"}`
	}
	now := env.Clock.Now()
	return insertID(t, env, `INSERT INTO topics (lesson_id, course_id, title, position, preview, active, topicable_type,
		content, created_at, updated_at)
		VALUES ($1, $2, $3, (SELECT COUNT(*) FROM topics WHERE lesson_id = $1), $4, $5, $6, $7, $8, $8)`,
		lessonID, courseID, "Topic", tp.Preview, !tp.Inactive, tp.Type, value, now)
}

// grid adds a course of lessons × topics, all active and open.
func grid(t testing.TB, env *apitest.Env, c courseRow, lessons, topics int) (int64, []int64, [][]int64) {
	t.Helper()
	id := addCourse(t, env, c)
	var lessonIDs []int64
	var topicIDs [][]int64
	for range lessons {
		l := addLesson(t, env, id, lessonRow{})
		lessonIDs = append(lessonIDs, l)
		var ts []int64
		for range topics {
			ts = append(ts, addTopic(t, env, id, l, topicRow{}))
		}
		topicIDs = append(topicIDs, ts)
	}
	return id, lessonIDs, topicIDs
}

func assign(t testing.TB, env *apitest.Env, courseID, userID int64, end *time.Time) {
	t.Helper()
	exec(t, env, `INSERT INTO course_users (course_id, user_id, end_date, created_at) VALUES ($1, $2, $3, $4)`,
		courseID, userID, utc(end), env.Clock.Now())
}

func addGroup(t testing.TB, env *apitest.Env, parent int64) int64 {
	t.Helper()
	var p any
	if parent != 0 {
		p = parent
	}
	return insertID(t, env, `INSERT INTO user_groups (name, parent_id, created_at, updated_at) VALUES ($1, $2, $3, $3)`,
		"Group", p, env.Clock.Now())
}

func utc(t *time.Time) any {
	if t == nil {
		return nil
	}
	return t.UTC()
}

func at(t time.Time) *time.Time { return &t }

func hours(n int) *int { return &n }

func id(n int64) string { return strconv.FormatInt(n, 10) }

// writes is the progress body that sets the topics to status.
func writes(status int64, topicIDs ...int64) client.WriteInputBody {
	out := client.WriteInputBody{Progress: []client.ProgressWrite{}}
	for _, tid := range topicIDs {
		out.Progress = append(out.Progress, client.ProgressWrite{TopicID: tid, Status: status})
	}
	return out
}

// write sends statuses of topics of a course as u.
func write(t testing.TB, env *apitest.Env, u *apitest.User, courseID, status int64, topicIDs ...int64) (*client.CourseProgress, error) {
	return env.UserClient(u).PatchCoursesProgressID(t.Context(), courseID, writes(status, topicIDs...))
}

// patch writes statuses of topics of a course as u and fails the test
// unless the write is taken.
func patch(t testing.TB, env *apitest.Env, u *apitest.User, courseID, status int64, topicIDs ...int64) *client.CourseProgress {
	t.Helper()
	return apitest.Must(write(t, env, u, courseID, status, topicIDs...))(t)
}

// advance moves the clock and logs the users in again, since their
// tokens expire.
func advance(env *apitest.Env, d time.Duration, users ...*apitest.User) {
	env.Clock.Advance(d)
	for _, u := range users {
		u.Token, _ = env.Login(env.Host, u.Email, u.Password)
	}
}

// eventsOf runs fn and returns the names of the events it recorded.
func eventsOf(env *apitest.Env, fn func()) []string {
	before := env.LastEventID()
	fn()
	return env.EventNames(before)
}
