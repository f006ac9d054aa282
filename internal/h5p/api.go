package h5p

import (
	"net/http"
	"reflect"

	"github.com/danielgtaylor/huma/v2"
	"github.com/danielgtaylor/huma/v2/adapters/humago"

	"github.com/lms-platform/lms/internal/httpx"
)

// The H5P service's REST routes are huma operations, described in the
// API's OpenAPI document and answered through httpx's envelope and error
// mapping, but served by the service's own mux behind its own tenancy and
// authentication. The H5P client's AJAX endpoints stay plain handlers.

// restAPI is a huma API whose operations are described in doc's document
// and served by mux, each request passing through wrap first.
func restAPI(doc huma.API, mux *http.ServeMux, wrap httpx.Middleware) huma.API {
	cfg := huma.DefaultConfig("", "")
	cfg.OpenAPI = doc.OpenAPI()
	cfg.OpenAPIPath, cfg.DocsPath, cfg.SchemasPath = "", "", ""
	cfg.CreateHooks = nil
	api := huma.NewAPI(cfg, humago.NewAdapter(mux, ""))
	// wrap answers its refusals itself and passes on a request with more
	// context (tenant, caller); it keeps the writer it is given, which huma
	// goes on writing to.
	api.UseMiddleware(func(ctx huma.Context, next func(huma.Context)) {
		r, w := humago.Unwrap(ctx)
		wrap(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
			next(huma.WithContext(ctx, r.Context()))
		})).ServeHTTP(w, r.WithContext(ctx.Context()))
	})
	return api
}

// ownDocument is the document of a service built without the API's (a
// service on its own): its routes are described there and nowhere else.
func ownDocument() huma.API {
	return httpx.NewAPI(http.NewServeMux(), httpx.Info{Title: "H5P service", Version: "1"})
}

// rawRequest gives a handler the request itself, for the bodies it reads
// as a stream (packages, content parameters) instead of through huma's
// buffered decoding.
type rawRequest struct {
	r *http.Request
}

func (in *rawRequest) Resolve(ctx huma.Context) []error {
	r, _ := humago.Unwrap(ctx)
	in.r = r.WithContext(ctx.Context())
	return nil
}

// internalScheme names the X-Internal-Token the platform's own parts send.
const internalScheme = "internalToken"

// describe amends the description of a registered operation with what its
// input and output types cannot say: bodies read as streams, answers
// written as streams, errors of another shape.
func describe(api huma.API, method, path string, amend func(op *huma.Operation, schema func(v any) *huma.Schema)) {
	item := api.OpenAPI().Paths[path]
	op := map[string]*huma.Operation{"GET": item.Get, "POST": item.Post, "PATCH": item.Patch, "DELETE": item.Delete}[method]
	registry := api.OpenAPI().Components.Schemas
	amend(op, func(v any) *huma.Schema { return registry.Schema(reflect.TypeOf(v), true, "") })
}

// jsonBody describes a JSON request body of v's shape.
func jsonBody(schema *huma.Schema) *huma.RequestBody {
	return &huma.RequestBody{Required: true, Content: map[string]*huma.MediaType{"application/json": {Schema: schema}}}
}

// packageBody describes a multipart body carrying an .h5p package in field.
func packageBody(field string) *huma.RequestBody {
	return &huma.RequestBody{Required: true, Content: map[string]*huma.MediaType{"multipart/form-data": {Schema: &huma.Schema{
		Type:     "object",
		Required: []string{field},
		Properties: map[string]*huma.Schema{field: {Type: "string", Format: "binary",
			Description: "The .h5p package (a zip archive)."}},
	}}}}
}

// packageErrors describes the answers of a refused package: 422 naming
// every problem; 413 when the upload is too large, naming the problem when
// it is one inside the package (a file or the parameters over their cap).
func packageErrors(op *huma.Operation, schema func(v any) *huma.Schema) {
	problems := schema(packageErrorBody{})
	op.Responses["413"] = &huma.Response{Description: "The upload or a part of the package is too large.",
		Content: map[string]*huma.MediaType{"application/json": {Schema: &huma.Schema{
			AnyOf: []*huma.Schema{problems, schema(httpx.ErrorBody{})}}}}}
	op.Responses["422"] = &huma.Response{Description: "The package is invalid; errors lists every problem.",
		Content: map[string]*huma.MediaType{"application/json": {Schema: problems}}}
}
