package reports_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"testing"

	"github.com/lms-platform/lms/internal/apitest"
)

// seedCourse fills the tenant with a course of 20 lessons × 10 topics, 500
// learners assigned to it, each with progress in every topic (half of them
// complete): the size the gradebook must serve fast. Rows are inserted in
// one transaction, as the API would take minutes to make them.
func seedCourse(b *testing.B, env *apitest.Env) (int64, int64) {
	b.Helper()
	tutor := env.As("tutor").ID
	tenant, release := env.OpenTenant(env.Tenant)
	defer release()
	ctx := context.Background()
	tx, err := tenant.DB.BeginTx(ctx, nil)
	if err != nil {
		b.Fatal(err)
	}
	now := env.Clock.Now()
	one := func(query string, args ...any) int64 {
		var id int64
		if err := tx.QueryRowContext(ctx, query+" RETURNING id", args...).Scan(&id); err != nil {
			b.Fatalf("%s: %v", query, err)
		}
		return id
	}
	exec := func(query string, args ...any) {
		if _, err := tx.ExecContext(ctx, query, args...); err != nil {
			b.Fatalf("%s: %v", query, err)
		}
	}
	course := one(`INSERT INTO courses (title, status, created_at, updated_at) VALUES ('Big', 'published', $1, $1)`, now)
	exec(`INSERT INTO course_authors (course_id, user_id) VALUES ($1, $2)`, course, tutor)
	var topics []int64
	var first int64
	for l := range 20 {
		lesson := one(`INSERT INTO lessons (course_id, title, position, created_at, updated_at) VALUES ($1, $2, $3, $4, $4)`,
			course, "Lesson "+strconv.Itoa(l), l, now)
		for p := range 10 {
			topics = append(topics, one(`INSERT INTO topics (lesson_id, course_id, title, position, topicable_type, content,
				created_at, updated_at) VALUES ($1, $2, $3, $4, $5, '{"html":"<p>x</p>"}', $6, $6)`,
				lesson, course, fmt.Sprintf("Topic %d.%d", l, p), p, richText, now))
		}
	}
	for u := range 500 {
		user := one(`INSERT INTO users (email, first_name, last_name, created_at, updated_at) VALUES ($1, 'Learner', $2, $3, $3)`,
			fmt.Sprintf("learner%d@bench.test", u), strconv.Itoa(u), now)
		if first == 0 {
			first = user
		}
		exec(`INSERT INTO course_users (course_id, user_id, created_at) VALUES ($1, $2, $3)`, course, user, now)
		exec(`INSERT INTO course_progress (user_id, course_id, started_at, updated_at) VALUES ($1, $2, $3, $3)`, user, course, now)
		for i, topic := range topics {
			exec(`INSERT INTO topic_progress (user_id, topic_id, course_id, status, seconds, score_raw, score_max, updated_at)
				VALUES ($1, $2, $3, $4, $5, $6, 10, $7)`, user, topic, course, (i+u)%2, 30+i, float64(i%10), now)
		}
	}
	if err := tx.Commit(); err != nil {
		b.Fatal(err)
	}
	return course, first
}

func benchGet(b *testing.B, env *apitest.Env, path string) {
	token := env.As("tutor").Token
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		req, _ := http.NewRequest(http.MethodGet, env.HTTP.URL+path, nil)
		req.Host = env.Host
		req.Header.Set("Authorization", "Bearer "+token)
		res, err := env.HTTP.Client().Do(req)
		if err != nil {
			b.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if res.StatusCode != 200 {
			b.Fatalf("GET %s: %d", path, res.StatusCode)
		}
	}
}

// BenchmarkGradebook reads the gradebook of a 20 × 10 course with 500
// learners as its tutor, through the real HTTP server on SQLite: a page of
// 50 learners sorted by score with their 200 topics each, the summary, one
// learner's detail and the whole CSV export.
func BenchmarkGradebook(b *testing.B) {
	env := apitest.New(b, "sqlite", apitest.Options{})
	id, learner := seedCourse(b, env)
	course := "/api/admin/courses/" + strconv.FormatInt(id, 10) + "/progress"
	b.Run("page", func(b *testing.B) { benchGet(b, env, course+"?per_page=50&order_by=score&with_topics=true") })
	b.Run("summary", func(b *testing.B) { benchGet(b, env, course+"/summary") })
	b.Run("learner", func(b *testing.B) { benchGet(b, env, course+"/"+strconv.FormatInt(learner, 10)) })
	b.Run("export", func(b *testing.B) { benchGet(b, env, course+"/export") })
}
