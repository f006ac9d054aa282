package server_test

import (
	"context"
	"math"
	"testing"

	"github.com/lms-platform/lms/client"
	"github.com/lms-platform/lms/internal/apitest"
	"github.com/lms-platform/lms/internal/events"
	"github.com/lms-platform/lms/internal/server"
)

// TestReactionSurvivesCrash: a change commits its event, the process dies
// before any listener ran, and the dispatcher of a new process on the same
// storage delivers it: the learner added to a group gets the course's
// access, and a second delivery of the same event changes nothing.
func TestReactionSurvivesCrash(t *testing.T) {
	for _, backend := range apitest.Backends(t) {
		t.Run(backend, func(t *testing.T) {
			ctx := context.Background()
			env := apitest.New(t, backend, apitest.Options{NoDispatch: true})
			admin, learner := env.ClientAs("admin"), env.NewUser("student")
			group := apitest.Must(admin.PostAdminUserGroups(ctx, client.CreateGroupInputBody{Name: "Class"}))(t).ID
			course := apitest.Must(admin.PostAdminCourses(ctx, client.CourseBody{Title: "Course", Status: client.Ptr("published")}))(t).ID
			apitest.Must(admin.PostAdminCoursesIDAccess(ctx, course, client.AssignInputBody{Groups: []client.GrantBody{{ID: group}}}))(t)
			before := env.LastEventID()
			apitest.Must(admin.PostAdminUserGroupsIDMembers(ctx, group, client.MemberInputBody{UserID: learner.ID}))(t)
			started := func() int {
				return env.Count(t, `SELECT COUNT(*) FROM events WHERE id > $1 AND name = 'CourseAccessStarted' AND user_id = $2`,
					before, learner.ID)
			}
			if n := started(); n != 0 {
				t.Fatalf("%d CourseAccessStarted without a dispatcher", n)
			}

			// The process is gone; a new one opens the same storage.
			cfg := *env.Server.Config
			next, err := server.New(ctx, &cfg, server.Options{Clock: env.Clock, Logger: env.Server.Log})
			if err != nil {
				t.Fatal(err)
			}
			defer next.Close()
			tenant, release, err := next.Tenants.Get(ctx, env.Tenant)
			if err != nil {
				t.Fatal(err)
			}
			defer release()
			// Opening the tenant started its dispatcher, which may hold the
			// delivery under its lease: settle waits for it, and a second
			// delivery shows redelivery is harmless.
			apitest.Settle(t, next, tenant)
			if err := events.Redeliver(ctx, tenant.DB, env.Clock.Now(), before+1, math.MaxInt64); err != nil {
				t.Fatal(err)
			}
			apitest.Settle(t, next, tenant)
			if n := started(); n != 1 {
				t.Fatalf("%d CourseAccessStarted after the restart, want 1", n)
			}
		})
	}
}
