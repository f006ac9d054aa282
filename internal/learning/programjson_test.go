package learning_test

import (
	"context"
	"encoding/json"
	"reflect"
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
				got, err := env.Server.Learning.ProgramJSON(ctx, tenant, tenant.DB, p, c)
				if err != nil {
					t.Fatal(err)
				}
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
