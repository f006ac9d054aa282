package file

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/lms-platform/lms/internal/apperr"
	"github.com/lms-platform/lms/internal/blob"
	"github.com/lms-platform/lms/internal/content"
	"github.com/lms-platform/lms/internal/platform"
)

// Minimal files of each type: only their first bytes matter to the checks.
var (
	pngData  = append([]byte("\x89PNG\r\n\x1a\n"), bytes.Repeat([]byte{1}, 64)...)
	jpegData = append([]byte{0xFF, 0xD8, 0xFF, 0xE0}, bytes.Repeat([]byte{2}, 64)...)
	gifData  = []byte("GIF89a-rest-of-image")
	webpData = []byte("RIFF\x10\x00\x00\x00WEBPVP8 rest")
	pdfData  = []byte("%PDF-1.7\n1 0 obj\n<<>>\nendobj\n%%EOF\n")
	mp3Data  = []byte("ID3\x03\x00\x00\x00\x00\x00\x00 frames")
	oggData  = []byte("OggS\x00\x02 rest of the stream")
	mp4Data  = []byte("\x00\x00\x00\x18ftypmp42\x00\x00\x00\x00mp42isom rest")
	movData  = []byte("\x00\x00\x00\x14ftypqt  \x00\x00\x00\x00qt   rest")
	webmData = []byte("\x1A\x45\xDF\xA3\x9F\x42\x86\x81\x01\x42\xF7\x81\x01\x42\x82\x84webm rest")
	svgData  = []byte(`<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><rect width="10" height="10" fill="red"/></svg>`)
)

func upload(name string, data []byte) content.File {
	return content.File{Name: name, Size: int64(len(data)), Open: func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(data)), nil
	}}
}

