package learning_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/lms-platform/lms/client"
	"github.com/lms-platform/lms/internal/apitest"
	"github.com/lms-platform/lms/internal/apperr"
	"github.com/lms-platform/lms/internal/kinds/h5pcontent"
	"github.com/lms-platform/lms/internal/topics"
)

func TestProgressEvents(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		// Lesson A has topics a1, a2 and a child lesson B with b1; lesson C
		// has c1 and an inactive topic, which does not count.
		c := addCourse(t, env, courseRow{Public: true})
		a := addLesson(t, env, c, lessonRow{})
		a1 := addTopic(t, env, c, a, topicRow{})
		a2 := addTopic(t, env, c, a, topicRow{})
		b := addLesson(t, env, c, lessonRow{Parent: a})
		b1 := addTopic(t, env, c, b, topicRow{})
		lc := addLesson(t, env, c, lessonRow{})
		c1 := addTopic(t, env, c, lc, topicRow{})
		addTopic(t, env, c, lc, topicRow{Inactive: true})
		u := env.NewUser("student")

		steps := []struct {
			name   string
			status int64
			topics []int64
			events []string
		}{
			{"in progress starts the course", 2, []int64{a1}, []string{"CourseStarted"}},
			{"same write again changes nothing", 2, []int64{a1}, []string{}},
			{"complete a1", 1, []int64{a1}, []string{"TopicFinished"}},
			{"complete a1 again", 1, []int64{a1}, []string{}},
			{"a complete topic stays complete", 0, []int64{a1}, []string{}},
			{"a2 leaves A open: B is not finished", 1, []int64{a2}, []string{"TopicFinished"}},
			{"b1 finishes B, then A", 1, []int64{b1}, []string{"TopicFinished", "LessonFinished", "LessonFinished"}},
			{"c1 finishes C and the course", 1, []int64{c1}, []string{"TopicFinished", "LessonFinished", "CourseFinished"}},
			{"all again: nothing", 1, []int64{a1, a2, b1, c1}, []string{}},
		}
		for _, st := range steps {
			got := eventsOf(env, func() { patch(t, env, u, c, st.status, st.topics...) })
			if !slices.Equal(got, st.events) {
				t.Errorf("%s: events %v, want %v", st.name, got, st.events)
			}
		}
		p := apitest.Must(env.UserClient(u).GetCoursesProgressID(t.Context(), c))(t)
		if p.Status != "finished" || p.TotalTopics != 4 || p.FinishedTopics != 4 || p.Percent != 100 || len(p.Topics) != 4 ||
			p.Topics[0].TopicID != a1 || p.Topics[0].Status != 1 || p.Topics[2].TopicID != b1 {
			t.Errorf("progress %+v", p)
		}
		if p.FinishedAt == nil || p.StartedAt == nil {
			t.Errorf("dates missing: %+v", p)
		}
		// The payloads name the learner and the lesson.
		tenant, release := env.OpenTenant(env.Tenant)
		defer release()
		var user int64
		var payload string
		if err := tenant.DB.QueryRowContext(context.Background(), `SELECT user_id, payload FROM events
			WHERE name = 'LessonFinished' ORDER BY id LIMIT 1`).Scan(&user, &payload); err != nil {
			t.Fatal(err)
		}
		var got map[string]any
		json.Unmarshal([]byte(payload), &got)
		if user != u.ID || len(got) != 2 || !same(got["course_id"], c) || !same(got["lesson_id"], b) {
			t.Errorf("LessonFinished of user %d with %s", user, payload)
		}
	})
}

