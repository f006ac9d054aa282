package platformadmin_test

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/lms-platform/lms/client"
	"github.com/lms-platform/lms/internal/apitest"
	"github.com/lms-platform/lms/internal/config"
	"github.com/lms-platform/lms/internal/jobs"
	"github.com/lms-platform/lms/internal/platform"
	"github.com/lms-platform/lms/internal/queue"
	"github.com/lms-platform/lms/internal/sqldb"
)

const platformHost = "platform.test"

// operator is the platform tenant's first admin, on the platform host.
func operator(t *testing.T, env *apitest.Env) *client.Client {
	t.Helper()
	token, _ := env.Login(platformHost, "root@platform.test", "platform-password")
	return env.Client(platformHost, token)
}

func find(list *client.Page[client.PlatformTenant], host string) *client.PlatformTenant {
	for i := range list.Items {
		if list.Items[i].Host == host {
			return &list.Items[i]
		}
	}
	return nil
}

func TestPlatformAPIRoles(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		ctx := t.Context()
		root := operator(t, env)
		all := client.GetPlatformTenantsParams{PerPage: client.Ptr(int64(100))}

		// A tenant's own admin holds platform_admin too, but the API exists
		// only on the platform host.
		_, err := env.ClientAs("admin").GetPlatformTenants(ctx, all)
		apitest.Refused(t, err, 404)
		// A student of the platform tenant lacks the permission.
		rec, err := env.Server.Registry.ByHost(ctx, platformHost)
		if err != nil {
			t.Fatal(err)
		}
		if err := env.Server.AddUser(ctx, rec, "learner@platform.test", "secret-password", "student"); err != nil {
			t.Fatal(err)
		}
		learner, _ := env.Login(platformHost, "learner@platform.test", "secret-password")
		_, err = env.Client(platformHost, learner).GetPlatformTenants(ctx, all)
		apitest.Refused(t, err, 403)

		list := apitest.Must(root.GetPlatformTenants(ctx, all))(t)
		school := find(list, env.Host)
		if list.Meta.Total != 2 || school == nil || school.State != "active" || school.Users != 1 || school.Platform {
			t.Fatalf("tenants: %+v", list)
		}
		if p := find(list, platformHost); p == nil || !p.Platform || p.Users != 2 {
			t.Errorf("platform tenant: %+v", p)
		}

		// Scoped tokens: the platform scopes, never implied by others.
		token := func(scopes ...string) *client.Client {
			c := apitest.Must(root.PostAuthTokens(ctx, client.CreateInputBody{Name: "agent", Scopes: scopes}))(t)
			return env.Client(platformHost, c.Token)
		}
		reader, other := token("platform:read"), token("courses:write", "users:write", "tokens:manage")
		apitest.Must(reader.GetPlatformTenants(ctx, all))(t)
		_, err = reader.PostPlatformTenantsIDSuspend(ctx, school.ID)
		apitest.Refused(t, err, 403)
		_, err = other.GetPlatformTenants(ctx, all)
		apitest.Refused(t, err, 403)
		writer := token("platform:write")
		apitest.Must(writer.PatchPlatformTenantsID(ctx, school.ID, client.TenantRenameBody{Name: "School"}))(t)
		env.Server.Audit.Flush(context.Background())
		audit := apitest.Must(root.GetAdminAgentAudit(ctx, client.GetAdminAgentAuditParams{}))(t)
		routes := map[string]int64{}
		for _, e := range audit.Items {
			routes[e.Route] = e.Status
		}
		if routes["GET /api/platform/tenants"] != 200 || routes["POST /api/platform/tenants/{id}/suspend"] != 403 ||
			routes["PATCH /api/platform/tenants/{id}"] != 200 {
			t.Errorf("agent audit: %v", routes)
		}
		if got := apitest.Must(root.GetPlatformTenantsID(ctx, school.ID))(t); got.Name != "School" {
			t.Errorf("renamed: %+v", got)
		}

		// 60 requests a minute per user: this user made some already.
		var last error
		for i := 0; i < 61 && last == nil; i++ {
			_, last = root.GetPlatformTenantsID(ctx, school.ID)
		}
		apitest.Refused(t, last, 429)
	})
}

