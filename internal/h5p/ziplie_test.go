package h5p_test

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"context"
	"errors"
	"hash/crc32"
	"os"
	"testing"

	"github.com/lms-platform/lms/client"
	"github.com/lms-platform/lms/internal/apitest"
	"github.com/lms-platform/lms/internal/blob"
	"github.com/lms-platform/lms/internal/fixtures"
	"github.com/lms-platform/lms/internal/h5p/h5ppackage"
	"github.com/lms-platform/lms/internal/kinds/interactive/interactivetest"
)

// withRawEntry copies a package entry by entry, as stored, and adds one
// entry written as is: its header says whatever hdr says of the body.
func withRawEntry(t *testing.T, data []byte, hdr *zip.FileHeader, body []byte) []byte {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, f := range zr.File {
		if err := zw.Copy(f); err != nil {
			t.Fatal(err)
		}
	}
	w, err := zw.CreateRaw(hdr)
	if err == nil {
		_, err = w.Write(body)
	}
	if err == nil {
		err = zw.Close()
	}
	if err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func deflate(t *testing.T, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	fw, _ := flate.NewWriter(&buf, flate.BestCompression)
	fw.Write(b)
	fw.Close()
	return buf.Bytes()
}

// blobCount counts the tenant's blobs under prefix.
func blobCount(t *testing.T, env *apitest.Env, prefix string) int {
	t.Helper()
	tenant, release := env.OpenTenant(env.Tenant)
	defer release()
	n := 0
	if err := tenant.Blob.List(context.Background(), prefix, func(blob.Info) error { n++; return nil }); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestLyingZipEntries: an entry whose header under-states its data, or
// whose data does not match its checksum, is refused wherever a package's
// files are stored (content files, library files, editor temporary
// files), and nothing of it stays. A blob store copies exactly the
// declared size, so without the check the file was stored cut short.
func TestLyingZipEntries(t *testing.T) {
	tf := fixtureData(t, trueFalseFixture)
	data := bytes.Repeat([]byte("0123456789abcdef"), 8<<10) // 128 KB
	const declared = 1000
	// The header's checksum is the first 1000 bytes', so a copy cut at
	// the declared size looks consistent.
	longer := func(name string) *zip.FileHeader {
		return &zip.FileHeader{Name: name, Method: zip.Deflate, CRC32: crc32.ChecksumIEEE(data[:declared]),
			CompressedSize64: uint64(len(deflate(t, data))), UncompressedSize64: declared}
	}
	badSum := func(name string) *zip.FileHeader {
		return &zip.FileHeader{Name: name, Method: zip.Deflate, CRC32: crc32.ChecksumIEEE(data) ^ 1,
			CompressedSize64: uint64(len(deflate(t, data))), UncompressedSize64: uint64(len(data))}
	}
	empty := func(name string) *zip.FileHeader { // a 0-byte file that holds 128 KB
		return &zip.FileHeader{Name: name, Method: zip.Deflate, CompressedSize64: uint64(len(deflate(t, data)))}
	}
	// The library cases come first, while H5P.TrueFalse is not installed:
	// a later upload would skip its files.
	cases := []struct {
		name, via string // via: upload, libraries or the editor's ajax
		hdr       *zip.FileHeader
		status    int
		code      string
	}{
		{"library file longer than declared", "upload", longer("H5P.TrueFalse-1.6/lie.js"), 422, h5ppackage.CodeSizeMismatch},
		{"library file with a bad checksum", "libraries", badSum("H5P.TrueFalse-1.6/lie.js"), 422, h5ppackage.CodeCorruptArchive},
		{"content file longer than declared", "upload", longer("content/images/lie.png"), 422, h5ppackage.CodeSizeMismatch},
		{"content file declared empty", "upload", empty("content/images/lie.png"), 422, h5ppackage.CodeSizeMismatch},
		{"content file with a bad checksum", "upload", badSum("content/images/lie.png"), 422, h5ppackage.CodeCorruptArchive},
		{"editor upload longer than declared", "ajax", longer("content/images/lie.png"), 422, h5ppackage.CodeSizeMismatch},
	}
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		ctx, admin := t.Context(), env.ClientAs("admin")
		type refusal struct {
			status     int
			code, file string
		}
		for i, c := range cases {
			if i == 2 { // after the library cases
				_, err := admin.GetH5PLibrariesID(ctx, "H5P.TrueFalse-1.6")
				if client.StatusOf(err) != 404 {
					t.Errorf("library installed from a lying package: %v", err)
				}
			}
			pkg := withRawEntry(t, tf, c.hdr, deflate(t, data))
			var got refusal
			if c.via == "ajax" {
				// Raw: the editor's AJAX action is H5P's protocol, not the API's.
				res := upload(env, "/h5p/ajax?action=library-upload", "h5p", admin.Token(), pkg)
				if res.Get("success") != false {
					t.Errorf("%s: %s", c.name, res.Body)
				}
				got = refusal{res.Status, res.String("errors.0.code"), res.String("errors.0.file")}
			} else {
				var err error
				if c.via == "libraries" {
					_, err = admin.PostH5PLibraries(ctx, client.PostH5PLibrariesForm{File: h5pFile(pkg)})
				} else {
					_, err = uploadContent(ctx, admin, pkg)
				}
				var e *client.Error
				if !errors.As(err, &e) {
					t.Errorf("%s: %v, want %d %s", c.name, err, c.status, c.code)
					continue
				}
				got.status = e.Status
				if len(e.Problems) > 0 {
					got.code, got.file = e.Problems[0].Code, e.Problems[0].File
				}
			}
			if want := (refusal{c.status, c.code, c.hdr.Name}); got != want {
				t.Errorf("%s: %+v, want %+v", c.name, got, want)
			}
		}
		if n := blobCount(t, env, "h5p/content/"); n != 0 {
			t.Errorf("%d content files stored", n)
		}
		if n := blobCount(t, env, "h5p/temp/"); n != 0 {
			t.Errorf("%d temporary files stored", n)
		}
		if list := apitest.Must(admin.GetH5PContents(ctx, client.GetH5PContentsParams{}))(t); len(list.Items) != 0 {
			t.Errorf("contents created: %+v", list.Items)
		}
	})
}