func TestProgressInvalidWrites(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		c, _, topics := grid(t, env, courseRow{Public: true}, 1, 2)
		other, _, otherTopics := grid(t, env, courseRow{Public: true}, 1, 1)
		l := addLesson(t, env, c, lessonRow{})
		inactive := addTopic(t, env, c, l, topicRow{Inactive: true})
		private, _, privateTopics := grid(t, env, courseRow{}, 1, 1)
		u := env.NewUser("student")
		learner := env.UserClient(u)
		refused := func(t *testing.T, send func() error) {
			t.Helper()
			if got := eventsOf(env, func() { apitest.Refused(t, send(), 422) }); len(got) != 0 {
				t.Errorf("events %v", got)
			}
		}
		for name, body := range map[string]client.WriteInputBody{
			"topic of another course": {Progress: []client.ProgressWrite{{TopicID: topics[0][0], Status: 1}, {TopicID: otherTopics[0][0], Status: 1}}},
			"inactive topic":          writes(1, inactive),
			"unknown topic":           writes(1, 999999),
			"invalid status":          writes(3, topics[0][0]),
			"empty list":              writes(1),
		} {
			t.Run(name, func(t *testing.T) {
				refused(t, func() error {
					_, err := learner.PatchCoursesProgressID(t.Context(), c, body)
					return err
				})
			})
		}
		// Raw: bodies the client's types cannot send.
		path := "/api/courses/progress/" + id(c)
		for name, body := range map[string]any{
			"missing status":  map[string]any{"progress": []any{map[string]any{"topic_id": topics[0][0]}}},
			"no progress key": map[string]any{},
		} {
			t.Run(name, func(t *testing.T) {
				if got := eventsOf(env, func() { env.Call(t, 422, "PATCH", path, u.Token, body) }); len(got) != 0 {
					t.Errorf("events %v", got)
				}
			})
		}
		if n := count(t, env, `SELECT COUNT(*) FROM topic_progress`) + count(t, env, `SELECT COUNT(*) FROM course_progress`); n != 0 {
			t.Errorf("%d progress rows stored by invalid writes", n)
		}
		ctx := t.Context()
		_, err := learner.PatchCoursesProgressID(ctx, 999999, writes(1, topics[0][0]))
		apitest.Refused(t, err, 404)
		_, err = learner.PatchCoursesProgressID(ctx, private, writes(1, privateTopics[0][0]))
		apitest.Refused(t, err, 403)
		_, err = env.ClientAs("anonymous").PatchCoursesProgressID(ctx, other, writes(1, otherTopics[0][0]))
		apitest.Refused(t, err, 401)
		_, err = env.Client("", env.As("other-admin").Token).PatchCoursesProgressID(ctx, c, writes(1, topics[0][0]))
		apitest.Refused(t, err, 401)
	})
}

func TestDeadline(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		now := env.Clock.Now()
		c, _, topics := grid(t, env, courseRow{Public: true, Hours: hours(2)}, 1, 2)
		windowed, _, wTopics := grid(t, env, courseRow{Public: true, Hours: hours(100), ActiveTo: at(now.Add(time.Hour))}, 1, 1)
		u := env.NewUser("student")
		res := patch(t, env, u, c, 1, topics[0][0])
		if got, want := res.Deadline, now.Add(2*time.Hour); !sameTime(got, want) {
			t.Errorf("deadline %v, want %s", got, want)
		}
		res = patch(t, env, u, windowed, 2, wTopics[0][0])
		if got := res.Deadline; !sameTime(got, now.Add(time.Hour)) {
			t.Errorf("deadline %v, want the end of the window", got)
		}
		advance(env, 2*time.Hour+time.Second, u)
		_, err := write(t, env, u, c, 1, topics[0][1])
		if e := apitest.Refused(t, err, 403); e.Message != "The deadline for this course was missed." {
			t.Errorf("message %q", e.Message)
		}
		_, err = env.UserClient(u).PutCoursesProgressIDPing(t.Context(), topics[0][1])
		if e := apitest.Refused(t, err, 403); e.Message != "The deadline for this course was missed." {
			t.Errorf("ping message %q", e.Message)
		}
		_, err = write(t, env, u, windowed, 1, wTopics[0][0])
		apitest.Refused(t, err, 403)
		if n := count(t, env, `SELECT COUNT(*) FROM topic_progress WHERE status = 1`); n != 1 {
			t.Errorf("%d complete topics after refused writes, want 1", n)
		}
		// Reading stays possible.
		apitest.Must(env.UserClient(u).GetCoursesProgressID(t.Context(), c))(t)
	})
}