func testEnv(t *testing.T) content.Env {
	t.Helper()
	store, err := blob.NewFS(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return content.Env{Tenant: &platform.Tenant{Blob: store}, FilePrefix: content.NewPrefix("content"),
		FileURL: func(key string) string { return "/signed/" + key }}
}

func stored(t *testing.T, env content.Env) []string {
	t.Helper()
	var keys []string
	env.Tenant.Blob.List(context.Background(), "", func(i blob.Info) error {
		keys = append(keys, i.Key)
		return nil
	})
	return keys
}

func buildFile(t *testing.T, k Kind, env content.Env, name string, data []byte) (Value, error) {
	t.Helper()
	raw, err := k.Build(context.Background(), env, nil, content.Input{Files: map[string]content.File{"file": upload(name, data)}})
	if err != nil {
		return Value{}, err
	}
	v, err := parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return v, nil
}

func TestAcceptedTypes(t *testing.T) {
	cases := []struct {
		kind Kind
		name string
		data []byte
		ct   string
	}{
		{PDF(), "notes.pdf", pdfData, "application/pdf"},
		{Image(), "a.png", pngData, "image/png"},
		{Image(), "a.JPG", jpegData, "image/jpeg"},
		{Image(), "a.jpeg", jpegData, "image/jpeg"},
		{Image(), "a.gif", gifData, "image/gif"},
		{Image(), "a.webp", webpData, "image/webp"},
		{Image(), "a.svg", svgData, "image/svg+xml"},
		{Audio(), "a.mp3", mp3Data, "audio/mpeg"},
		{Audio(), "a.ogg", oggData, "audio/ogg"},
		{Video(), "a.mp4", mp4Data, "video/mp4"},
		{Video(), "a.mov", movData, "video/quicktime"},
		{Video(), "a.webm", webmData, "video/webm"},
		{Video(), "a.ogg", oggData, "video/ogg"},
	}
	for _, c := range cases {
		env := testEnv(t)
		v, err := buildFile(t, c.kind, env, c.name, c.data)
		if err != nil {
			t.Errorf("%s %s: %v", c.kind.Name(), c.name, err)
			continue
		}
		if v.ContentType != c.ct || v.Size != int64(len(c.data)) || !strings.HasPrefix(v.Path, env.FilePrefix) {
			t.Errorf("%s %s: value %+v", c.kind.Name(), c.name, v)
		}
		rc, info, err := env.Tenant.Blob.Get(context.Background(), v.Path)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(rc)
		rc.Close()
		if !bytes.Equal(got, c.data) || info.ContentType != c.ct {
			t.Errorf("%s: stored %q as %s", c.name, got, info.ContentType)
		}
		if c.kind.Name() == "video" && v.Processing != Queued {
			t.Errorf("%s: processing %q, want queued", c.name, v.Processing)
		}
	}
}

func TestRefusedTypes(t *testing.T) {
	cases := []struct {
		kind Kind
		name string
		data []byte
	}{
		{PDF(), "notes.txt", []byte("plain text")},
		{PDF(), "fake.pdf", pngData},
		{PDF(), "noext", pdfData},
		{Image(), "a.png", jpegData},
		{Image(), "a.jpg", []byte("MZ\x90\x00 an executable")},
		{Image(), "a.bmp", []byte("BM image")},
		{Image(), "a.svg", pngData},
		{Image(), "a.svg", []byte(`<html><body>not svg</body></html>`)},
		{Audio(), "a.mp3", oggData},
		{Audio(), "a.wav", []byte("RIFF....WAVE")},
		{Video(), "a.mp4", webmData},
		{Video(), "a.webm", mp4Data},
		{Video(), "a.avi", mp4Data},
		{Video(), "a.mp4", []byte{}},
	}
	for _, c := range cases {
		env := testEnv(t)
		_, err := buildFile(t, c.kind, env, c.name, c.data)
		if !apperr.Is(err, apperr.Invalid) {
			t.Errorf("%s %s: %v, want 422", c.kind.Name(), c.name, err)
		}
		if keys := stored(t, env); len(keys) > 0 {
			t.Errorf("%s %s: stored %v", c.kind.Name(), c.name, keys)
		}
	}
}

func TestSizeCaps(t *testing.T) {
	for _, k := range []Kind{PDF(), Image(), Audio(), Video()} {
		env := testEnv(t)
		ext := k.Extensions()[0]
		// The size is what the upload declares (the spooled size); the
		// check comes before any byte is read.
		f := content.File{Name: "big" + ext, Size: k.MaxUpload() + 1, Open: func() (io.ReadCloser, error) {
			t.Fatal("an oversized file was read")
			return nil, nil
		}}
		_, err := k.Build(context.Background(), env, nil, content.Input{Files: map[string]content.File{"file": f}})
		if !apperr.Is(err, apperr.TooLarge) {
			t.Errorf("%s: %v, want 413", k.Name(), err)
		}
	}
	if PDF().MaxUpload() != 50<<20 || Image().MaxUpload() != 10<<20 || Audio().MaxUpload() != 100<<20 || Video().MaxUpload() != 2<<30 {
		t.Error("caps differ from the documented ones")
	}
}

func TestSVGWithScriptRefused(t *testing.T) {
	bad := []string{
		`<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>`,
		`<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"></svg>`,
		`<svg xmlns="http://www.w3.org/2000/svg"><rect onmouseover="alert(1)"/></svg>`,
		`<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink"><a xlink:href="javascript:alert(1)"><text>x</text></a></svg>`,
		`<svg xmlns="http://www.w3.org/2000/svg"><a href=" java&#x09;script:alert(1)"><text>x</text></a></svg>`,
		`<svg xmlns="http://www.w3.org/2000/svg"><foreignObject><div xmlns="http://www.w3.org/1999/xhtml">x</div></foreignObject></svg>`,
		`<svg xmlns="http://www.w3.org/2000/svg"><a><set attributeName="href" to="javascript:alert(1)"/></a></svg>`,
		`<svg xmlns="http://www.w3.org/2000/svg"><image href="data:text/html;base64,PHNjcmlwdD4="/></svg>`,
		`<svg xmlns="http://www.w3.org/2000/svg"><style>rect{background:url(javascript:alert(1))}</style></svg>`,
		`<?xml version="1.0"?><!DOCTYPE svg [<!ENTITY x "y">]><svg xmlns="http://www.w3.org/2000/svg">&x;</svg>`,
		`<svg xmlns="http://www.w3.org/2000/svg"><SCRIPT>alert(1)</SCRIPT></svg>`,
		`<svg xmlns="http://www.w3.org/2000/svg"><rect></svg>`,
	}
	for _, s := range bad {
		env := testEnv(t)
		if _, err := buildFile(t, Image(), env, "x.svg", []byte(s)); !apperr.Is(err, apperr.Invalid) {
			t.Errorf("%s: %v, want 422", s, err)
		}
		if keys := stored(t, env); len(keys) > 0 {
			t.Errorf("%s: stored %v", s, keys)
		}
	}
	ok := `<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink"><style>rect{fill:blue}</style>` +
		`<a xlink:href="https://example.com"><rect width="5" height="5"/></a><image href="data:image/png;base64,iVBORw0KGgo="/></svg>`
	if _, err := buildFile(t, Image(), testEnv(t), "ok.svg", []byte(ok)); err != nil {
		t.Errorf("safe SVG refused: %v", err)
	}
}

func TestVideoSiteURL(t *testing.T) {
	env := testEnv(t)
	raw, err := Video().Build(context.Background(), env, nil, content.Input{Fields: map[string]string{"videoSiteUrl": "https://www.youtube.com/watch?v=x"}})
	if err != nil {
		t.Fatal(err)
	}
	view, _ := Video().View(env, raw)
	v := view.(View)
	if v.URL != "https://www.youtube.com/watch?v=x" || v.Processing != Ready || v.VideoSiteURL == "" {
		t.Errorf("view %+v", v)
	}
	for _, bad := range []string{"javascript:alert(1)", "ftp://x/y.mp4", "/relative", "https://"} {
		_, err := Video().Build(context.Background(), env, nil, content.Input{Fields: map[string]string{"videoSiteUrl": bad}})
		if !apperr.Is(err, apperr.Invalid) {
			t.Errorf("%q: %v, want 422", bad, err)
		}
	}
	both := content.Input{Fields: map[string]string{"videoSiteUrl": "https://x.test/v"}, Files: map[string]content.File{"file": upload("a.mp4", mp4Data)}}
	if _, err := Video().Build(context.Background(), env, nil, both); !apperr.Is(err, apperr.Invalid) {
		t.Errorf("file and URL: %v", err)
	}
	if _, err := PDF().Build(context.Background(), env, nil, content.Input{Fields: map[string]string{"videoSiteUrl": "https://x.test/v"}}); !apperr.Is(err, apperr.Invalid) {
		t.Errorf("pdf without file: %v", err)
	}
}

func TestValueAliasAndPathNeverFromClient(t *testing.T) {
	env := testEnv(t)
	raw, err := PDF().Build(context.Background(), env, nil, content.Input{Files: map[string]content.File{"value": upload("a.pdf", pdfData)}})
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := parse(raw); v.Path == "" {
		t.Errorf("value field: %s", raw)
	}
	_, err = PDF().Build(context.Background(), env, nil, content.Input{Value: json.RawMessage(`{"path":"avatars/1/a.png"}`)})
	if !apperr.Is(err, apperr.Invalid) {
		t.Errorf("a client path was taken: %v", err)
	}
}

func TestCopyRemoveKeep(t *testing.T) {
	env := testEnv(t)
	raw, err := PDF().Build(context.Background(), env, nil, content.Input{Files: map[string]content.File{"file": upload("a.pdf", pdfData)}})
	if err != nil {
		t.Fatal(err)
	}
	kept, err := PDF().Build(context.Background(), env, raw, content.Input{Fields: map[string]string{"title": "x"}})
	if err != nil || string(kept) != string(raw) {
		t.Errorf("update without a file: %s %v", kept, err)
	}
	cenv := env
	cenv.FilePrefix = content.NewPrefix("content")
	cp, err := PDF().Copy(context.Background(), cenv, raw)
	if err != nil {
		t.Fatal(err)
	}
	orig, _ := parse(raw)
	dup, _ := parse(cp)
	if dup.Path == orig.Path || !strings.HasPrefix(dup.Path, cenv.FilePrefix) {
		t.Errorf("copy path %q (original %q)", dup.Path, orig.Path)
	}
	if err := PDF().Remove(context.Background(), env, raw); err != nil {
		t.Fatal(err)
	}
	if keys := stored(t, env); len(keys) != 1 || keys[0] != dup.Path {
		t.Errorf("after removing the original: %v", keys)
	}
	view, _ := PDF().View(env, cp)
	if view.(View).URL != "/signed/"+dup.Path {
		t.Errorf("view %+v", view)
	}
}

func TestUnsafeURL(t *testing.T) {
	for s, want := range map[string]bool{
		"javascript:x": true, "JAVA\nSCRIPT:x": true, "data:text/html,x": true, "data:image/png;base64,x": false,
		"https://x": false, "#frag": false, "vbscript:x": true, "data:image/svg+xml,x": true,
	} {
		if got := unsafeURL(s); got != want {
			t.Errorf("unsafeURL(%q) = %v", s, got)
		}
	}
}
