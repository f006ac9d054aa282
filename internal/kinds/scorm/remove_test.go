package scorm_test

import (
	"context"
	"regexp"
	"testing"

	"github.com/lms-platform/lms/internal/apitest"
	"github.com/lms-platform/lms/internal/kinds/scorm"
)

// TestDeletePackage: a package a topic plays cannot be deleted (409
// naming the topic); once no topic plays it, its uploader (or an admin)
// deletes it with its SCOs, tracks and files.
func TestDeletePackage(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		w := newWorld(t, env)
		pkg := upload(t, env, w.tutor, "golf.zip", fixture(t, "RuntimeBasicCalls_SCORM12.zip"))
		id := n(pkg.Number("data.id"))
		sco := n(pkg.Number("data.scos.0.id"))
		topic := n(env.Call(t, 201, "POST", "/api/admin/topics", w.tutor.Token, map[string]any{"lesson": w.lesson, "title": "Golf",
			"topicable": scorm.Class, "package": pkg.Number("data.id")}).Number("data.id"))
		s, _ := launch(t, env, w.learner, sco, topic, 200)
		s.commit(t, env, 1, map[string]any{"cmi.core.lesson_status": "incomplete"})
		page := env.Do(apitest.Request{Method: "POST", Path: "/api/scorm/player/" + sco, Body: "token=" + s.token,
			Type: "application/x-www-form-urlencoded"})
		content := regexp.MustCompile(`/api/scorm/content/[^"]+launchpage.html`).FindString(string(page.Body))
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

		res := env.Call(t, 409, "DELETE", "/api/admin/scorm/"+id, w.tutor.Token, nil)
		if res.String("error") != "package_in_use" || n(res.Get("details.topics.0").(float64)) != topic {
			t.Fatalf("in use: %s", res.Body)
		}
		env.Call(t, 403, "DELETE", "/api/admin/scorm/"+id, w.learner.Token, nil)
		env.Call(t, 403, "DELETE", "/api/admin/scorm/"+id, env.NewUser("tutor").Token, nil)
		if env.Count(t, `SELECT COUNT(*) FROM scorm_packages WHERE id = $1`, id) != 1 || !env.BlobExists(t, prefix+"imsmanifest.xml") {
			t.Fatal("a refused delete removed something")
		}

		env.Call(t, 200, "DELETE", "/api/admin/topics/"+topic, w.tutor.Token, nil)
		env.Call(t, 200, "DELETE", "/api/admin/scorm/"+id, w.tutor.Token, nil)
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
		env.Call(t, 404, "DELETE", "/api/admin/scorm/"+id, w.tutor.Token, nil)
		res = env.Call(t, 422, "POST", "/api/admin/topics", w.tutor.Token, map[string]any{"lesson": w.lesson, "title": "Golf",
			"topicable": scorm.Class, "package": id})
		if res.String("errors.package.0") != "The package does not exist." {
			t.Errorf("topic on the deleted package: %s", res.Body)
		}

		// An admin deletes a tutor's package.
		other := upload(t, env, w.tutor, "golf.zip", fixture(t, "RuntimeBasicCalls_SCORM12.zip"))
		env.Call(t, 200, "DELETE", "/api/admin/scorm/"+n(other.Number("data.id")), w.admin.Token, nil)
		// A package that came with a topic's file has no uploader (as
		// after its uploader's account is deleted): only an admin
		// deletes it.
		third := n(upload(t, env, w.tutor, "golf.zip", fixture(t, "RuntimeBasicCalls_SCORM12.zip")).Number("data.id"))
		tn, release = env.OpenTenant(env.Tenant)
		_, err = tn.DB.ExecContext(context.Background(), `UPDATE scorm_packages SET created_by = NULL WHERE id = $1`, third)
		release()
		if err != nil {
			t.Fatal(err)
		}
		env.Call(t, 403, "DELETE", "/api/admin/scorm/"+third, w.tutor.Token, nil)
		env.Call(t, 200, "DELETE", "/api/admin/scorm/"+third, w.admin.Token, nil)
	})
}
