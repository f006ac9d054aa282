package h5ppackage

import (
	"errors"
	"strings"

	"github.com/lms-platform/lms/internal/apperr"
)

// AsAPIError is how an upload of another kind of zip package (SCORM,
// cmi5, an interactive app, a LiaScript course) reports what the reader
// found: 413 when the archive is too large, else 422 naming each problem
// under field. Errors that are not the reader's findings pass through.
func AsAPIError(field string, err error) error {
	var pe *Error
	if !errors.As(err, &pe) {
		return err
	}
	msgs := make([]string, 0, len(pe.Problems))
	for _, p := range pe.Problems {
		if p.Code == CodeCorruptArchive {
			msgs = append(msgs, "The file is not a readable ZIP archive, or an entry of it is damaged.")
			continue
		}
		// The reader's messages were written for H5P packages.
		msgs = append(msgs, strings.ReplaceAll(p.Message, "H5P (ZIP)", "ZIP"))
	}
	if len(msgs) == 0 {
		msgs = []string{"The file is not a readable ZIP archive."}
	}
	kind := apperr.Invalid
	if pe.Kind == TooLarge {
		kind = apperr.TooLarge
	}
	return &apperr.Error{Kind: kind, Message: msgs[0], Fields: map[string][]string{field: msgs}}
}
