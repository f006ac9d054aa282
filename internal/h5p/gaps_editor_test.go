package h5p_test

import (
	"reflect"
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
			// Raw: every answer, refusals too, must say Cache-Control:
			// no-store, which the client does not show.
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
		system := env.ClientAs("").WithHeader("X-Internal-Token", env.Server.Config.InternalKey)
		if got := apitest.Must(system.GetH5PContentsIDEdit(t.Context(), tutorOwn, client.GetH5PContentsIDEditParams{}))(t); got.ContentID != tutorOwn {
			t.Errorf("system: content %q, want %s", got.ContentID, tutorOwn)
		}
	})
}

func TestEditModel(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		library := trueFalseLibrary(t, env, installTrueFalse(t, env))
		tutor := env.As("tutor")
		id := createAs(t, env, tutor.Token, library, "Edit me")
		core := env.Server.H5P.Store.CoreAPI()

		fresh := apitest.Must(env.UserClient(tutor).GetH5PContentsIDEdit(t.Context(), "new", client.GetH5PContentsIDEditParams{}))(t)
		// Raw: the new content's model is compared whole, so a field beyond
		// those the H5P editor reads fails too.
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

		ctx, author := t.Context(), env.UserClient(tutor)
		got := apitest.Must(env.ClientAs("").GetH5PContentsID(ctx, id))(t)
		edit := apitest.Must(author.GetH5PContentsIDEdit(ctx, id, client.GetH5PContentsIDEditParams{Language: client.Ptr("pt-br")}))(t)
		question, _ := edit.Params.(map[string]any)["question"].(string)
		title, _ := edit.Metadata.(map[string]any)["title"].(string)
		if edit.ContentID != id || edit.Library != library || edit.Library == "" ||
			!reflect.DeepEqual(edit.Params, got.Parameters) || !reflect.DeepEqual(edit.Metadata, got.Metadata) ||
			edit.Editor.FilesPath != "/h5p/content/"+id || edit.Editor.Language != "pt-br" ||
			edit.Editor.ContentRelURL != "../content/" || question != "<p>Edit me?</p>" || title != "Edit me" {
			t.Errorf("existing: %+v", edit)
		}
		_, err := author.GetH5PContentsIDEdit(ctx, "new", client.GetH5PContentsIDEditParams{Language: client.Ptr("<script>")})
		apitest.Refused(t, err, 422)

		// The editor's apiVersion follows the supported core API.
		set := env.Server.H5P.Store.Settings()
		set.CoreAPI.Minor = 19
		env.Server.H5P.Store.SetSettings(set)
		if v := apitest.Must(author.GetH5PContentsIDEdit(ctx, "new", client.GetH5PContentsIDEditParams{}))(t).Editor.APIVersion; v.MinorVersion != 19 {
			t.Errorf("core 1.19: editor apiVersion %+v", v)
		}
	})
}

func TestContentParams(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		library := trueFalseLibrary(t, env, installTrueFalse(t, env))
		id := createAs(t, env, env.As("tutor").Token, library, "Params")
		for _, as := range []string{"", "student", "tutor", "admin"} {
			got, err := env.ClientAs(as).GetH5PParamsID(t.Context(), id)
			if err != nil {
				t.Fatalf("params as %q: %v", as, err)
			}
			params, _ := got.Params.(map[string]any)
			metadata, _ := got.Metadata.(map[string]any)
			if got.Library != library || params["question"] != "<p>Params?</p>" || params["correct"] != "true" ||
				metadata["title"] != "Params" || metadata["mainLibrary"] != "H5P.TrueFalse" {
				t.Errorf("params as %q: %+v", as, got)
			}
		}
		for _, unknown := range []string{"999999", "abc"} {
			_, err := env.ClientAs("").GetH5PParamsID(t.Context(), unknown)
			apitest.Refused(t, err, 404)
		}
	})
}
