package topics

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/url"
	"os"
	"strconv"
	"strings"

	"github.com/danielgtaylor/huma/v2"

	"github.com/lms-platform/lms/internal/apperr"
	"github.com/lms-platform/lms/internal/content"
	"github.com/lms-platform/lms/internal/scan"
)

// rawBody is the body of a route that reads it itself, as it streams.
// Huma would read a multipart body whole (to memory or disk) with no cap
// before the handler runs; topics instead checks who is asking first and
// stops an upload as soon as it passes its cap.
type rawBody struct {
	contentType string
	r           io.Reader
}

// Resolve takes the body from the request; huma calls it before the
// handler.
func (b *rawBody) Resolve(ctx huma.Context) []error {
	b.contentType = ctx.Header("Content-Type")
	b.r = ctx.BodyReader()
	return nil
}

// form is a request body read into values and spooled files: JSON, URL
// encoded or multipart form data. Text values are kept as JSON, so a
// field reads the same whichever encoding the client chose.
type form struct {
	values map[string]json.RawMessage
	files  map[string]*spooled
}

// spooled is an uploaded file written to a temporary file while the rest
// of the form is read, so its size is known before anything is stored.
type spooled struct {
	name        string
	contentType string
	path        string
	size        int64
}

// formLimits bound what readForm takes.
type formLimits struct {
	// values caps the bytes of a JSON or URL-encoded body, or of the text
	// fields of a multipart one.
	values int64
	// fileCap is asked when a file part starts, with the fields read so
	// far: it returns the part's cap, or an error that ends the read (a
	// caller who may not write, an unknown lesson).
	fileCap func(field string, values map[string]json.RawMessage) (int64, error)
	// scanner, when set, checks each spooled file for malware.
	scanner scan.Scanner
}

// fixedCap caps every file of a form at n bytes.
func fixedCap(n int64) func(string, map[string]json.RawMessage) (int64, error) {
	return func(string, map[string]json.RawMessage) (int64, error) { return n, nil }
}

// maxParts bounds the parts of a multipart body.
const maxParts = 100

var errBadForm = apperr.New(apperr.BadRequest, "The multipart form could not be read.")

// readForm reads the body. The caller closes the form to remove its
// spooled files.
func readForm(ctx context.Context, b rawBody, lim formLimits) (*form, error) {
	f := &form{values: map[string]json.RawMessage{}, files: map[string]*spooled{}}
	if b.r == nil {
		return f, nil
	}
	mt, params, err := mime.ParseMediaType(b.contentType)
	if b.contentType == "" {
		mt, err = "application/json", nil
	}
	if err != nil {
		return nil, apperr.New(apperr.UnsupportedMedia, "Send JSON or multipart/form-data.")
	}
	switch {
	case mt == "application/json" || strings.HasSuffix(mt, "+json"):
		err = f.readJSON(b.r, lim.values)
	case mt == "application/x-www-form-urlencoded":
		err = f.readURLEncoded(b.r, lim.values)
	case mt == "multipart/form-data" && params["boundary"] != "":
		err = f.readMultipart(ctx, multipart.NewReader(b.r, params["boundary"]), lim)
	default:
		err = apperr.New(apperr.UnsupportedMedia, "Send JSON or multipart/form-data.")
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

func readCapped(r io.Reader, limit int64) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, apperr.Wrap(apperr.BadRequest, err, "The request body could not be read.")
	}
	if int64(len(data)) > limit {
		return nil, apperr.New(apperr.TooLarge, "The request body is too large.")
	}
	return data, nil
}

func (f *form) readJSON(r io.Reader, limit int64) error {
	data, err := readCapped(r, limit)
	if err != nil {
		return err
	}
	if len(strings.TrimSpace(string(data))) == 0 {
		return nil
	}
	if !json.Valid(data) {
		return apperr.New(apperr.BadRequest, "The request body is not valid JSON.")
	}
	if err := json.Unmarshal(data, &f.values); err != nil {
		return apperr.Field("body", "The request body must be a JSON object.")
	}
	return nil
}

func (f *form) readURLEncoded(r io.Reader, limit int64) error {
	data, err := readCapped(r, limit)
	if err != nil {
		return err
	}
	q, err := url.ParseQuery(string(data))
	if err != nil {
		return apperr.Wrap(apperr.BadRequest, err, "The form could not be read.")
	}
	for k, v := range q {
		if len(v) > 0 {
			f.setText(k, v[len(v)-1])
		}
	}
	return nil
}

// setText stores a form field. The generic value may be JSON (an object,
// a number) or plain text; other fields are always text.
func (f *form) setText(name, text string) {
	if name == "value" && json.Valid([]byte(text)) {
		f.values[name] = json.RawMessage(text)
		return
	}
	raw, _ := json.Marshal(text)
	f.values[name] = raw
}

func (f *form) readMultipart(ctx context.Context, mr *multipart.Reader, lim formLimits) error {
	budget := lim.values
	for parts := 0; ; parts++ {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return apperr.Wrap(apperr.BadRequest, err, errBadForm.Message)
		}
		if parts >= maxParts {
			return apperr.New(apperr.Invalid, fmt.Sprintf("The form may have at most %d fields.", maxParts))
		}
		name := part.FormName()
		if name == "" {
			continue
		}
		if part.FileName() != "" {
			if err := f.spool(ctx, name, part, lim); err != nil {
				return err
			}
			continue
		}
		data, err := io.ReadAll(io.LimitReader(part, budget+1))
		if err != nil {
			return apperr.Wrap(apperr.BadRequest, err, errBadForm.Message)
		}
		budget -= int64(len(data))
		if budget < 0 {
			return apperr.New(apperr.TooLarge, "The form's text fields are too large.")
		}
		f.setText(name, string(data))
	}
}