// sameTime compares an answer's time with a Go time to the microsecond,
// the precision PostgreSQL keeps.
func sameTime(got *time.Time, want time.Time) bool {
	return got != nil && got.Sub(want).Abs() <= time.Microsecond
}

func TestProgressLists(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		u := env.NewUser("student")
		planned, _, _ := grid(t, env, courseRow{Title: "Planned"}, 1, 2)
		started, _, st := grid(t, env, courseRow{Title: "Started", Public: true}, 2, 2)
		finished, _, ft := grid(t, env, courseRow{Title: "Finished", Public: true}, 1, 1)
		notMine, _, _ := grid(t, env, courseRow{Title: "Not mine"}, 1, 1)
		draft, _, _ := grid(t, env, courseRow{Title: "Draft", Status: "draft"}, 1, 1)
		assign(t, env, planned, u.ID, nil)
		assign(t, env, draft, u.ID, nil)
		patch(t, env, u, started, 1, st[0][0])
		patch(t, env, u, finished, 1, ft[0][0])
		_ = notMine

		ctx, learner := t.Context(), env.UserClient(u)
		list := apitest.Must(learner.GetCoursesProgress(ctx, client.GetCoursesProgressParams{}))(t)
		if ids := courseIDs(list); !slices.Equal(ids, []int64{planned, started, finished}) {
			t.Fatalf("courses %v, want %v", ids, []int64{planned, started, finished})
		}
		if p := list[0]; p.Status != "planned" || p.TotalTopics != 2 || p.Percent != 0 || p.StartedAt != nil {
			t.Errorf("planned course: %+v", p)
		}
		if p := list[1]; p.Status != "started" || p.TotalTopics != 4 || p.FinishedTopics != 1 || p.Percent != 25 ||
			p.Course.Title != "Started" {
			t.Errorf("started course: %+v", p)
		}
		if p := list[2]; p.Status != "finished" || p.Percent != 100 {
			t.Errorf("finished course: %+v", p)
		}
		for _, c := range []struct {
			query  string
			params client.GetCoursesProgressPaginatedParams
			want   []int64
		}{
			{"", client.GetCoursesProgressPaginatedParams{}, []int64{planned, started, finished}},
			{"?status=planned", client.GetCoursesProgressPaginatedParams{Status: client.Ptr("planned")}, []int64{planned}},
			{"?status=started", client.GetCoursesProgressPaginatedParams{Status: client.Ptr("started")}, []int64{started}},
			{"?status=finished", client.GetCoursesProgressPaginatedParams{Status: client.Ptr("finished")}, []int64{finished}},
			{"?order_by=title", client.GetCoursesProgressPaginatedParams{OrderBy: client.Ptr("title")}, []int64{finished, planned, started}},
			{"?order_by=title&order=desc", client.GetCoursesProgressPaginatedParams{OrderBy: client.Ptr("title"), Order: client.Ptr("desc")},
				[]int64{started, planned, finished}},
			{"?order_by=percent&order=desc", client.GetCoursesProgressPaginatedParams{OrderBy: client.Ptr("percent"), Order: client.Ptr("desc")},
				[]int64{finished, started, planned}},
			{"?per_page=2&page=2", client.GetCoursesProgressPaginatedParams{PerPage: client.Ptr[int64](2), Page: client.Ptr[int64](2)},
				[]int64{finished}},
		} {
			page := apitest.Must(learner.GetCoursesProgressPaginated(ctx, c.params))(t)
			if ids := courseIDs(page.Items); !slices.Equal(ids, c.want) {
				t.Errorf("%s: courses %v, want %v", c.query, ids, c.want)
			}
			if page.Meta.Total != len(c.want) && c.query != "?per_page=2&page=2" {
				t.Errorf("%s: meta.total %v", c.query, page.Meta.Total)
			}
		}
		_, err := learner.GetCoursesProgressPaginated(ctx, client.GetCoursesProgressPaginatedParams{Status: client.Ptr("lost")})
		apitest.Refused(t, err, 422)
		_, err = learner.GetCoursesProgressPaginated(ctx, client.GetCoursesProgressPaginatedParams{OrderBy: client.Ptr("password")})
		apitest.Refused(t, err, 422)
		_, err = env.ClientAs("anonymous").GetCoursesProgress(ctx, client.GetCoursesProgressParams{})
		apitest.Refused(t, err, 401)

		// One course's progress: the learner's own courses and courses
		// they may learn; others are refused.
		apitest.Must(learner.GetCoursesProgressID(ctx, planned))(t)
		_, err = learner.GetCoursesProgressID(ctx, notMine)
		apitest.Refused(t, err, 403)
		_, err = learner.GetCoursesProgressID(ctx, 999999)
		apitest.Refused(t, err, 404)
		// Another learner's progress is their own.
		list = apitest.Must(env.UserClient(env.NewUser("student")).GetCoursesProgress(ctx, client.GetCoursesProgressParams{}))(t)
		if ids := courseIDs(list); len(ids) != 0 {
			t.Errorf("a new learner lists %v", ids)
		}
	})
}

