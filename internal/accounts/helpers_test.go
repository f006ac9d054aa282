package accounts_test

import (
	"bytes"
	"context"
	"image"
	"image/png"
	"mime/multipart"
	"strconv"
	"testing"

	"github.com/lms-platform/lms/internal/apitest"
)

// call sends one request with a token and fails the test unless the
// status is want.
func call(t *testing.T, env *apitest.Env, want int, method, path, token string, body any) *apitest.Response {
	t.Helper()
	res := env.Do(apitest.Request{Method: method, Path: path, Token: token, Body: body})
	if res.Status != want {
		t.Fatalf("%s %s: status %d, want %d; body %s", method, path, res.Status, want, res.Body)
	}
	return res
}

func id(n int64) string { return strconv.FormatInt(n, 10) }

// category inserts a category straight into the tenant database; the
// category routes belong to another capability.
func category(t *testing.T, env *apitest.Env, name string) int64 {
	t.Helper()
	tenant, release := env.OpenTenant(env.Tenant)
	defer release()
	var cid int64
	now := env.Clock.Now()
	if err := tenant.DB.QueryRowContext(context.Background(), `INSERT INTO categories (name, slug, created_at, updated_at)
		VALUES ($1, $2, $3, $3) RETURNING id`, name, name, now).Scan(&cid); err != nil {
		t.Fatal(err)
	}
	return cid
}

// count runs a COUNT query on the tenant database.
func count(t *testing.T, env *apitest.Env, query string, args ...any) int {
	t.Helper()
	tenant, release := env.OpenTenant(env.Tenant)
	defer release()
	var n int
	if err := tenant.DB.QueryRowContext(context.Background(), query, args...).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// blobExists reports whether the tenant's blob store holds key.
func blobExists(t *testing.T, env *apitest.Env, key string) bool {
	t.Helper()
	tenant, release := env.OpenTenant(env.Tenant)
	defer release()
	_, err := tenant.Blob.Stat(context.Background(), key)
	return err == nil
}

func pngImage(t *testing.T) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := png.Encode(&b, image.NewRGBA(image.Rect(0, 0, 2, 2))); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// form builds a multipart body with one file field.
func form(t *testing.T, field string, data []byte) ([]byte, string) {
	t.Helper()
	var b bytes.Buffer
	w := multipart.NewWriter(&b)
	part, err := w.CreateFormFile(field, "upload.bin")
	if err != nil {
		t.Fatal(err)
	}
	part.Write(data)
	w.Close()
	return b.Bytes(), w.FormDataContentType()
}

// upload posts data as the multipart field to path.
func upload(t *testing.T, env *apitest.Env, path, token, field string, data []byte) *apitest.Response {
	t.Helper()
	body, ctype := form(t, field, data)
	return env.Do(apitest.Request{Method: "POST", Path: path, Token: token, Body: body, Type: ctype})
}