// spool copies a file part to a temporary file under its cap.
func (f *form) spool(ctx context.Context, name string, part *multipart.Part, lim formLimits) error {
	limit := int64(0)
	if lim.fileCap != nil {
		var err error
		if limit, err = lim.fileCap(name, f.values); err != nil {
			return err
		}
	}
	if limit <= 0 {
		return apperr.Field(name, fmt.Sprintf("The %s field takes no file.", name))
	}
	tmp, err := os.CreateTemp("", "lms-upload-*")
	if err != nil {
		return fmt.Errorf("topics: spool upload: %w", err)
	}
	s := &spooled{name: part.FileName(), contentType: part.Header.Get("Content-Type"), path: tmp.Name()}
	n, err := io.Copy(tmp, io.LimitReader(ctxReader{ctx, part}, limit+1))
	closeErr := tmp.Close()
	if err == nil && n > limit {
		err = apperr.New(apperr.TooLarge, fmt.Sprintf("The %s may not be greater than %s.", name, sizeLabel(limit)))
	} else if err != nil {
		err = apperr.Wrap(apperr.BadRequest, err, errBadForm.Message)
	} else if closeErr != nil {
		err = fmt.Errorf("topics: spool upload: %w", closeErr)
	}
	if err == nil && lim.scanner != nil {
		err = scanFile(ctx, lim.scanner, s.path, name)
	}
	if err != nil {
		os.Remove(s.path)
		return err
	}
	s.size = n
	if old := f.files[name]; old != nil {
		os.Remove(old.path)
	}
	f.files[name] = s
	return nil
}

func scanFile(ctx context.Context, sc scan.Scanner, path, field string) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("topics: scan upload: %w", err)
	}
	defer f.Close()
	return sc.Check(ctx, f, field)
}

// ctxReader stops a long upload when the request is cancelled.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

// Close removes the spooled files.
func (f *form) Close() {
	if f == nil {
		return
	}
	for _, s := range f.files {
		os.Remove(s.path)
	}
	f.files = nil
}

// file returns the first spooled file among the names as a content.File.
func (f *form) file(names ...string) (content.File, string, bool) {
	for _, name := range names {
		if s, ok := f.files[name]; ok {
			return s.file(), name, true
		}
	}
	return content.File{}, "", false
}

func (s *spooled) file() content.File {
	p := s.path
	return content.File{Name: s.name, Size: s.size, ContentType: s.contentType,
		Open: func() (io.ReadCloser, error) { return os.Open(p) }}
}

// sizeLabel writes a cap for messages: "100 MiB", "2 GiB", "512 KiB".
func sizeLabel(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return strconv.FormatInt(n>>30, 10) + " GiB"
	case n >= 1<<20 && n%(1<<20) == 0:
		return strconv.FormatInt(n>>20, 10) + " MiB"
	case n >= 1<<10 && n%(1<<10) == 0:
		return strconv.FormatInt(n>>10, 10) + " KiB"
	}
	return strconv.FormatInt(n, 10) + " bytes"
}

// fieldReader reads typed fields from a form, collecting one message per
// bad field, in the manner of the API's other validation errors.
type fieldReader struct {
	f    *form
	errs map[string][]string
}

func newFieldReader(f *form) *fieldReader { return &fieldReader{f: f, errs: map[string][]string{}} }

func (r *fieldReader) fail(name, msg string) { r.errs[name] = append(r.errs[name], msg) }

// raw returns the first present, non-null value among the names.
func (r *fieldReader) raw(names ...string) (json.RawMessage, string, bool) {
	for _, n := range names {
		if v, ok := r.f.values[n]; ok && string(v) != "null" {
			return v, n, true
		}
	}
	return nil, "", false
}

// text reads a string of at most max bytes; a JSON number is taken as its
// text.
func (r *fieldReader) text(max int, names ...string) *string {
	v, name, ok := r.raw(names...)
	if !ok {
		return nil
	}
	var s string
	if json.Unmarshal(v, &s) != nil {
		var n json.Number
		if json.Unmarshal(v, &n) != nil {
			r.fail(name, fmt.Sprintf("The %s must be a string.", name))
			return nil
		}
		s = n.String()
	}
	if len(s) > max {
		r.fail(name, fmt.Sprintf("The %s may not be greater than %d characters.", name, max))
		return nil
	}
	return &s
}

// integer reads a whole number (JSON number or numeric text) in the range
// the interface allows for ids.
func (r *fieldReader) integer(names ...string) *int64 {
	v, name, ok := r.raw(names...)
	if !ok {
		return nil
	}
	var s string
	if json.Unmarshal(v, &s) != nil {
		s = string(v)
	}
	n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if err != nil || n < -9007199254740991 || n > 9007199254740991 {
		r.fail(name, fmt.Sprintf("The %s must be an integer.", name))
		return nil
	}
	return &n
}

// boolean reads true/false, 1/0, or their text forms (form data sends
// "true", "1", "on").
func (r *fieldReader) boolean(names ...string) *bool {
	v, name, ok := r.raw(names...)
	if !ok {
		return nil
	}
	var s string
	if json.Unmarshal(v, &s) != nil {
		s = string(v)
	}
	var b bool
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "true", "1", "on", "yes":
		b = true
	case "false", "0", "off", "no":
		b = false
	default:
		r.fail(name, fmt.Sprintf("The %s field must be true or false.", name))
		return nil
	}
	return &b
}

func (r *fieldReader) err() error {
	if len(r.errs) == 0 {
		return nil
	}
	return apperr.Validation(r.errs)
}
