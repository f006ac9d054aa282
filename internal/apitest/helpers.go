package apitest

import (
	"bytes"
	"context"
	"image"
	"image/png"
	"testing"
)

// Call sends one request with a token and fails the test unless the answer
// has the status want.
func (e *Env) Call(t testing.TB, want int, method, path, token string, body any) *Response {
	t.Helper()
	res := e.Do(Request{Method: method, Path: path, Token: token, Body: body})
	if res.Status != want {
		t.Fatalf("%s %s: status %d, want %d; body %s", method, path, res.Status, want, res.Body)
	}
	return res
}

// Count runs a COUNT query on the default tenant's database, to check what
// a request stored or left alone.
func (e *Env) Count(t testing.TB, query string, args ...any) int {
	t.Helper()
	tenant, release := e.OpenTenant(e.Tenant)
	defer release()
	var n int
	if err := tenant.DB.QueryRowContext(context.Background(), query, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return n
}

// BlobExists reports whether the default tenant's blob store holds key.
func (e *Env) BlobExists(t testing.TB, key string) bool {
	t.Helper()
	tenant, release := e.OpenTenant(e.Tenant)
	defer release()
	_, err := tenant.Blob.Stat(context.Background(), key)
	return err == nil
}

// PNG is a small valid PNG image for upload tests.
func PNG(t testing.TB) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := png.Encode(&b, image.NewRGBA(image.Rect(0, 0, 2, 2))); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// Tampered returns token with one character near its end changed to
// another, so that it always decodes to other bytes: in base64url the last
// character may carry only some bits, and a change there can decode to
// the same bytes; the one before it carries all six.
func Tampered(token string) string {
	i := len(token) - 2
	c := byte('A')
	if token[i] == c {
		c = 'B'
	}
	return token[:i] + string(c) + token[i+1:]
}
