package interactive_test

import (
	"testing"

	"github.com/lms-platform/lms/client"
	"github.com/lms-platform/lms/internal/apitest"
	"github.com/lms-platform/lms/internal/kinds/interactive"
	"github.com/lms-platform/lms/internal/kinds/interactive/interactivetest"
)

// TestEveryProblemNamed: a package with problems of its manifest, of its
// archive and of the topic's fields answers one 422 naming each of them,
// and stores nothing.
func TestEveryProblemNamed(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		w := newWorld(t, env)
		// No steps, and an entry the archive lacks.
		broken := map[string]string{"lms-interactive.json": `{"entry":"start.html","steps":[]}`, "js/app.js": "1"}
		// A valid manifest whose entry the archive lacks.
		noEntry := map[string]string{"lms-interactive.json": interactivetest.Manifest, "js/app.js": "1"}
		create := func(files map[string]string, f client.PostAdminTopicsForm) error {
			f.Lesson, f.Title, f.Topicable, f.File = w.lesson, "Uploaded", interactive.Class, zipFile(t, files)
			_, err := w.author.PostAdminTopicsMultipart(t.Context(), f)
			return err
		}
		cases := []struct {
			name   string
			err    error
			fields []string
		}{
			{"upload: manifest and archive", func() error { _, err := w.upload(t, broken, 0); return err }(),
				[]string{"manifest.steps", "manifest.entry"}},
			{"create: manifest, archive and a field", create(broken, client.PostAdminTopicsForm{Completion: p("sometimes")}),
				[]string{"manifest.steps", "manifest.entry", "completion"}},
			{"create: archive and a rule of the manifest", create(noEntry, client.PostAdminTopicsForm{EndStep: p("nope")}),
				[]string{"manifest.entry", "endStep"}},
			{"create: a field and a rule of the manifest", create(app(interactivetest.Manifest),
				client.PostAdminTopicsForm{Display: p("popup"), StartStep: p("nope")}), []string{"display", "startStep"}},
		}
		for _, c := range cases {
			for _, f := range c.fields {
				if !hasError(c.err, f) {
					t.Errorf("%s: %v, want 422 naming %s", c.name, c.err, f)
				}
			}
		}
		if n := env.Count(t, `SELECT COUNT(*) FROM interactive_versions`); n != 0 {
			t.Errorf("refused packages stored %d versions", n)
		}
	})
}
