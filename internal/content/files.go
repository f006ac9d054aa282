package content

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"path"
	"strings"
)

// Uploads is implemented by kinds that take an uploaded file. Topics asks
// it for the form data it describes, and to stop reading an upload as soon
// as it passes the kind's cap instead of after spooling all of it.
type Uploads interface {
	// MaxUpload is the largest file the kind accepts, in bytes.
	MaxUpload() int64
	// Extensions lists the accepted file name extensions (".pdf").
	Extensions() []string
}

// NewPrefix returns a fresh key prefix under area ("content/9f2c.../"),
// random so that no two uploads share one.
func NewPrefix(area string) string {
	b := make([]byte, 12)
	rand.Read(b)
	return area + "/" + hex.EncodeToString(b) + "/"
}

// maxNameLen keeps stored names well inside the blob stores' 255-byte
// segment limit.
const maxNameLen = 100

// SafeName turns a client's file name into a key segment: the base name
// with letters, digits, dots, dashes and underscores kept and anything else
// replaced, never empty, never "." or "..", at most 100 bytes with its
// extension kept.
func SafeName(name string) string {
	name = path.Base(strings.ReplaceAll(name, `\`, "/"))
	var b strings.Builder
	for _, r := range name {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '-', r == '_':
			b.WriteRune(r)
		default:
			b.WriteByte('-')
		}
	}
	out := strings.TrimLeft(b.String(), ".-")
	ext := strings.ToLower(path.Ext(out))
	if len(ext) > 16 {
		ext = ""
	}
	stem := strings.TrimSuffix(out, path.Ext(out))
	if len(stem)+len(ext) > maxNameLen {
		stem = stem[:maxNameLen-len(ext)]
	}
	if stem == "" {
		stem = "file"
	}
	return stem + ext
}

// Ext is the lower-case extension of a file name (".png"), or "".
func Ext(name string) string {
	return strings.ToLower(path.Ext(strings.ReplaceAll(name, `\`, "/")))
}

// Head reads up to n bytes from the start of the file, for checks of its
// type by content.
func Head(f File, n int) ([]byte, error) {
	rc, err := f.Open()
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	buf := make([]byte, n)
	got, err := io.ReadFull(rc, buf)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return nil, err
	}
	return buf[:got], nil
}

// FileFrom returns the uploaded file of the first of the fields present.
func FileFrom(in Input, fields ...string) (File, string, bool) {
	for _, name := range fields {
		if f, ok := in.Files[name]; ok {
			return f, name, true
		}
	}
	return File{}, "", false
}

// Text returns the first non-empty text among the fields, looking also in
// a generic value that is a JSON object with string members.
func (in Input) Text(fields ...string) (string, bool) {
	for _, name := range fields {
		if v, ok := in.Fields[name]; ok && v != "" {
			return v, true
		}
	}
	obj := in.object()
	for _, name := range fields {
		if v, ok := obj[name]; ok && v != "" {
			return v, true
		}
	}
	return "", false
}

// Sent returns the first of the fields the input holds, empty or not. An
// update that sends a required field empty asks for it to be empty, which
// the kind must refuse, not take for a field left out (Text).
func (in Input) Sent(fields ...string) (string, bool) {
	for _, name := range fields {
		if v, ok := in.Fields[name]; ok {
			return v, true
		}
	}
	obj := in.object()
	for _, name := range fields {
		if v, ok := obj[name]; ok {
			return v, true
		}
	}
	return "", false
}

// object reads a generic value that is a JSON object: string members as
// they are, other members as their JSON text. Nil for any other value.
func (in Input) object() map[string]string {
	var raw map[string]json.RawMessage
	if len(in.Value) == 0 || json.Unmarshal(in.Value, &raw) != nil {
		return nil
	}
	out := make(map[string]string, len(raw))
	for k, v := range raw {
		var s string
		if json.Unmarshal(v, &s) == nil {
			out[k] = s
		} else {
			out[k] = string(v)
		}
	}
	return out
}
