package h5p_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/lms-platform/lms/internal/apitest"
)

// The REST routes and the player's and editor's routes are in the API's
// OpenAPI document with what their types cannot say (streamed bodies and
// answers, HTML pages, package problems, the internal token); the file
// routes and the editor's AJAX endpoint are not.
func TestRESTRoutesDescribed(t *testing.T) {
	env := apitest.New(t, "sqlite", apitest.Options{})
	res := env.Do(apitest.Request{Method: "GET", Path: "/api/openapi.json"})
	var doc struct {
		Paths      map[string]map[string]json.RawMessage `json:"paths"`
		Components struct {
			SecuritySchemes map[string]struct {
				In   string `json:"in"`
				Name string `json:"name"`
			} `json:"securitySchemes"`
			Schemas map[string]struct {
				Properties map[string]json.RawMessage `json:"properties"`
			} `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(res.Body, &doc); err != nil {
		t.Fatal(err)
	}
	op := func(method, path string) map[string]any {
		var out map[string]any
		if err := json.Unmarshal(doc.Paths[path][method], &out); err != nil {
			t.Fatalf("%s %s is not described: %v", method, path, err)
		}
		return out
	}
	text := func(v any) string {
		b, _ := json.Marshal(v)
		return string(b)
	}
	up := op("post", "/h5p/contents/upload")
	if body := text(up["requestBody"]); !strings.Contains(body, `"multipart/form-data"`) || !strings.Contains(body, `"required":["h5p_file"]`) {
		t.Errorf("upload body: %s", body)
	}
	if resp := text(up["responses"]); !strings.Contains(resp, `"422":{"content":{"application/json":{"schema":{"$ref":"#/components/schemas/PackageErrorBody"}}}`) {
		t.Errorf("upload answers: %s", resp)
	}
	if body := text(op("patch", "/h5p/libraries/{uber}")["requestBody"]); !strings.Contains(body, `RestrictedBody`) {
		t.Errorf("library patch body: %s", body)
	}
	if resp := text(op("get", "/h5p/contents/{id}/download")["responses"]); !strings.Contains(resp, `"application/zip"`) {
		t.Errorf("download answers: %s", resp)
	}
	if resp := text(op("get", "/h5p/contents/{id}")["responses"]); !strings.Contains(resp, `EnvelopeContentDetail`) {
		t.Errorf("content answers: %s", resp)
	}
	// The answers that embed the content's summary list its fields (the
	// typed client reads the new content's id and title from them).
	for schema, field := range map[string]string{"UploadedContent": "contentId", "ContentDetail": "title"} {
		if _, ok := doc.Components.Schemas[schema].Properties[field]; !ok {
			t.Errorf("%s does not describe %s", schema, field)
		}
	}
	if sec := text(op("post", "/h5p/contents/orphans/delete")["security"]); sec != `[{"internalToken":[]}]` {
		t.Errorf("orphans security: %s", sec)
	}
	if s := doc.Components.SecuritySchemes["internalToken"]; s.In != "header" || s.Name != "X-Internal-Token" {
		t.Errorf("internal token scheme: %+v", s)
	}
	if resp := text(op("get", "/h5p/health")["responses"]); !strings.Contains(resp, `"503"`) {
		t.Errorf("health answers: %s", resp)
	}
	for _, path := range []string{"/h5p/contents/{id}/play", "/h5p/contents/{id}/edit", "/h5p/params/{id}"} {
		if resp := text(op("get", path)["responses"]); !strings.Contains(resp, `"200":{"content":{"application/json"`) {
			t.Errorf("%s answers: %s", path, resp)
		}
	}
	for _, path := range []string{"/h5p/embed/play/{id}", "/h5p/embed/edit/{id}"} {
		if resp := text(op("get", path)["responses"]); !strings.Contains(resp, `"200":{"content":{"text/html"`) ||
			!strings.Contains(resp, `"text/html"`) {
			t.Errorf("%s answers: %s", path, resp)
		}
	}
	state := "/h5p/contentUserData/{contentId}/{dataType}/{subContentId}"
	for _, o := range []map[string]any{op("post", state), op("post", "/h5p/finishedData")} {
		if body := text(o["requestBody"]); !strings.Contains(body, `"application/x-www-form-urlencoded"`) {
			t.Errorf("state or result body: %s", body)
		}
	}
	op("get", state)
	op("get", "/h5p/finishedData")
	op("get", "/h5p/content-type-cache/update")
	op("post", "/h5p/content-type-cache/update")
	described := []string{"/h5p/contents", "/h5p/libraries", "/h5p/health", "/h5p/params/", "/h5p/contentUserData/",
		"/h5p/finishedData", "/h5p/embed/play/", "/h5p/embed/edit/", "/h5p/content-type-cache/"}
	for path := range doc.Paths {
		if strings.HasPrefix(path, "/h5p/") && !slices.ContainsFunc(described, func(p string) bool { return strings.HasPrefix(path, p) }) {
			t.Errorf("%s is described, but it serves files or the editor's AJAX calls", path)
		}
	}

	// The answers are those described: a refused package lists its
	// problems, a refusal of the caller is the error envelope.
	admin := env.As("admin")
	if res := upload(env, "/h5p/contents/upload", "h5p_file", admin.Token, []byte("not a zip archive")); res.Status != 422 || res.Get("success") != false ||
		res.String("errors.0.code") == "" || res.String("message") == "" {
		t.Errorf("broken package: %d %s", res.Status, res.Body)
	}
	if res := env.Do(apitest.Request{Method: "GET", Path: "/h5p/contents"}); res.Status != 401 || res.Get("success") != false ||
		res.String("message") == "" {
		t.Errorf("anonymous list: %d %s", res.Status, res.Body)
	}
	res = env.Do(apitest.Request{Method: "GET", Path: "/h5p/contents?perPage=500", Token: admin.Token})
	if res.Status != 200 || res.Get("success") != true || res.Number("meta.per_page") != 100 || res.Number("meta.last_page") != 1 {
		t.Errorf("list: %d %s", res.Status, res.Body)
	}
}
