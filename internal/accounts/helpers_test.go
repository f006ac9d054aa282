package accounts_test

import (
	"bytes"
	"context"
	"mime/multipart"
	"strconv"
	"testing"

	"github.com/lms-platform/lms/client"
	"github.com/lms-platform/lms/internal/apitest"
)

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

// avatarFile is an upload of data as the client sends it.
func avatarFile(data []byte) *client.File {
	return &client.File{Name: "upload.bin", Content: bytes.NewReader(data)}
}

// upload posts data as the multipart field to path. Raw, for refusals of
// the body itself (a wrong field name, a body over the cap); other uploads
// go through the client with avatarFile.
func upload(t *testing.T, env *apitest.Env, path, token, field string, data []byte) *apitest.Response {
	t.Helper()
	body, ctype := form(t, field, data)
	return env.Do(apitest.Request{Method: "POST", Path: path, Token: token, Body: body, Type: ctype})
}
