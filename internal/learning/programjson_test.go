package learning_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/lms-platform/lms/internal/access"
	"github.com/lms-platform/lms/internal/apitest"
	"github.com/lms-platform/lms/internal/httpx"
	"github.com/lms-platform/lms/internal/learning"
)

// TestProgramJSON holds the spliced encoding of ProgramJSON equal to
// encoding the envelope of Program.
func TestProgramJSON(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		now := env.Clock.Now()
		c := addCourse(t, env, courseRow{Public: true, Hours: hours(10)})
		a := addLesson(t, env, c, lessonRow{})
		a1 := addTopic(t, env, c, a, topicRow{Preview: true})
		addTopic(t, env, c, a, topicRow{Type: `Some\Unknown\Kind`})
		b := addLesson(t, env, c, lessonRow{Parent: a, ActiveFrom: at(now.Add(time.Hour))})
		addTopic(t, env, c, b, topicRow{})
		addLesson(t, env, c, lessonRow{}) // empty
		tenant, release := env.OpenTenant(env.Tenant)
		defer release()
		u := env.NewUser("student")
		patch(t, env, u, c, 1, a1)
		learner := &access.Principal{UserID: u.ID, Roles: []string{"student"}, Permissions: map[access.Permission]bool{}}
		ctx := context.Background()
		for name, p := range map[string]*access.Principal{"anonymous": nil, "learner": learner} {
			for round := range 2 { // filling the cache, then from it
				prog, err := env.Server.Learning.Program(ctx, tenant, tenant.DB, p, c)
				if err != nil {
					t.Fatal(err)
				}
				want, _ := json.Marshal(httpx.Envelope[learning.LearnerProgram]{Success: true, Data: prog})
				body, err := env.Server.Learning.ProgramJSON(ctx, tenant, tenant.DB, p, c)
				if err != nil {
					t.Fatal(err)
				}
				got := body.JSON
				var g, w any
				if err := json.Unmarshal(got, &g); err != nil {
					t.Fatalf("%s: invalid JSON %s: %v", name, got, err)
				}
				json.Unmarshal(want, &w)
				if !reflect.DeepEqual(g, w) {
					t.Errorf("%s, round %d:\n got %s\nwant %s", name, round, got, want)
				}
			}
		}
		// The description names the program's fields, not bytes.
		op := env.Server.API.OpenAPI().Paths["/api/courses/{course}/program"].Get
		if op.Responses["200"].Content["application/json"] == nil {
			t.Errorf("program response not described as JSON: %+v", op.Responses["200"].Content)
		}
	})
}

// TestProgramGzip reads a learner's program, which the server keeps, with
// gzip accepted and without: the gzip answer says so, decodes to the plain
// one and changes with the learner's progress; an anonymous reader, whose
// answer is made for the one request, gets it as it is.
func TestProgramGzip(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		c, _, topics := grid(t, env, courseRow{Public: true}, 3, 8)
		u := env.NewUser("student")
		assign(t, env, c, u.ID, nil)
		path := fmt.Sprintf("/api/courses/%d/program", c)
		read := func(token, accept string) *apitest.Response {
			t.Helper()
			r := env.Do(apitest.Request{Method: "GET", Path: path, Token: token,
				Headers: map[string]string{"Accept-Encoding": accept}})
			if r.Status != 200 || !strings.Contains(r.Header.Get("Vary"), "Accept-Encoding") {
				t.Fatalf("%s with Accept-Encoding %q: %d, Vary %q", path, accept, r.Status, r.Header.Get("Vary"))
			}
			return r
		}
		gunzip := func(r *apitest.Response) []byte {
			t.Helper()
			if enc := r.Header.Get("Content-Encoding"); enc != "gzip" {
				t.Fatalf("Content-Encoding %q, want gzip", enc)
			}
			zr, err := gzip.NewReader(bytes.NewReader(r.Body))
			if err != nil {
				t.Fatal(err)
			}
			plain, err := io.ReadAll(zr)
			if err != nil {
				t.Fatal(err)
			}
			return plain
		}
		for round := range 2 { // making the answer, then kept
			plain := read(u.Token, "identity")
			if enc := plain.Header.Get("Content-Encoding"); enc != "" {
				t.Fatalf("round %d: Content-Encoding %q without gzip accepted", round, enc)
			}
			zipped := read(u.Token, "br;q=1, gzip;q=0.8")
			if got := gunzip(zipped); !bytes.Equal(got, plain.Body) {
				t.Fatalf("round %d: gzip answer decodes to\n%s\nwant\n%s", round, got, plain.Body)
			}
			if len(zipped.Body) >= len(plain.Body)/3 {
				t.Errorf("round %d: gzip %d bytes of %d", round, len(zipped.Body), len(plain.Body))
			}
		}
		before := gunzip(read(u.Token, "gzip"))
		patch(t, env, u, c, 1, topics[0][0])
		after := gunzip(read(u.Token, "gzip"))
		if bytes.Equal(before, after) || !bytes.Equal(after, read(u.Token, "identity").Body) {
			t.Error("the gzip answer did not follow the learner's progress")
		}
		if r := read("", "gzip"); r.Header.Get("Content-Encoding") != "" || !json.Valid(r.Body) {
			t.Errorf("anonymous: Content-Encoding %q", r.Header.Get("Content-Encoding"))
		}
	})
}

// TestConcurrentLearnersReadTheirOwnWrites has eight learners of two
// courses each complete a topic and read their program at once, over
// and over: on PostgreSQL their counter reads share queries, and every
// answer must be the reader's own, with every write they made before it.
func TestConcurrentLearnersReadTheirOwnWrites(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		const topics = 6
		var courseIDs [2]int64
		var topicIDs [2][]int64
		for i := range courseIDs {
			var ts [][]int64
			courseIDs[i], _, ts = grid(t, env, courseRow{}, 1, topics)
			topicIDs[i] = ts[0]
		}
		learners := make([]*apitest.User, 8)
		for i := range learners {
			learners[i] = env.NewUser("student")
			assign(t, env, courseIDs[i%2], learners[i].ID, nil)
		}
		apitest.AtOnce(t, len(learners), func(i int) error {
			u, c, ts := learners[i], courseIDs[i%2], topicIDs[i%2]
			for n, topic := range ts {
				if _, err := write(t, env, u, c, 1, topic); err != nil {
					return err
				}
				for range 3 {
					prog, err := env.UserClient(u).GetCoursesIDProgram(t.Context(), c)
					if err != nil {
						return err
					}
					if prog.ID != c {
						return fmt.Errorf("learner %d read course %d's program, want %d", i, prog.ID, c)
					}
					if got := prog.Progress.FinishedTopics; got != int64(n+1) {
						return fmt.Errorf("learner %d after completing %d topics: %d completed", i, n+1, got)
					}
				}
			}
			return nil
		})
	})
}
