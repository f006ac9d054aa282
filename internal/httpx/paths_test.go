package httpx

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestDocumentAs(t *testing.T) {
	mux := http.NewServeMux()
	api := NewAPI(mux, Info{Title: "t", Version: "1"})
	type in struct {
		Key string `path:"key"`
	}
	type out struct {
		Body struct {
			Key string `json:"key"`
		}
	}
	h := func(_ context.Context, i *in) (*out, error) {
		o := &out{}
		o.Body.Key = i.Key
		return o, nil
	}
	Handle(api, Route{Method: http.MethodGet, Path: "/x/{key...}", Summary: "x"}, h)
	DocumentAs(api, http.MethodGet, "/x/{key...}", "/x/{key}", "")
	Handle(api, Route{Method: http.MethodPost, Path: "/y/{$}", Summary: "y"}, h)
	DocumentAs(api, http.MethodPost, "/y/{$}", "/y/", "post-y-slash")
	Handle(api, Route{Method: http.MethodPost, Path: "/y", Summary: "y"}, h)

	paths := api.OpenAPI().Paths
	if paths["/x/{key...}"] != nil || paths["/x/{key}"] == nil || paths["/x/{key}"].Get.Path != "/x/{key}" {
		t.Errorf("wildcard path not moved: %v", paths)
	}
	if paths["/y/"] == nil || paths["/y/"].Post.OperationID != "post-y-slash" || paths["/y"] == nil {
		t.Errorf("slash path: %v", paths)
	}
	rec := httptest.NewRecorder()
	mux.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/x/a/b%20c.pdf", nil))
	if rec.Code != 200 || rec.Body.String() != `{"key":"a/b c.pdf"}`+"\n" {
		t.Errorf("wildcard route: %d %s", rec.Code, rec.Body)
	}
	rec = httptest.NewRecorder()
	mux.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/y/extra", nil))
	if rec.Code != 404 {
		t.Errorf("{$} pattern matched a subtree: %d", rec.Code)
	}
}