func courseIDs(items []client.ProgressItem) []int64 {
	out := []int64{}
	for _, it := range items {
		out = append(out, it.Course.ID)
	}
	return out
}

func TestPingAddsUp(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		c, _, topics := grid(t, env, courseRow{Public: true}, 1, 1)
		ctx, u, topic := t.Context(), env.NewUser("student"), topics[0][0]
		learner := env.UserClient(u)
		const parallel, rounds = 50, 4
		var events []string
		for round := range rounds {
			if round > 0 {
				env.Clock.Advance(30 * time.Second)
			}
			events = append(events, eventsOf(env, func() {
				var wg sync.WaitGroup
				errs := make(chan string, parallel)
				for range parallel {
					wg.Add(1)
					go func() {
						defer wg.Done()
						if _, err := learner.PutCoursesProgressIDPing(ctx, topic); err != nil {
							errs <- err.Error()
						}
					}()
				}
				wg.Wait()
				close(errs)
				for e := range errs {
					t.Errorf("ping failed: %s", e)
				}
			})...)
		}
		want := (rounds - 1) * 30
		if n := count(t, env, `SELECT seconds FROM topic_progress WHERE user_id = $1`, u.ID); n != want {
			t.Errorf("seconds = %d after %d rounds of %d parallel pings, want %d", n, rounds, parallel, want)
		}
		if !slices.Equal(events, []string{"CourseStarted"}) {
			t.Errorf("events %v, want one CourseStarted", events)
		}
		// After a break only one minute (two of the player's intervals) counts.
		advance(env, 2*time.Hour, u)
		learner = env.UserClient(u)
		apitest.Must(learner.PutCoursesProgressIDPing(ctx, topic))(t)
		env.Clock.Advance(10 * time.Second)
		res := apitest.Must(learner.PutCoursesProgressIDPing(ctx, topic))(t)
		if res.Seconds != int64(want+60+10) || res.Status != 2 {
			t.Errorf("after a break: %+v", res)
		}
		// A complete topic stays complete.
		apitest.Must(learner.PatchCoursesProgressID(ctx, c, writes(1, topic)))(t)
		if res = apitest.Must(learner.PutCoursesProgressIDPing(ctx, topic))(t); res.Status != 1 {
			t.Errorf("ping reopened a complete topic: %+v", res)
		}
		_, err := learner.PutCoursesProgressIDPing(ctx, 999999)
		apitest.Refused(t, err, 404)
		_, err = env.ClientAs("anonymous").PutCoursesProgressIDPing(ctx, topic)
		apitest.Refused(t, err, 401)
	})
}

