// Package interactivetest builds interactive packages and upload forms
// for tests.
package interactivetest

import (
	"archive/zip"
	"bytes"
	"mime/multipart"
	"testing"
)

// Manifest is a valid manifest of three steps with the entry index.html.
const Manifest = `{"title":"Pendulum","entry":"index.html","steps":[{"id":"intro","title":"Intro"},` +
	`{"id":"swing","title":"Swing"},{"id":"done","title":"Done"}]}`

// Page is a small entry page.
const Page = `<!doctype html><title>App</title><p>App</p>`

// Zip packs files (path to content) into a .zip archive.
func Zip(t testing.TB, files map[string]string) []byte {
	t.Helper()
	var b bytes.Buffer
	w := zip.NewWriter(&b)
	for name, body := range files {
		f, err := w.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		f.Write([]byte(body))
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// Form is a multipart body with a file field named field and text fields.
func Form(t testing.TB, field, name string, data []byte, fields map[string]string) ([]byte, string) {
	t.Helper()
	var b bytes.Buffer
	w := multipart.NewWriter(&b)
	for k, v := range fields {
		w.WriteField(k, v)
	}
	if field != "" {
		part, err := w.CreateFormFile(field, name)
		if err != nil {
			t.Fatal(err)
		}
		part.Write(data)
	}
	w.Close()
	return b.Bytes(), w.FormDataContentType()
}

// Upload is the upload form of a package of the manifest and entry page.
func Upload(t testing.TB, manifest string) ([]byte, string) {
	return Form(t, "file", "app.zip", Zip(t, map[string]string{"lms-interactive.json": manifest, "index.html": Page}), nil)
}
