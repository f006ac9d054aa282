package server

import (
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/lms-platform/lms/internal/httpx"
)

// h5pScopes are the Scopes of the H5P service's API operations, kept here
// only until internal/h5p declares them on its routes as every other
// package does (issue 28; the H5P routes are being rewritten in the house
// style meanwhile). Delete this file and its call in buildAPI then. The
// service applies the same scopes to its other routes through the
// permissions a token keeps (tokens.Scopes): h5p:read lists and reads,
// h5p:write changes.
var h5pScopes = []struct {
	method, path string
	scope        httpx.Scope
}{
	{http.MethodGet, "/h5p/health", httpx.AnyToken},
	{http.MethodGet, "/h5p/contents", "h5p:read"},
	{http.MethodPost, "/h5p/contents", "h5p:write"},
	{http.MethodPost, "/h5p/contents/upload", "h5p:write"},
	{http.MethodGet, "/h5p/contents/{id}", "h5p:read"},
	{http.MethodPatch, "/h5p/contents/{id}", "h5p:write"},
	{http.MethodDelete, "/h5p/contents/{id}", "h5p:write"},
	{http.MethodGet, "/h5p/contents/{id}/download", "h5p:read"},
	{http.MethodGet, "/h5p/libraries", "h5p:read"},
	{http.MethodPost, "/h5p/libraries", "h5p:write"},
	{http.MethodGet, "/h5p/libraries/{uber}", "h5p:read"},
	{http.MethodPatch, "/h5p/libraries/{uber}", "h5p:write"},
	{http.MethodDelete, "/h5p/libraries/{uber}", "h5p:write"},
	// Deleting orphans takes the internal token only, never a scoped one.
	{http.MethodPost, "/h5p/contents/orphans/delete", httpx.NoTokens},
}

// scopeH5P gives the H5P operations registered without a Scope theirs
// from h5pScopes; an operation that names its own keeps it.
func scopeH5P(api huma.API) {
	for _, r := range h5pScopes {
		item := api.OpenAPI().Paths[r.path]
		if item == nil {
			continue
		}
		op := map[string]*huma.Operation{http.MethodGet: item.Get, http.MethodPost: item.Post,
			http.MethodPatch: item.Patch, http.MethodDelete: item.Delete}[r.method]
		if op != nil && httpx.ScopeOf(op) == "" {
			// The key of httpx.Route's Scope in the operation's metadata.
			op.Metadata["lms-scope"] = r.scope
		}
	}
}