// A learner's time is counted once whatever they ping: three topics (two
// of them in another course) pinged every 30 seconds add up to the wall
// time, not three times it.
func TestPingCountsWallTimeOnce(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		_, _, first := grid(t, env, courseRow{Public: true}, 1, 1)
		_, _, other := grid(t, env, courseRow{Public: true}, 1, 2)
		u := env.NewUser("student")
		learner := env.UserClient(u)
		topics := []int64{first[0][0], other[0][0], other[0][1]}
		const rounds = 5
		for round := range rounds {
			if round > 0 {
				env.Clock.Advance(30 * time.Second)
			}
			for _, topic := range topics {
				apitest.Must(learner.PutCoursesProgressIDPing(t.Context(), topic))(t)
			}
		}
		want := (rounds - 1) * 30
		if n := count(t, env, `SELECT SUM(seconds) FROM topic_progress WHERE user_id = $1`, u.ID); n != want {
			t.Errorf("%d seconds on three topics after %d s of wall time, want %d", n, want, want)
		}
	})
}

func TestParallelFinishEmitsOnce(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		ctx := t.Context()
		c, _, topics := grid(t, env, courseRow{Public: true}, 2, 2)
		all := append(append([]int64{}, topics[0]...), topics[1]...)
		for range 3 {
			u := env.NewUser("student")
			got := eventsOf(env, func() {
				var wg sync.WaitGroup
				for _, half := range [][]int64{all, {all[3], all[2], all[1], all[0]}} {
					wg.Add(1)
					go func() {
						defer wg.Done()
						if _, err := env.UserClient(u).PatchCoursesProgressID(ctx, c, writes(1, half...)); err != nil {
							t.Errorf("patch: %v", err)
						}
					}()
				}
				wg.Wait()
			})
			counts := map[string]int{}
			for _, name := range got {
				counts[name]++
			}
			want := map[string]int{"CourseStarted": 1, "TopicFinished": 4, "LessonFinished": 2, "CourseFinished": 1}
			for name, n := range want {
				if counts[name] != n {
					t.Errorf("%s emitted %d times, want %d (all: %v)", name, counts[name], n, got)
				}
			}
		}
		// Two PATCHes of one learner finishing disjoint halves at once:
		// each completes one lesson; whichever commits second finishes
		// the course.
		u := env.NewUser("student")
		got := eventsOf(env, func() {
			var wg sync.WaitGroup
			for _, half := range [][]int64{topics[0], topics[1]} {
				wg.Add(1)
				go func() {
					defer wg.Done()
					env.UserClient(u).PatchCoursesProgressID(ctx, c, writes(1, half...))
				}()
			}
			wg.Wait()
		})
		if n := countOf(got, "CourseFinished"); n != 1 {
			t.Errorf("disjoint halves: CourseFinished %d times (%v)", n, got)
		}
	})
}

func countOf(names []string, name string) int {
	n := 0
	for _, v := range names {
		if v == name {
			n++
		}
	}
	return n
}

func TestCourseChanged(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		c, lessons, topics := grid(t, env, courseRow{Public: true}, 1, 1)
		u := env.NewUser("student")
		patch(t, env, u, c, 1, topics[0][0])
		tenant, release := env.OpenTenant(env.Tenant)
		defer release()
		changed := func() []string {
			return eventsOf(env, func() {
				if err := env.Server.Learning.CourseChanged(context.Background(), tenant, c); err != nil {
					t.Fatal(err)
				}
			})
		}
		if got := changed(); len(got) != 0 {
			t.Errorf("no change emitted %v", got)
		}
		added := addTopic(t, env, c, lessons[0], topicRow{})
		changed()
		if p := apitest.Must(env.UserClient(u).GetCoursesProgressID(t.Context(), c))(t); p.Status != "started" || p.FinishedAt != nil {
			t.Errorf("after an active topic was added: %+v", p)
		}
		got := eventsOf(env, func() { patch(t, env, u, c, 1, added) })
		if !slices.Equal(got, []string{"TopicFinished", "LessonFinished", "CourseFinished"}) {
			t.Errorf("finishing again: %v", got)
		}
		// Hiding the only unfinished topic finishes the course.
		more := addTopic(t, env, c, lessons[0], topicRow{})
		changed()
		exec(t, env, `UPDATE topics SET active = $1 WHERE id = $2`, false, more)
		if got := changed(); !slices.Equal(got, []string{"CourseFinished"}) {
			t.Errorf("hiding the open topic: %v", got)
		}
	})
}

