package replicas_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lms-platform/lms/client"
	"github.com/lms-platform/lms/internal/apitest"
)

// pingLearners is how many learners ping at once in TestPingsSurviveKill:
// enough for batches of many pings to be in flight when the server dies.
const pingLearners = 32

// TestPingsSurviveKill sends pings from many learners at once to
// `lms serve` on PostgreSQL, where pings are committed in batches, kills
// the process with SIGKILL under that load, starts it again and checks
// that every acknowledged ping's time is stored: each learner's seconds
// on the topic are at least the seconds the last acknowledged ping
// answered, and still exactly the whole seconds between the learner's
// first and last stored pings (no second lost or counted twice).
func TestPingsSurviveKill(t *testing.T) {
	pg := os.Getenv("LMS_TEST_PG_URL")
	if pg == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("LMS_TEST_PG_URL is not set")
		}
		t.Skip("pings are committed in batches on PostgreSQL; LMS_TEST_PG_URL is not set")
	}
	c := newCluster(t, backends{pg: pg})
	var current atomic.Pointer[replica]
	current.Store(c.start(t, "first"))
	// The front sends every request to the replica running now.
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		to := current.Load().url
		(&httputil.ReverseProxy{Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(to)
			pr.Out.Host = pr.In.Host
		}, ErrorHandler: func(w http.ResponseWriter, _ *http.Request, _ error) {
			w.WriteHeader(http.StatusBadGateway) // the killed replica
		}}).ServeHTTP(w, r)
	}))
	t.Cleanup(front.Close)
	host := "pings.test"
	c.lms(t, "tenant", "add", "--host", host, "--admin-email", "admin@"+host, "--admin-password", "admin-password")
	env := &apitest.Env{T: t, HTTP: front, Host: host}
	course, topic, learners := pingSetUp(t, env)

	acked := make([]int64, len(learners)) // seconds of each learner's last 2xx ping
	var pings atomic.Int64
	var stop atomic.Bool
	var wg sync.WaitGroup
	for i, u := range learners {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() {
				res, err := u.c.PutCoursesProgressIDPing(context.Background(), topic)
				if err != nil {
					return // the server is gone
				}
				acked[i] = res.Seconds
				pings.Add(1)
			}
		}()
	}
	// Long enough for every learner's seconds to grow past the first.
	time.Sleep(2500 * time.Millisecond)
	current.Load().kill(t)
	stop.Store(true)
	wg.Wait()
	t.Logf("%d pings acknowledged before the kill", pings.Load())
	if pings.Load() < pingLearners {
		t.Fatalf("only %d pings acknowledged: the load did not run", pings.Load())
	}

	current.Store(c.start(t, "restarted"))
	grown := 0
	for i, u := range learners {
		got := apitest.Must(u.c.GetCoursesProgressID(t.Context(), course))(t)
		if len(got.Topics) != 1 {
			t.Fatalf("learner %d: %d topics in the progress", u.id, len(got.Topics))
		}
		if s := got.Topics[0].Seconds; s < acked[i] {
			t.Errorf("learner %d: %d seconds stored, but a ping answered %d before the kill", u.id, s, acked[i])
		}
		if acked[i] > 0 {
			grown++
		}
	}
	if grown == 0 {
		t.Error("no acknowledged ping counted a second: the check proved nothing")
	}
	_, db := tenantDB(t, c, host)
	inexact := count(t, db, `SELECT COUNT(*) FROM topic_progress WHERE topic_id = $1 AND
		seconds <> CAST(FLOOR(EXTRACT(EPOCH FROM last_ping_at)) AS BIGINT) - CAST(FLOOR(EXTRACT(EPOCH FROM started_at)) AS BIGINT)`,
		topic)
	if inexact > 0 {
		t.Errorf("%d learners' seconds are not the whole seconds between their first and last pings", inexact)
	}
}

// pingSetUp creates the learners, assigned to a course of one topic, and
// has each ping once, which starts the course (a ping of a started course
// goes to a batch).
func pingSetUp(t *testing.T, env *apitest.Env) (course, topic int64, learners []learner) {
	ctx := t.Context()
	admin := env.Client("", login(t, env, "admin@"+env.Host, "admin-password"))
	course = apitest.Must(admin.PostAdminCourses(ctx, client.CourseBody{Title: "Pinged", Status: client.Ptr("published")}))(t).ID
	lesson := apitest.Must(admin.PostAdminLessons(ctx, client.CreateLessonInputBody{CourseID: course, Title: "Only"}))(t).ID
	topic = apitest.Must(admin.PostAdminTopics(ctx, client.PostAdminTopicsBody{Lesson: lesson, Title: "Read this",
		Topicable: `Lms\TopicTypes\Models\TopicContent\RichText`, Markdown: client.Ptr("Read this.")}))(t).ID
	var grants []client.GrantBody
	for i := range pingLearners {
		email, password := fmt.Sprintf("pinger%d@%s", i, env.Host), "learner-password"
		u := apitest.Must(admin.PostAdminUsers(ctx, client.CreateUserInputBody{Email: email, Password: client.Ptr(password),
			FirstName: "Pinger", LastName: fmt.Sprint(i), EmailVerified: client.Ptr(true)}))(t)
		learners = append(learners, learner{id: u.ID, c: env.Client("", login(t, env, email, password))})
		grants = append(grants, client.GrantBody{ID: u.ID})
	}
	apitest.Must(admin.PostAdminCoursesIDAccess(ctx, course, client.AssignInputBody{Users: grants}))(t)
	for _, u := range learners {
		apitest.Must(u.c.PutCoursesProgressIDPing(ctx, topic))(t)
	}
	return course, topic, learners
}
