package topics

import (
	"context"

	"github.com/lms-platform/lms/internal/content"
)

// Upload is the body of a package upload route outside topics
// (POST /api/admin/interactive, ...): read by ReadUpload as topic forms
// are, after the route has checked who is asking.
type Upload = rawBody

// ReadUpload reads an upload: JSON or form fields, and files spooled to
// temporary files under maxFile bytes each (scanned for malware when a
// scanner is set). done removes the spooled files.
func (s *Service) ReadUpload(ctx context.Context, body Upload, maxFile int64) (in content.Input, done func(), err error) {
	f, err := readForm(ctx, body, formLimits{values: maxFormValues, fileCap: fixedCap(maxFile), scanner: s.Scanner})
	if err != nil {
		return content.Input{}, func() {}, err
	}
	return contentInput(f), f.Close, nil
}