func TestCompleteTopic(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		c, _, topics := grid(t, env, courseRow{Public: true}, 1, 2)
		u := env.NewUser("student")
		tenant, release := env.OpenTenant(env.Tenant)
		defer release()
		ctx := context.Background()
		complete := func(topic int64) []string {
			return eventsOf(env, func() {
				if err := env.Server.Learning.CompleteTopic(ctx, tenant, u.ID, topic); err != nil {
					t.Fatal(err)
				}
			})
		}
		if got := complete(topics[0][0]); !slices.Equal(got, []string{"CourseStarted", "TopicFinished"}) {
			t.Errorf("first: %v", got)
		}
		if got := complete(topics[0][0]); len(got) != 0 {
			t.Errorf("again: %v", got)
		}
		if got := complete(topics[0][1]); !slices.Equal(got, []string{"TopicFinished", "LessonFinished", "CourseFinished"}) {
			t.Errorf("last: %v", got)
		}
		if err := env.Server.Learning.CompleteTopic(ctx, tenant, u.ID, 999999); err == nil {
			t.Error("unknown topic completed")
		}
		_ = c
	})
}

// TestCompleteTopicScored: a topic keeps the best score it was given.
// The completion's TopicFinished carries it; a better score later is
// stored and emits TopicScored; a lower one, or one that is not valid,
// changes nothing, and a completion without a valid score carries none.
func TestCompleteTopicScored(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		c, _, ids := grid(t, env, courseRow{Public: true}, 1, 3)
		u := env.NewUser("student")
		tenant, release := env.OpenTenant(env.Tenant)
		defer release()
		ctx := context.Background()
		complete := func(topic int64, score *topics.TopicScore) []string {
			t.Helper()
			return eventsOf(env, func() {
				if err := env.Server.Learning.CompleteTopicScored(ctx, tenant, u.ID, topic, score); err != nil {
					t.Fatal(err)
				}
			})
		}
		// kept is the topic's stored score, "none" without one.
		kept := func(topic int64) string {
			t.Helper()
			var raw, outOf sql.NullFloat64
			if err := tenant.DB.QueryRowContext(ctx, `SELECT score_raw, score_max FROM topic_progress WHERE user_id = $1 AND topic_id = $2`,
				u.ID, topic).Scan(&raw, &outOf); err != nil {
				t.Fatal(err)
			}
			if !raw.Valid || !outOf.Valid {
				return "none"
			}
			return fmt.Sprintf("%v/%v", raw.Float64, outOf.Float64)
		}
		// lastScore is the score in the payload of the latest event of a
		// name, "none" without one.
		lastScore := func(name string) string {
			t.Helper()
			var payload string
			if err := tenant.DB.QueryRowContext(ctx, `SELECT payload FROM events WHERE name = $1 AND user_id = $2 ORDER BY id DESC LIMIT 1`,
				name, u.ID).Scan(&payload); err != nil {
				t.Fatal(err)
			}
			var p struct{ Score *topics.TopicScore }
			if err := json.Unmarshal([]byte(payload), &p); err != nil || p.Score == nil {
				return "none"
			}
			return fmt.Sprintf("%v/%v", p.Score.Raw, p.Score.Max)
		}
		first := ids[0][0]
		if got := complete(first, &topics.TopicScore{Raw: 3, Max: 4}); !slices.Equal(got, []string{"CourseStarted", "TopicFinished"}) ||
			kept(first) != "3/4" || lastScore("TopicFinished") != "3/4" {
			t.Fatalf("first completion: %v, kept %s, sent %s", got, kept(first), lastScore("TopicFinished"))
		}
		for _, lower := range []*topics.TopicScore{{Raw: 50, Max: 100}, {Raw: 5, Max: 4}, {Raw: 1, Max: 0}, nil} {
			if got := complete(first, lower); len(got) != 0 || kept(first) != "3/4" {
				t.Fatalf("score %v: %v, kept %s", lower, got, kept(first))
			}
		}
		if got := complete(first, topics.Scaled(0.9)); !slices.Equal(got, []string{"TopicScored"}) ||
			kept(first) != "90/100" || lastScore("TopicScored") != "90/100" {
			t.Fatalf("better score: %v, kept %s, sent %s", got, kept(first), lastScore("TopicScored"))
		}
		if got := complete(ids[0][1], &topics.TopicScore{Raw: 5, Max: 4}); !slices.Equal(got, []string{"TopicFinished"}) ||
			kept(ids[0][1]) != "none" || lastScore("TopicFinished") != "none" {
			t.Fatalf("invalid score: %v, kept %s, sent %s", got, kept(ids[0][1]), lastScore("TopicFinished"))
		}
		if got := complete(ids[0][2], nil); !slices.Equal(got, []string{"TopicFinished", "LessonFinished", "CourseFinished"}) ||
			kept(ids[0][2]) != "none" || lastScore("TopicFinished") != "none" {
			t.Fatalf("no score: %v, kept %s", got, kept(ids[0][2]))
		}
		// The learner's progress shows the kept score.
		p := apitest.Must(env.UserClient(u).GetCoursesProgressID(ctx, c))(t)
		if len(p.Topics) != 3 || p.Topics[0].Score == nil || p.Topics[0].Score.Raw != 90 || p.Topics[0].Score.Max != 100 ||
			p.Topics[1].Score != nil {
			t.Fatalf("progress: %+v", p)
		}
	})
}

