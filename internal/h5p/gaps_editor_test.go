package h5p_test

import (
	"strconv"
	"testing"

	"github.com/lms-platform/lms/client"
	"github.com/lms-platform/lms/internal/apitest"
)

// createAs saves a TrueFalse content through POST /h5p/contents as the
// user and returns its id; TrueFalse must be installed.
func createAs(t *testing.T, env *apitest.Env, token, library, title string) string {
	t.Helper()
	body := client.ContentBody{Library: library, Params: client.ContentParams{
		Params:   map[string]any{"question": "<p>" + title + "?</p>", "correct": "true"},
		Metadata: map[string]any{"title": title}}}
	return apitest.Must(env.Client("", token).PostH5PContents(t.Context(), body))(t).ContentID
}

// trueFalseLibrary is "H5P.TrueFalse <major>.<minor>" of content id.
func trueFalseLibrary(t *testing.T, env *apitest.Env, id int64) string {
	t.Helper()
	c := apitest.Must(env.ClientAs("").GetH5PContentsID(t.Context(), strconv.FormatInt(id, 10)))(t)
	return c.MainLibrary + " " + c.LibraryVersion
}

// TestEditModelRoleMatrix checks who may open the editor on a new
// content, on their own content and on another user's content.
func TestEditModelRoleMatrix(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		library := trueFalseLibrary(t, env, installTrueFalse(t, env))
		tutorOwn := createAs(t, env, env.As("tutor").Token, library, "Tutor's")
		adminOwn := createAs(t, env, env.As("admin").Token, library, "Admin's")
		for _, sc := range []struct {
			as, id string
			status int
		}{
			{"", "new", 401}, {"student", "new", 403}, {"tutor", "new", 200}, {"admin", "new", 200},
			{"", tutorOwn, 401}, {"student", tutorOwn, 403}, {"tutor", tutorOwn, 200}, {"admin", tutorOwn, 200},
			{"tutor", adminOwn, 403}, {"admin", adminOwn, 200},
			{"", "999999", 401}, {"student", "999999", 403}, {"admin", "999999", 404}, {"admin", "nothing", 404},
		} {
			apitest.RunOne(t, env, apitest.Scenario{Name: sc.as + " edit " + sc.id, As: sc.as, Method: "GET",
				Path: "/h5p/contents/" + sc.id + "/edit", Status: sc.status,
				Check: func(t *testing.T, env *apitest.Env, res *apitest.Response) {
					if res.Header.Get("Cache-Control") != "no-store" {
						t.Errorf("%s edit %s: Cache-Control %q", sc.as, sc.id, res.Header.Get("Cache-Control"))
					}
					if sc.status != 200 && res.Get("success") != false {
						t.Errorf("%s edit %s: %s", sc.as, sc.id, res.Body)
					}
				}})
		}
		// The internal token holds every permission.
		internal := map[string]string{"X-Internal-Token": env.Server.Config.InternalKey}
		apitest.RunOne(t, env, apitest.Scenario{Name: "system", Method: "GET", Path: "/h5p/contents/" + tutorOwn + "/edit",
			Headers: internal, Status: 200, JSON: map[string]any{"data.contentId": tutorOwn}})
	})
}

func TestEditModel(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		library := trueFalseLibrary(t, env, installTrueFalse(t, env))
		tutor := env.As("tutor")
		id := createAs(t, env, tutor.Token, library, "Edit me")
		core := env.Server.H5P.Store.CoreAPI()

		fresh := apitest.Must(env.UserClient(tutor).GetH5PContentsIDEdit(t.Context(), "new", client.GetH5PContentsIDEditParams{}))(t)
		apitest.RunOne(t, env, apitest.Scenario{Name: "new", As: "tutor", Method: "GET", Path: "/h5p/contents/new/edit",
			Status: 200, JSON: map[string]any{
				"success": true, "data.contentId": "new", "data.library": "",
				"data.metadata": map[string]any{}, "data.params": map[string]any{},
				"data.editor": map[string]any{
					"ajaxPath": "/h5p/ajax?action=", "filesPath": "/h5p/temp-files", "libraryUrl": "/h5p/editor/",
					"contentRelUrl": "../content/", "language": "en",
					"apiVersion": map[string]any{"majorVersion": 1, "minorVersion": core.Minor},
				},
			}})
		if fresh.Editor.APIVersion.MinorVersion != 24 {
			t.Errorf("default core API minor: %+v", fresh.Editor)
		}

		got := apitest.Must(env.ClientAs("").GetH5PContentsID(t.Context(), id))(t)
		res := apitest.RunOne(t, env, apitest.Scenario{Name: "existing", As: "tutor", Method: "GET",
			Path: "/h5p/contents/" + id + "/edit?language=pt-br", Status: 200, JSON: map[string]any{
				"data.contentId": id, "data.library": library,
				"data.params": got.Parameters, "data.metadata": got.Metadata,
				"data.editor.filesPath": "/h5p/content/" + id, "data.editor.language": "pt-br",
				"data.editor.contentRelUrl": "../content/", "data.params.question": "<p>Edit me?</p>",
				"data.metadata.title": "Edit me",
			}})
		if res.String("data.library") == "" {
			t.Errorf("library missing: %s", res.Body)
		}
		apitest.RunOne(t, env, apitest.Scenario{Name: "bad language", As: "tutor", Method: "GET",
			Path: "/h5p/contents/new/edit?language=%3Cscript%3E", Status: 422})

		// The editor's apiVersion follows the supported core API.
		set := env.Server.H5P.Store.Settings()
		set.CoreAPI.Minor = 19
		env.Server.H5P.Store.SetSettings(set)
		apitest.RunOne(t, env, apitest.Scenario{Name: "core 1.19", As: "tutor", Method: "GET", Path: "/h5p/contents/new/edit",
			Status: 200, JSON: map[string]any{"data.editor.apiVersion.minorVersion": 19}})
	})
}

func TestContentParams(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		library := trueFalseLibrary(t, env, installTrueFalse(t, env))
		id := createAs(t, env, env.As("tutor").Token, library, "Params")
		for _, as := range []string{"", "student", "tutor", "admin"} {
			apitest.RunOne(t, env, apitest.Scenario{Name: "params as " + as, As: as, Method: "GET", Path: "/h5p/params/" + id,
				Status: 200, JSON: map[string]any{
					"success": true, "data.library": library, "data.params.question": "<p>Params?</p>",
					"data.params.correct": "true", "data.metadata.title": "Params",
					"data.metadata.mainLibrary": "H5P.TrueFalse",
				}})
		}
		apitest.RunOne(t, env, apitest.Scenario{Name: "unknown", Method: "GET", Path: "/h5p/params/999999", Status: 404,
			JSON: map[string]any{"success": false}})
		apitest.RunOne(t, env, apitest.Scenario{Name: "not an id", Method: "GET", Path: "/h5p/params/abc", Status: 404})
	})
}