func TestPlatformTenantLifecycle(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		ctx := t.Context()
		root := operator(t, env)
		all := client.GetPlatformTenantsParams{PerPage: client.Ptr(int64(100))}
		count := func() int { return apitest.Must(root.GetPlatformTenants(ctx, all))(t).Meta.Total }

		// Bad input: 422 and no tenant.
		for _, body := range []client.TenantCreateBody{
			{Host: "not a host!"},
			{Host: env.Host},
			{Host: "new.test", AdminPassword: client.Ptr("short")},
			{Host: "new.test", AdminEmail: client.Ptr("nobody")},
		} {
			_, err := root.PostPlatformTenants(ctx, body)
			apitest.Refused(t, err, 422)
		}
		if n := count(); n != 2 {
			t.Fatalf("bad creations left %d tenants", n)
		}

		made := apitest.Must(root.PostPlatformTenants(ctx, client.TenantCreateBody{Host: "New.Test", Name: client.Ptr("New school")}))(t)
		if made.Tenant.Host != "new.test" || made.AdminEmail != "admin@new.test" || made.AdminPassword == nil ||
			made.Tenant.Users != 1 || made.Tenant.State != "active" {
			t.Fatalf("created: %+v", made)
		}
		id := made.Tenant.ID
		adminToken, _ := env.Login("new.test", made.AdminEmail, *made.AdminPassword)
		admin := env.Client("new.test", adminToken)
		apitest.Must(admin.PostAdminCourses(ctx, client.CourseBody{Title: "Kept"}))(t)
		apitest.Must(admin.PostProfileUploadAvatar(ctx, client.PostProfileUploadAvatarForm{
			Avatar: &client.File{Name: "me.png", Content: bytes.NewReader(apitest.PNG(t))}}))(t)
		_, err := root.PatchPlatformTenantsID(ctx, id, client.TenantRenameBody{Name: "  "})
		apitest.Refused(t, err, 422)

		// A job of the tenant waits in the queue; it must not run while
		// the tenant is suspended, and runs once it is resumed.
		ran := 0
		env.Server.Queue.Handle(queue.Kind{Name: "test.suspension", Run: func(context.Context, *platform.Tenant, queue.Job) error {
			ran++
			return nil
		}})
		rec, err := env.Server.Registry.ByID(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		tn, release := env.OpenTenant(rec)
		if err := tn.Tx(ctx, func(tx *sqldb.Tx) error {
			return env.Server.Queue.Enqueue(ctx, tn, tx, queue.New{Kind: "test.suspension"})
		}); err != nil {
			t.Fatal(err)
		}
		release()
		// And a scheduled job of that tenant alone: it must skip the
		// tenant while suspended and run once it is resumed.
		scheduled := 0
		env.Server.Jobs.Add(jobs.Job{Name: "test.suspension", Schedule: jobs.Every(time.Hour),
			Tenants: func(r platform.Record) bool { return r.ID == id },
			Run: func(context.Context, *platform.Tenant, time.Time) error {
				scheduled++
				return nil
			}})

		// Suspended: 503 on every route of its host, data kept, no job.
		apitest.Must(root.PostPlatformTenantsIDSuspend(ctx, id))(t)
		_, err = env.Client("new.test", "").GetConfig(ctx)
		if e := apitest.Refused(t, err, 503); !strings.Contains(e.Message, "suspended by the platform operator") {
			t.Errorf("suspended answer: %q", e.Message)
		}
		_, err = admin.GetAdminCourses(ctx, client.GetAdminCoursesParams{})
		apitest.Refused(t, err, 503)
		// The H5P service resolves tenants the same way.
		if res := env.Do(apitest.Request{Method: "GET", Path: "/h5p/contents", Host: "new.test", Token: adminToken}); res.Status != 503 {
			t.Errorf("H5P service of a suspended tenant: %d %s", res.Status, res.Body)
		}
		rec, err = env.Server.Registry.ByID(ctx, id)
		if err != nil || !rec.Suspended() {
			t.Fatalf("record: %+v %v", rec, err)
		}
		if _, _, err := env.Server.Tenants.Borrow(ctx, rec); err == nil {
			t.Error("a job could open the suspended tenant")
		}
		if err := env.Server.Jobs.Tick(ctx, env.Clock.Now()); err != nil {
			t.Errorf("jobs with a suspended tenant: %v", err)
		}
		for range 3 {
			if _, err := env.Server.Queue.Work(ctx); err != nil {
				t.Errorf("queue with a suspended tenant: %v", err)
			}
		}
		if ran != 0 || scheduled != 0 {
			t.Errorf("a suspended tenant's jobs ran: queued %d, scheduled %d times", ran, scheduled)
		}
		if got := apitest.Must(root.GetPlatformTenantsID(ctx, id))(t); got.State != "suspended" || got.Courses != 1 ||
			got.StorageBytes == 0 || got.LastActivityAt == nil {
			t.Errorf("suspended tenant: %+v", got)
		}
		platformID := apitest.Must(root.GetPlatformTenants(ctx, all))(t).Items[0].ID
		_, err = root.PostPlatformTenantsIDSuspend(ctx, platformID)
		apitest.Refused(t, err, 409)

		apitest.Must(root.PostPlatformTenantsIDResume(ctx, id))(t)
		for i := 0; i < 5 && ran == 0; i++ {
			if _, err := env.Server.Queue.Work(ctx); err != nil {
				t.Fatalf("queue after resume: %v", err)
			}
		}
		if err := env.Server.Jobs.Tick(ctx, env.Clock.Now()); err != nil {
			t.Fatalf("jobs after resume: %v", err)
		}
		if ran != 1 || scheduled != 1 {
			t.Errorf("the resumed tenant's jobs ran: queued %d, scheduled %d times", ran, scheduled)
		}
		if list := apitest.Must(admin.GetAdminCourses(ctx, client.GetAdminCoursesParams{}))(t); list.Meta.Total != 1 {
			t.Errorf("courses after resume: %+v", list)
		}

		// Deletion needs its confirmation; then the host is free again.
		err = root.DeletePlatformTenantsID(ctx, id, client.DeletePlatformTenantsIDParams{})
		apitest.Refused(t, err, 422)
		err = root.DeletePlatformTenantsID(ctx, id, client.DeletePlatformTenantsIDParams{Confirmation: client.Ptr("1.00")})
		apitest.Refused(t, err, 422)
		if n := count(); n != 3 {
			t.Fatalf("an unconfirmed deletion left %d tenants", n)
		}
		_, err = root.PostPlatformTenantsIDDeletion(ctx, platformID)
		apitest.Refused(t, err, 409)
		step := apitest.Must(root.PostPlatformTenantsIDDeletion(ctx, id))(t)
		if step.Tenant.Courses != 1 || step.ConfirmationToken == "" {
			t.Fatalf("deletion step: %+v", step)
		}
		if err := root.DeletePlatformTenantsID(ctx, id, client.DeletePlatformTenantsIDParams{Confirmation: &step.ConfirmationToken}); err != nil {
			t.Fatal(err)
		}
		_, err = root.GetPlatformTenantsID(ctx, id)
		apitest.Refused(t, err, 404)
		if left, err := env.Server.Tenants.Storage(ctx, rec); err != nil || left != 0 {
			t.Errorf("the deleted tenant's files: %d bytes left (%v)", left, err)
		}
		_, err = admin.GetAdminCourses(ctx, client.GetAdminCoursesParams{})
		apitest.Refused(t, err, 404)
		again := apitest.Must(root.PostPlatformTenants(ctx, client.TenantCreateBody{Host: "new.test", AdminPassword: client.Ptr("admin-password")}))(t)
		if again.Tenant.Courses != 0 || again.Tenant.Users != 1 || again.Tenant.StorageBytes != 0 {
			t.Errorf("the reused host shows old data: %+v", again.Tenant)
		}
		// The keys went too: the old admin's token means nothing at the new tenant.
		_, err = admin.GetAdminCourses(ctx, client.GetAdminCoursesParams{})
		apitest.Refused(t, err, 401)
	})
}