// TestOtherTenantToken sends every learner route a token of another
// tenant: routes that need a user refuse it, the program treats the caller
// as anonymous.
func TestOtherTenantToken(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		c, _, topics := grid(t, env, courseRow{}, 1, 1)
		ctx, foreign, topic := t.Context(), env.Client("", env.As("other-admin").Token), topics[0][0]
		for _, send := range []func() error{
			func() error { _, err := foreign.GetCoursesProgress(ctx, client.GetCoursesProgressParams{}); return err },
			func() error {
				_, err := foreign.GetCoursesProgressPaginated(ctx, client.GetCoursesProgressPaginatedParams{})
				return err
			},
			func() error { _, err := foreign.GetCoursesProgressID(ctx, c); return err },
			func() error { _, err := foreign.PatchCoursesProgressID(ctx, c, writes(1, topics[0]...)); return err },
			func() error { _, err := foreign.PutCoursesProgressIDPing(ctx, topic); return err },
			func() error {
				_, err := foreign.PostCoursesProgressIDH5P(ctx, topic, map[string]any{"verb": map[string]any{"id": "x/completed"}})
				return err
			},
		} {
			apitest.Refused(t, send(), 401)
		}
		// The private course's program is refused to the anonymous caller
		// the foreign token stands for.
		_, err := foreign.GetCoursesIDProgram(ctx, c)
		apitest.Refused(t, err, 403)
		if n := count(t, env, `SELECT COUNT(*) FROM topic_progress`) + count(t, env, `SELECT COUNT(*) FROM topic_h5p_statements`); n != 0 {
			t.Errorf("%d rows written with a foreign token", n)
		}
	})
}

// TestWritesToHiddenTopics checks that topics learners do not see take no
// progress: inactive topics and topics of inactive lessons.
func TestWritesToHiddenTopics(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		c := addCourse(t, env, courseRow{Public: true})
		l := addLesson(t, env, c, lessonRow{})
		inactive := addTopic(t, env, c, l, topicRow{Inactive: true})
		hidden := addLesson(t, env, c, lessonRow{Inactive: true})
		inHidden := addTopic(t, env, c, hidden, topicRow{})
		ctx, learner := t.Context(), env.UserClient(env.NewUser("student"))
		for _, topic := range []int64{inactive, inHidden} {
			_, err := learner.PutCoursesProgressIDPing(ctx, topic)
			apitest.Refused(t, err, 404)
			_, err = learner.PostCoursesProgressIDH5P(ctx, topic, statement("completed", false))
			apitest.Refused(t, err, 404)
			_, err = learner.PatchCoursesProgressID(ctx, c, writes(1, topic))
			apitest.Refused(t, err, 422)
		}
		if n := count(t, env, `SELECT COUNT(*) FROM topic_progress`) + count(t, env, `SELECT COUNT(*) FROM course_progress`); n != 0 {
			t.Errorf("%d progress rows for hidden topics", n)
		}
	})
}

