package scorm_test

import (
	"context"
	"regexp"
	"testing"

	"github.com/lms-platform/lms/client"
	"github.com/lms-platform/lms/internal/apitest"
	"github.com/lms-platform/lms/internal/kinds/scorm"
)

// TestDeletePackage: a package a topic plays cannot be deleted (409
// naming the topic); once no topic plays it, its uploader (or an admin)
// deletes it with its SCOs, tracks and files.
func TestDeletePackage(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		ctx := t.Context()
		w := newWorld(t, env)
		tutor, admin := env.UserClient(w.tutor), env.UserClient(w.admin)
		pkg := apitest.Must(upload(t, env, w.tutor, "golf.zip", fixture(t, "RuntimeBasicCalls_SCORM12.zip")))(t)
		id, sco := pkg.ID, pkg.Scos[0].ID
		topic := scormTopic(t, w, "Golf", id, 0)
		s, _ := launch(t, env, w.learner, sco, topic)
		s.commit(t, env, 1, map[string]any{"cmi.core.lesson_status": "incomplete"})
		// The page's signed content link is fetched raw, as the browser
		// does: whole, not split into the route's parameters.
		content := regexp.MustCompile(`/api/scorm/content/[^"]+launchpage.html`).FindString(s.player(t, env))
		if res := env.Do(apitest.Request{Method: "GET", Path: content}); res.Status != 200 {
			t.Fatalf("content %q: %d", content, res.Status)
		}
		var prefix string
		tn, release := env.OpenTenant(env.Tenant)
		err := tn.DB.QueryRowContext(context.Background(), `SELECT blob_prefix FROM scorm_packages WHERE id = $1`, id).Scan(&prefix)
		release()
		if err != nil || !env.BlobExists(t, prefix+"imsmanifest.xml") {
			t.Fatalf("package files under %q: %v", prefix, err)
		}

		e := apitest.Refused(t, tutor.DeleteAdminScormID(ctx, id), 409)
		if e.Code != "package_in_use" || apitest.Lookup(e.Details, "topics.0") != float64(topic) {
			t.Fatalf("in use: %v %v", e, e.Details)
		}
		apitest.Refused(t, env.UserClient(w.learner).DeleteAdminScormID(ctx, id), 403)
		apitest.Refused(t, env.UserClient(env.NewUser("tutor")).DeleteAdminScormID(ctx, id), 403)
		if env.Count(t, `SELECT COUNT(*) FROM scorm_packages WHERE id = $1`, id) != 1 || !env.BlobExists(t, prefix+"imsmanifest.xml") {
			t.Fatal("a refused delete removed something")
		}

		apitest.OK(t, tutor.DeleteAdminTopicsID(ctx, topic))
		apitest.OK(t, tutor.DeleteAdminScormID(ctx, id))
		if got := env.Count(t, `SELECT COUNT(*) FROM scorm_packages WHERE id = $1`, id) +
			env.Count(t, `SELECT COUNT(*) FROM scorm_scos WHERE package_id = $1`, id) +
			env.Count(t, `SELECT COUNT(*) FROM scorm_tracks WHERE sco_id = $1`, sco); got != 0 {
			t.Fatalf("%d rows left", got)
		}
		if env.BlobExists(t, prefix+"imsmanifest.xml") || env.BlobExists(t, prefix+"shared/launchpage.html") {
			t.Fatal("files left")
		}
		if res := env.Do(apitest.Request{Method: "GET", Path: content}); res.Status != 404 {
			t.Errorf("content after the delete: %d", res.Status)
		}
		apitest.Refused(t, tutor.DeleteAdminScormID(ctx, id), 404)
		_, err = tutor.PostAdminTopics(ctx, client.PostAdminTopicsBody{Lesson: w.lesson, Title: "Golf", Topicable: scorm.Class, Package: &id})
		if e := apitest.Refused(t, err, 422); len(e.Errors["package"]) == 0 || e.Errors["package"][0] != "The package does not exist." {
			t.Errorf("topic on the deleted package: %v", e)
		}

		// An admin deletes a tutor's package.
		other := apitest.Must(upload(t, env, w.tutor, "golf.zip", fixture(t, "RuntimeBasicCalls_SCORM12.zip")))(t)
		apitest.OK(t, admin.DeleteAdminScormID(ctx, other.ID))
		// A package that came with a topic's file has no uploader (as
		// after its uploader's account is deleted): only an admin
		// deletes it.
		third := apitest.Must(upload(t, env, w.tutor, "golf.zip", fixture(t, "RuntimeBasicCalls_SCORM12.zip")))(t).ID
		tn, release = env.OpenTenant(env.Tenant)
		_, err = tn.DB.ExecContext(context.Background(), `UPDATE scorm_packages SET created_by = NULL WHERE id = $1`, third)
		release()
		if err != nil {
			t.Fatal(err)
		}
		apitest.Refused(t, tutor.DeleteAdminScormID(ctx, third), 403)
		apitest.OK(t, admin.DeleteAdminScormID(ctx, third))
	})
}
