package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lms-platform/lms/internal/server"
)

// TestClientIsCurrent fails when the committed client differs from what
// the routes' OpenAPI document generates: run `make client` and commit.
func TestClientIsCurrent(t *testing.T) {
	doc, err := server.OpenAPI()
	if err != nil {
		t.Fatal(err)
	}
	want, err := Generate(doc)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join("..", "..", "client", "api.gen.go"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("client/api.gen.go is not what the OpenAPI document generates (first difference at line %d): run `make client` and commit the result",
			firstDiffLine(got, want))
	}
}

// TestGenerateTolerates checks shapes the API does not use today but the
// document may come to hold: path-level parameters, 3.0 nullable, header
// parameters, a raw body; and the method is named after the path, not
// after its parameter's name ({thing} gives GetThingsID).
func TestGenerateTolerates(t *testing.T) {
	doc := []byte(`{"openapi":"3.0.3","paths":{
	  "/api/things/{thing}":{
	    "parameters":[{"name":"thing","in":"path","required":true,"schema":{"type":"integer"}}],
	    "get":{"operationId":"get-thing","parameters":[{"name":"X-Trace","in":"header","schema":{"type":"string"}},
	      {"name":"tags","in":"query","explode":false,"schema":{"type":"array","items":{"type":"string"}}}],
	      "responses":{"200":{"content":{"application/json":{"schema":{"$ref":"#/components/schemas/EnvelopeThing"}}}}}},
	    "put":{"operationId":"put-thing","requestBody":{"content":{"application/octet-stream":{"schema":{"type":"string","format":"binary"}}}},
	      "responses":{"204":{}}}}},
	  "components":{"schemas":{
	    "EnvelopeThing":{"type":"object","properties":{"success":{"type":"boolean"},"message":{"type":"string"},"data":{"$ref":"#/components/schemas/Thing"}}},
	    "Thing":{"type":"object","required":["id","note"],"properties":{"id":{"type":"integer"},"note":{"type":"string","nullable":true},"self":{"$ref":"#/components/schemas/Thing"}}}}}}`)
	src, err := Generate(doc)
	if err != nil {
		t.Fatal(err)
	}
	// gofmt aligns fields; compare with single spaces.
	flat := strings.Join(strings.Fields(string(src)), " ")
	for _, want := range []string{
		"func (c *Client) GetThingsID(ctx context.Context, thing int64, params GetThingsIDParams) (*Thing, error)",
		"func (c *Client) PutThingsID(ctx context.Context, thing int64, body io.Reader, contentType string) (*http.Response, error)",
		`setHeader(r.header, "X-Trace", params.XTrace)`,
		`addQueryList(r.query, "tags", params.Tags)`,
		"Note *string `json:\"note\"`",
		"Self *Thing `json:\"self,omitzero\"`",
	} {
		if !strings.Contains(flat, want) {
			t.Errorf("generated code lacks %q:\n%s", want, src)
		}
	}
}

func firstDiffLine(a, b []byte) int {
	la, lb := bytes.Split(a, []byte("\n")), bytes.Split(b, []byte("\n"))
	for i := range min(len(la), len(lb)) {
		if !bytes.Equal(la[i], lb[i]) {
			return i + 1
		}
	}
	return min(len(la), len(lb)) + 1
}
