package topics

import (
	"bytes"
	"context"
	"encoding/json"
	"mime/multipart"
	"os"
	"strings"
	"testing"

	"github.com/lms-platform/lms/internal/apperr"
)

func multipartOf(t testing.TB, fields map[string]string, fileField, fileName string, data []byte) rawBody {
	var b bytes.Buffer
	w := multipart.NewWriter(&b)
	for k, v := range fields {
		w.WriteField(k, v)
	}
	if fileField != "" {
		part, _ := w.CreateFormFile(fileField, fileName)
		part.Write(data)
	}
	w.Close()
	return rawBody{contentType: w.FormDataContentType(), r: &b}
}

func TestReadFormEncodings(t *testing.T) {
	ctx := context.Background()
	lim := formLimits{values: 1 << 10, fileCap: fixedCap(10)}
	f, err := readForm(ctx, rawBody{contentType: "application/json", r: strings.NewReader(`{"lesson":3,"value":{"a":1}}`)}, lim)
	if err != nil || string(f.values["lesson"]) != "3" || string(f.values["value"]) != `{"a":1}` {
		t.Fatalf("json: %v %v", f, err)
	}
	f, err = readForm(ctx, rawBody{contentType: "application/x-www-form-urlencoded", r: strings.NewReader("title=a+b&value=plain")}, lim)
	if err != nil || string(f.values["title"]) != `"a b"` || string(f.values["value"]) != `"plain"` {
		t.Fatalf("urlencoded: %v %v", f.values, err)
	}
	f, err = readForm(ctx, multipartOf(t, map[string]string{"title": "T", "value": "[1,2]"}, "file", "a.pdf", []byte("0123456789")), lim)
	if err != nil {
		t.Fatal(err)
	}
	file, _, ok := f.file("file")
	if !ok || file.Size != 10 || file.Name != "a.pdf" || string(f.values["value"]) != "[1,2]" {
		t.Fatalf("multipart: %+v %v", file, f.values)
	}
	path := f.files["file"].path
	f.Close()
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Error("spooled file left after Close")
	}

	cases := map[string]struct {
		body rawBody
		kind apperr.Kind
	}{
		"file over cap":     {multipartOf(t, nil, "file", "a.pdf", []byte("0123456789X")), apperr.TooLarge},
		"json over cap":     {rawBody{contentType: "application/json", r: strings.NewReader(`{"a":"` + strings.Repeat("x", 2000) + `"}`)}, apperr.TooLarge},
		"fields over cap":   {multipartOf(t, map[string]string{"a": strings.Repeat("x", 2000)}, "", "", nil), apperr.TooLarge},
		"not json":          {rawBody{contentType: "application/json", r: strings.NewReader(`{`)}, apperr.BadRequest},
		"json array":        {rawBody{contentType: "application/json", r: strings.NewReader(`[1]`)}, apperr.Invalid},
		"other type":        {rawBody{contentType: "text/plain", r: strings.NewReader(`x`)}, apperr.UnsupportedMedia},
		"broken multipart":  {rawBody{contentType: "multipart/form-data; boundary=zz", r: strings.NewReader("--zz\r\nbroken")}, apperr.BadRequest},
		"multipart no bnd.": {rawBody{contentType: "multipart/form-data", r: strings.NewReader("")}, apperr.UnsupportedMedia},
	}
	for name, c := range cases {
		if _, err := readForm(ctx, c.body, lim); apperr.KindOf(err) != c.kind {
			t.Errorf("%s: %v, want %v", name, err, c.kind)
		}
	}
}

func TestFieldReader(t *testing.T) {
	f := &form{values: map[string]json.RawMessage{"a": json.RawMessage(`"true"`), "b": json.RawMessage(`0`),
		"n": json.RawMessage(`"12"`), "x": json.RawMessage(`"x"`), "d": json.RawMessage(`1.5`), "canSkip": json.RawMessage(`"on"`)}}
	r := newFieldReader(f)
	if v := r.boolean("a"); v == nil || !*v {
		t.Error("a")
	}
	if v := r.boolean("b"); v == nil || *v {
		t.Error("b")
	}
	if v := r.boolean("can_skip", "canSkip"); v == nil || !*v {
		t.Error("alias")
	}
	if v := r.integer("n"); v == nil || *v != 12 {
		t.Error("n")
	}
	if v := r.text(10, "d"); v == nil || *v != "1.5" {
		t.Error("d")
	}
	if r.integer("x") != nil || r.boolean("x") != nil || r.err() == nil {
		t.Error("x accepted")
	}
}

// FuzzReadForm feeds arbitrary multipart bodies: every outcome is a form
// or an error with a kind, and nothing spooled is left behind.
func FuzzReadForm(f *testing.F) {
	f.Add([]byte("--b\r\nContent-Disposition: form-data; name=\"title\"\r\n\r\nT\r\n--b--\r\n"))
	f.Add([]byte("--b\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.pdf\"\r\n\r\n%PDF-\r\n--b--\r\n"))
	f.Add([]byte("--b\r\n\r\n--b--"))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		t.Setenv("TMPDIR", dir)
		form, err := readForm(context.Background(), rawBody{contentType: "multipart/form-data; boundary=b", r: bytes.NewReader(data)},
			formLimits{values: 1 << 10, fileCap: fixedCap(1 << 10)})
		if err != nil && apperr.As(err) == nil {
			t.Fatalf("error without a kind: %v", err)
		}
		form.Close()
		if entries, _ := os.ReadDir(dir); len(entries) != 0 {
			t.Fatalf("spooled files left: %v", entries)
		}
	})
}
