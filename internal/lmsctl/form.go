package lmsctl

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"mime/multipart"
	"os"
	"path/filepath"
	"slices"
)

// body is a request body that can be sent again: each attempt (a retry
// after a 429) opens it afresh, so an upload is streamed from its files
// instead of being held in memory.
type body interface {
	// open returns the body and its length in bytes.
	open() (io.ReadCloser, int64, error)
}

// jsonBody is a small body held in memory.
type jsonBody []byte

func (b jsonBody) open() (io.ReadCloser, int64, error) {
	return io.NopCloser(bytes.NewReader(b)), int64(len(b)), nil
}

// formBody is multipart form data of fields and of the files at the paths
// given per field, each in name order, written while it is sent.
type formBody struct {
	fields   map[string]any
	files    map[string]string
	boundary string
	size     int64
}

// multipartForm checks that every file can be read (so a bad path fails
// before any request) and measures the form, whose bytes are only
// produced when it is sent.
func multipartForm(fields map[string]any, files map[string]string) (*formBody, string, error) {
	b := make([]byte, 24)
	rand.Read(b)
	f := &formBody{fields: fields, files: files, boundary: hex.EncodeToString(b)}
	var fileBytes int64
	for _, path := range files {
		st, err := os.Stat(path)
		if err == nil && !st.Mode().IsRegular() {
			err = fmt.Errorf("not a regular file")
		}
		if err == nil {
			var fh *os.File
			if fh, err = os.Open(path); err == nil {
				fh.Close()
			}
		}
		if err != nil {
			return nil, "", usagef("%s: %v", path, err)
		}
		fileBytes += st.Size()
	}
	// The form's length is its framing, written without the files'
	// contents, plus the files' sizes.
	var frame countingWriter
	if err := f.write(&frame, false); err != nil {
		return nil, "", err
	}
	f.size = frame.n + fileBytes
	return f, "multipart/form-data; boundary=" + f.boundary, nil
}

func (f *formBody) open() (io.ReadCloser, int64, error) {
	pr, pw := io.Pipe()
	go func() { pw.CloseWithError(f.write(pw, true)) }()
	return pr, f.size, nil
}

// write writes the form to w, with the files' contents when withFiles.
func (f *formBody) write(w io.Writer, withFiles bool) error {
	mw := multipart.NewWriter(w)
	if err := mw.SetBoundary(f.boundary); err != nil {
		return err
	}
	for _, k := range slices.Sorted(maps.Keys(f.fields)) {
		if err := mw.WriteField(k, formValue(f.fields[k])); err != nil {
			return err
		}
	}
	for _, k := range slices.Sorted(maps.Keys(f.files)) {
		part, err := mw.CreateFormFile(k, filepath.Base(f.files[k]))
		if err != nil {
			return err
		}
		if withFiles {
			if err := copyFile(part, f.files[k]); err != nil {
				return fmt.Errorf("%s: %w", f.files[k], err)
			}
		}
	}
	return mw.Close()
}

// formValue is a field's text: a string as it is, anything else (numbers,
// booleans, the lists and objects of a JSON body) as JSON.
func formValue(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(raw)
}

func copyFile(w io.Writer, path string) error {
	fh, err := os.Open(path)
	if err != nil {
		return err
	}
	defer fh.Close()
	_, err = io.Copy(w, fh)
	return err
}

type countingWriter struct{ n int64 }

func (c *countingWriter) Write(p []byte) (int, error) {
	c.n += int64(len(p))
	return len(p), nil
}