// TestLessonWindows checks that progress is recorded in a lesson's topics
// only inside the lesson's window (and its parent's), whoever writes it:
// the program shows them without content outside it.
func TestLessonWindows(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		ctx := context.Background()
		now := env.Clock.Now()
		c := addCourse(t, env, courseRow{Public: true})
		open := addLesson(t, env, c, lessonRow{})
		free := addTopic(t, env, c, open, topicRow{})
		windowed := addLesson(t, env, c, lessonRow{ActiveFrom: at(now.Add(time.Hour)), ActiveTo: at(now.Add(2 * time.Hour))})
		inWindow := addTopic(t, env, c, windowed, topicRow{})
		nested := addLesson(t, env, c, lessonRow{Parent: windowed})
		inNested := addTopic(t, env, c, nested, topicRow{Type: h5pcontent.Class})
		learner, admin := env.NewUser("student"), env.As("admin")
		tenant, release := env.OpenTenant(env.Tenant)
		defer release()
		const closed = "This lesson is not open."

		refused := func(when string) {
			t.Helper()
			stored := count(t, env, `SELECT COUNT(*) FROM topic_progress`) + count(t, env, `SELECT COUNT(*) FROM topic_h5p_statements`)
			got := eventsOf(env, func() {
				for _, u := range []*apitest.User{learner, admin} {
					api := env.UserClient(u)
					for _, topic := range []int64{inWindow, inNested} {
						_, err := api.PutCoursesProgressIDPing(ctx, topic)
						if e := apitest.Refused(t, err, 403); e.Message != closed {
							t.Errorf("%s: ping message %q", when, e.Message)
						}
						_, err = api.PostCoursesProgressIDH5P(ctx, topic, statement("completed", false))
						if e := apitest.Refused(t, err, 403); e.Message != closed {
							t.Errorf("%s: h5p message %q", when, e.Message)
						}
						// The whole write is refused, the open topic's status too.
						_, err = api.PatchCoursesProgressID(ctx, c, writes(1, free, topic))
						errs := apitest.Refused(t, err, 422).Errors
						if msgs := errs["progress.1.topic_id"]; len(errs) != 1 || len(msgs) != 1 || msgs[0] != closed {
							t.Errorf("%s: PATCH errors %v", when, errs)
						}
						err = env.Server.Learning.CompleteTopic(ctx, tenant, u.ID, topic)
						if e := apperr.As(err); e == nil || e.Kind != apperr.Forbidden || e.Message != closed {
							t.Errorf("%s: CompleteTopic: %v", when, err)
						}
					}
				}
			})
			if len(got) != 0 {
				t.Errorf("%s: refused writes emitted %v", when, got)
			}
			if n := count(t, env, `SELECT COUNT(*) FROM topic_progress`) + count(t, env, `SELECT COUNT(*) FROM topic_h5p_statements`); n != stored {
				t.Errorf("%s: refused writes stored %d rows", when, n-stored)
			}
		}

		refused("before the window")
		advance(env, 90*time.Minute, learner, admin)
		for _, u := range []*apitest.User{learner, admin} {
			api := env.UserClient(u)
			apitest.Must(api.PutCoursesProgressIDPing(ctx, inWindow))(t)
			apitest.Must(api.PostCoursesProgressIDH5P(ctx, inNested, statement("completed", false)))(t)
			patch(t, env, u, c, 2, free, inWindow)
			if err := env.Server.Learning.CompleteTopic(ctx, tenant, u.ID, inNested); err != nil {
				t.Errorf("CompleteTopic inside the window: %v", err)
			}
		}
		advance(env, time.Hour, learner, admin)
		refused("after the window")
		// The open lesson still takes progress.
		patch(t, env, learner, c, 1, free)
	})
}
