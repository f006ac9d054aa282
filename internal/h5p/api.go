package h5p

import (
	"context"
	"encoding/json"
	"net/http"
	"reflect"

	"github.com/danielgtaylor/huma/v2"
	"github.com/danielgtaylor/huma/v2/adapters/humago"

	"github.com/lms-platform/lms/internal/httpx"
)

// The H5P service's routes are huma operations, described in the API's
// OpenAPI document and answered through httpx's envelope and error
// mapping, but served by the service's own mux behind its own tenancy and
// authentication: the REST routes, the player's and editor's models, the
// states and results, and the embed pages (HTML). Only the routes serving
// files and the editor's AJAX endpoint stay plain handlers.

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
	// w only lets an oversized body close the connection.
	w http.ResponseWriter
}

func (in *rawRequest) Resolve(ctx huma.Context) []error {
	r, w := humago.Unwrap(ctx)
	in.r, in.w = r.WithContext(ctx.Context()), w
	return nil
}

// internalScheme names the X-Internal-Token the platform's own parts send.
const internalScheme = "internalToken"

// describe amends the description of a registered operation with what its
// input and output types cannot say: bodies read as streams, answers
// written as streams, errors of another shape.
func describe(api huma.API, method, path string, amend func(op *huma.Operation, schema func(v any) *huma.Schema)) {
	op := httpx.OperationOf(api, method, path)
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

// noStore marks every answer of the wrapped routes as not to be stored.
func noStore(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-store")
		next.ServeHTTP(w, r)
	})
}

// ajaxAnswer is the answer of the H5P client's AJAX endpoints: the
// envelope with data before message, encoded as the plain handlers encode
// it (httpx.WriteJSON), the bytes the H5P client has always read.
type ajaxAnswer[T any] struct {
	Body ajaxBody[T]
}

type ajaxBody[T any] struct {
	Success bool   `json:"success"`
	Data    T      `json:"data"`
	Message string `json:"message"`
}

// MarshalJSON escapes HTML as encoding/json does by default; huma's
// encoder does not.
func (b ajaxBody[T]) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Success bool   `json:"success"`
		Data    T      `json:"data"`
		Message string `json:"message"`
	}{b.Success, b.Data, b.Message})
}

// ajaxOK answers data in the AJAX envelope.
func ajaxOK[T any](data T) (*ajaxAnswer[T], error) {
	return &ajaxAnswer[T]{Body: ajaxBody[T]{Success: true, Data: data}}, nil
}

// rawAnswer streams the envelope whose data is the object v with the raw
// fields added to it (writeDataRaw): stored parameters are written as they
// are.
func rawAnswer(ctx context.Context, v any, raw ...rawField) *huma.StreamResponse {
	return &huma.StreamResponse{Body: func(hctx huma.Context) {
		r, w := humago.Unwrap(hctx)
		writeDataRaw(w, r.WithContext(ctx), http.StatusOK, v, raw...)
	}}
}

// jsonAnswer describes the 200 answer of a route streaming the envelope of
// data T (rawAnswer).
func jsonAnswer[T any](op *huma.Operation, schema func(v any) *huma.Schema) {
	var data T
	op.Responses["200"] = &huma.Response{Description: "OK", Content: map[string]*huma.MediaType{
		"application/json": {Schema: schema(httpx.Envelope[T]{Data: data})}}}
}

// formBody describes a form body of schema's fields, sent urlencoded,
// multipart or as a JSON object.
func formBody(schema *huma.Schema) *huma.RequestBody {
	return &huma.RequestBody{Required: true, Content: map[string]*huma.MediaType{
		"application/x-www-form-urlencoded": {Schema: schema},
		"multipart/form-data":               {Schema: schema},
		"application/json":                  {Schema: schema},
	}}
}