// In demo mode a tenant created with demo set is seeded by a queue job
// after the call (the seed goes through the API and the H5P service over
// HTTP), as `lms tenant add --demo` seeds one at once; outside demo mode
// it is only marked.
func TestDemoTenantSeeded(t *testing.T) {
	for _, b := range apitest.Backends(t) {
		t.Run(b, func(t *testing.T) {
			env := apitest.New(t, b, apitest.Options{Configure: func(c *config.Config) {
				c.Demo = config.Demo{Enabled: true, ResetCron: "0 * * * *", StudentEmail: "student@demo.local",
					TutorEmail: "tutor@demo.local", AdminEmail: "admin@demo.local"}
			}})
			ctx := t.Context()
			root := operator(t, env)
			made := apitest.Must(root.PostPlatformTenants(ctx, client.TenantCreateBody{Host: "demo.test", Demo: client.Ptr(true)}))(t)
			plain := apitest.Must(root.PostPlatformTenants(ctx, client.TenantCreateBody{Host: "plain.test"}))(t)
			for range 20 {
				ran, err := env.Server.Queue.Work(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if !ran {
					break
				}
			}
			if got := apitest.Must(root.GetPlatformTenantsID(ctx, made.Tenant.ID))(t); !got.Demo || got.Courses == 0 {
				t.Errorf("the demo tenant after its seed job: %+v", got)
			}
			if got := apitest.Must(root.GetPlatformTenantsID(ctx, plain.Tenant.ID))(t); got.Courses != 0 {
				t.Errorf("a tenant without demo was seeded: %+v", got)
			}
		})
	}
}
