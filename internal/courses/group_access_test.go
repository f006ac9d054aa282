package courses_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/lms-platform/lms/client"
	"github.com/lms-platform/lms/internal/apitest"
)

// accessEventsAfter delivers the pending events, as the dispatcher does
// after a commit, and lists the access events recorded after id as
// "name user course title".
func accessEventsAfter(t *testing.T, env *apitest.Env, after int64) []string {
	t.Helper()
	env.DeliverEvents()
	tenant, release := env.OpenTenant(env.Tenant)
	defer release()
	rows, err := tenant.DB.QueryContext(context.Background(), `SELECT name, user_id, payload FROM events
		WHERE id > $1 AND name IN ('CourseAccessStarted', 'CourseAccessFinished') ORDER BY id`, after)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := []string{}
	for rows.Next() {
		var name, raw string
		var user int64
		if err := rows.Scan(&name, &user, &raw); err != nil {
			t.Fatal(err)
		}
		var payload struct {
			CourseID int64  `json:"course_id"`
			Title    string `json:"title"`
		}
		if err := json.Unmarshal([]byte(raw), &payload); err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprintf("%s %d %d %s", name, user, payload.CourseID, payload.Title))
	}
	return out
}

// TestGroupMembershipAccess: joining or leaving a group assigned to a
// course (or whose ancestor is) gives or takes the course's access with
// its events, once, and not for a learner who holds the access another
// way.
func TestGroupMembershipAccess(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		ctx, admin := t.Context(), env.ClientAs("admin")
		learner, direct := env.NewUser("student"), env.NewUser("student")
		school := group(t, env, "School", 0)
		class := group(t, env, "Class", school)
		course := newCourse(t, admin, client.CourseBody{Title: "Grouped", Status: client.Ptr("published")})
		apitest.Must(admin.PostAdminCoursesIDAccess(ctx, course, client.AssignInputBody{Groups: []client.GrantBody{{ID: school}}}))(t)
		apitest.Must(admin.PostAdminCoursesIDAccess(ctx, course, client.AssignInputBody{Users: []client.GrantBody{{ID: direct.ID}}}))(t)
		add := func(g int64, u *apitest.User) {
			apitest.Must(admin.PostAdminUserGroupsIDMembers(ctx, g, client.MemberInputBody{UserID: u.ID}))(t)
		}
		remove := func(g int64, u *apitest.User) {
			apitest.Must(admin.DeleteAdminUserGroupsIDMembersID(ctx, g, u.ID))(t)
		}
		started := func(u *apitest.User) string { return fmt.Sprintf("CourseAccessStarted %d %d Grouped", u.ID, course) }
		finished := func(u *apitest.User) string { return fmt.Sprintf("CourseAccessFinished %d %d Grouped", u.ID, course) }

		steps := []struct {
			name   string
			do     func()
			events []string
		}{
			{"joining a subgroup of the assigned group starts access", func() {
				add(class, learner)
			}, []string{started(learner)}},
			{"joining the assigned group too changes nothing", func() {
				add(school, learner)
			}, []string{}},
			{"leaving one of two groups changes nothing", func() {
				remove(class, learner)
			}, []string{}},
			{"leaving the last group finishes access", func() {
				remove(school, learner)
			}, []string{finished(learner)}},
			{"a learner assigned directly gains nothing by joining", func() {
				add(school, direct)
			}, []string{}},
			{"nor loses anything by leaving", func() {
				remove(school, direct)
			}, []string{}},
			{"joining and leaving before delivery: started then finished", func() {
				add(school, learner)
				remove(school, learner)
			}, nil},
		}
		for _, s := range steps {
			before := env.LastEventID()
			s.do()
			got := accessEventsAfter(t, env, before)
			if s.events == nil {
				// The dispatcher may have delivered the join before the
				// leave or not: either both events or none, never one.
				if len(got) != 0 && !slices.Equal(got, []string{started(learner), finished(learner)}) {
					t.Errorf("%s: %q", s.name, got)
				}
				continue
			}
			if !slices.Equal(got, s.events) {
				t.Errorf("%s: %q, want %q", s.name, got, s.events)
			}
		}
	})
}

