package httpx

import (
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"strings"
	"testing"
)

func TestAcceptsGzip(t *testing.T) {
	for header, want := range map[string]bool{
		"":                       false,
		"gzip":                   true,
		"GZIP":                   true,
		"deflate, gzip;q=1.0":    true,
		"gzip;q=0.5, br":         true,
		"br, deflate":            false,
		"gzip;q=0":               false,
		"gzip; q=0.000":          false,
		"*":                      true,
		"identity, *;q=0":        false,
		"x-gzip":                 true,
		"gzipped":                false,
		"gzip;level=1":           true,
		" deflate ,  gzip ; q=1": true,
	} {
		if got := acceptsGzip(header); got != want {
			t.Errorf("acceptsGzip(%q) = %v, want %v", header, got, want)
		}
	}
}

func TestBodyEncoded(t *testing.T) {
	large := []byte(`{"data":"` + strings.Repeat("lesson ", 1000) + `"}`)
	gzipOK := contextWithInfo(context.Background(), &requestInfo{acceptEncoding: "gzip"})
	kept := KeptBody(large)
	b, enc := kept.Encoded(gzipOK)
	if enc != "gzip" || len(b) >= len(large)/4 {
		t.Fatalf("kept large body: encoding %q, %d bytes of %d", enc, len(b), len(large))
	}
	r, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	if plain, err := io.ReadAll(r); err != nil || !bytes.Equal(plain, large) {
		t.Fatalf("gzip does not decode to the body: %v", err)
	}
	if again, _ := kept.Encoded(gzipOK); &again[0] != &b[0] {
		t.Error("the gzip encoding was made again")
	}
	for name, body := range map[string]*Body{"fresh": FreshBody(large), "small": KeptBody([]byte(`{"data":1}`))} {
		if got, enc := body.Encoded(gzipOK); enc != "" || !bytes.Equal(got, body.JSON) {
			t.Errorf("%s body: encoding %q", name, enc)
		}
	}
	for name, ctx := range map[string]context.Context{
		"gzip not accepted": contextWithInfo(context.Background(), &requestInfo{acceptEncoding: "br"}),
		"no request":        context.Background(),
	} {
		if got, enc := kept.Encoded(ctx); enc != "" || !bytes.Equal(got, large) {
			t.Errorf("%s: encoding %q", name, enc)
		}
	}
}