// TestLyingEntryEveryKind: the zip packages of the other kinds (SCORM,
// cmi5, interactive apps, LiaScript courses) share the reader, so an entry whose header under-states its data is refused by
// each upload alike: 422 naming the entry (the archive is invalid, not
// too large), nothing stored. Blob stores copy exactly the declared size,
// so before the reader looked ahead the SCORM and interactive uploads
// stored the file cut short and answered 201, and cmi5, which copies to
// the end, answered 413.
func TestLyingEntryEveryKind(t *testing.T) {
	data := bytes.Repeat([]byte("0123456789abcdef"), 8<<10)
	const declared = 1000
	lie := func(pkg []byte, name string) []byte {
		return withRawEntry(t, pkg, &zip.FileHeader{Name: name, Method: zip.Deflate, CRC32: crc32.ChecksumIEEE(data[:declared]),
			CompressedSize64: uint64(len(deflate(t, data))), UncompressedSize64: declared}, deflate(t, data))
	}
	read := func(rel string) []byte {
		b, err := os.ReadFile(fixtures.Path(t, rel))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	scormPkg := lie(read("scorm/RuntimeBasicCalls_SCORM12.zip"), "shared/lie.js")
	cmi5Pkg := lie(read("cmi5/single_au_basic_responsive.zip"), "js/lie.js")
	appPkg := lie(interactivetest.Zip(t, map[string]string{"lms-interactive.json": interactivetest.Manifest,
		"index.html": interactivetest.Page}), "lie.js")
	liaPkg := lie(interactivetest.Zip(t, map[string]string{"course.md": "# Soil\n\nWhat soil is made of.\n"}), "img/lie.png")
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		ctx, admin := t.Context(), env.ClientAs("admin")
		file := func(name string, b []byte) *client.File { return &client.File{Name: name, Content: bytes.NewReader(b)} }
		check := func(kind, entry string, err error) {
			t.Helper()
			e := apitest.Refused(t, err, 422)
			if !apitest.Says(e, entry) || !apitest.Says(e, "holds more data than the archive declares") {
				t.Errorf("%s: %v, want the entry %s named", kind, e, entry)
			}
		}
		_, err := admin.PostAdminScormUpload(ctx, client.PostAdminScormUploadForm{Package: file("golf.zip", scormPkg)})
		check("SCORM", "shared/lie.js", err)
		_, err = admin.PostAdminCmi5(ctx, client.PostAdminCmi5Form{Package: file("course.zip", cmi5Pkg)})
		check("cmi5", "js/lie.js", err)
		_, err = admin.PostAdminInteractive(ctx, client.PostAdminInteractiveForm{File: file("app.zip", appPkg)})
		check("interactive", "lie.js", err)
		_, err = admin.PostAdminLiascriptMultipart(ctx, client.PostAdminLiascriptForm{File: file("course.zip", liaPkg)})
		check("LiaScript", "img/lie.png", err)
		for _, prefix := range []string{"scorm/", "cmi5/", "interactive/", "liascript/"} {
			if n := blobCount(t, env, prefix); n != 0 {
				t.Errorf("%d files stored under %s", n, prefix)
			}
		}
	})
}