// TestGroupTreeAccess: deleting a group or moving it under another parent
// changes which assigned ancestors its members and its subgroups' members
// inherit access from, without any membership event; the access follows
// with its events all the same, and not for a learner who holds the
// access another way.
func TestGroupTreeAccess(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		ctx, admin := t.Context(), env.ClientAs("admin")
		learner, deep, direct := env.NewUser("student"), env.NewUser("student"), env.NewUser("student")
		school := group(t, env, "School", 0)
		other := group(t, env, "Other", 0)
		class := group(t, env, "Class", school)
		team := group(t, env, "Team", class)
		course := newCourse(t, admin, client.CourseBody{Title: "Tree", Status: client.Ptr("published")})
		apitest.Must(admin.PostAdminCoursesIDAccess(ctx, course, client.AssignInputBody{Groups: []client.GrantBody{{ID: school}}}))(t)
		apitest.Must(admin.PostAdminCoursesIDAccess(ctx, course, client.AssignInputBody{Users: []client.GrantBody{{ID: direct.ID}}}))(t)
		started := func(u *apitest.User) string { return fmt.Sprintf("CourseAccessStarted %d %d Tree", u.ID, course) }
		finished := func(u *apitest.User) string { return fmt.Sprintf("CourseAccessFinished %d %d Tree", u.ID, course) }

		steps := []struct {
			name   string
			do     func()
			events []string
		}{
			{"joining the class and its team starts access", func() {
				join(t, env, class, learner.ID)
				join(t, env, team, deep.ID)
				join(t, env, class, direct.ID)
			}, []string{started(learner), started(deep)}},
			{"moving the class to the top finishes it", func() {
				// The body's pointers cannot say null: the move to the top
				// sends its JSON through Call.
				apitest.OK(t, admin.Call(ctx, "PATCH", "/api/admin/user-groups/"+id(class), map[string]any{"parent_id": nil}, nil))
			}, []string{finished(learner), finished(deep)}},
			{"moving it back under the school starts it", func() {
				apitest.Must(admin.PatchAdminUserGroupsID(ctx, class, client.PatchGroupInputBody{ParentID: client.Ptr(school)}))(t)
			}, []string{started(learner), started(deep)}},
			{"renaming it changes nothing", func() {
				apitest.Must(admin.PatchAdminUserGroupsID(ctx, class, client.PatchGroupInputBody{Name: client.Ptr("Class A")}))(t)
			}, []string{}},
			{"replacing it under another parent finishes it", func() {
				apitest.Must(admin.PutAdminUserGroupsID(ctx, class, client.PutGroupInputBody{Name: "Class A", ParentID: client.Ptr(other)}))(t)
			}, []string{finished(learner), finished(deep)}},
			{"moving it back again starts it", func() {
				apitest.Must(admin.PatchAdminUserGroupsID(ctx, class, client.PatchGroupInputBody{ParentID: client.Ptr(school)}))(t)
			}, []string{started(learner), started(deep)}},
			{"deleting it finishes it", func() {
				apitest.OK(t, admin.DeleteAdminUserGroupsID(ctx, class))
			}, []string{finished(learner), finished(deep)}},
		}
		for _, s := range steps {
			before := env.LastEventID()
			s.do()
			// Which events, not their order: the reactions to separate
			// requests run after their commits, on PostgreSQL side by side.
			got := accessEventsAfter(t, env, before)
			slices.Sort(got)
			slices.Sort(s.events)
			if !slices.Equal(got, s.events) {
				t.Errorf("%s: %q, want %q", s.name, got, s.events)
			}
		}
	})
}

// TestConcurrentAccessReads: learners holding a course in each way the
// rule knows, and two who hold it in none, read its program at once, so
// that on PostgreSQL their assignments are read in shared queries; each
// gets the answer of its own assignments, every time.
func TestConcurrentAccessReads(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		ctx, admin := t.Context(), env.ClientAs("admin")
		course := newCourse(t, admin, client.CourseBody{Title: "Shared reads", Status: client.Ptr("published")})
		school := group(t, env, "School", 0)
		team := group(t, env, "Team", group(t, env, "Class", school))
		outside := group(t, env, "Outside", 0)
		apitest.Must(admin.PostAdminCoursesIDAccess(ctx, course, client.AssignInputBody{Groups: []client.GrantBody{{ID: school}}}))(t)
		type learner struct {
			u       *apitest.User
			holds   bool
			joining int64
		}
		var learners []learner
		for i := range 6 {
			learners = append(learners, learner{u: env.NewUser("student"), holds: true},
				learner{u: env.NewUser("student"), holds: true, joining: school},
				learner{u: env.NewUser("student"), holds: true, joining: team},
				learner{u: env.NewUser("student"), joining: outside},
				learner{u: env.NewUser("student")})
			apitest.Must(admin.PostAdminCoursesIDAccess(ctx, course, client.AssignInputBody{Users: []client.GrantBody{{ID: learners[5*i].u.ID}}}))(t)
		}
		for _, l := range learners {
			if l.joining != 0 {
				join(t, env, l.joining, l.u.ID)
			}
		}
		apitest.AtOnce(t, len(learners), func(i int) error {
			l := learners[i]
			c := env.UserClient(l.u)
			for range 4 {
				_, err := c.GetCoursesIDProgram(ctx, course)
				if l.holds && err != nil {
					return fmt.Errorf("learner %d, who holds the course: %v", i, err)
				}
				var refused *client.Error
				if !l.holds && (!errors.As(err, &refused) || refused.Status != 403) {
					return fmt.Errorf("learner %d, who does not hold the course: %v, want 403", i, err)
				}
			}
			return nil
		})
	})
}
