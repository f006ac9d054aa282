package file

import (
	"bytes"
	"fmt"
	"net/http"
	"strings"

	"github.com/lms-platform/lms/internal/apperr"
	"github.com/lms-platform/lms/internal/content"
)

// documentChecks are the first-byte checks of the document and archive
// formats learners submit, beside the media types of this package's kinds.
var documentChecks = map[string]func(head []byte) bool{
	".zip": isZip, ".docx": isZip, ".xlsx": isZip, ".pptx": isZip, ".odt": isZip, ".ods": isZip, ".odp": isZip,
	".doc": isOLE, ".xls": isOLE, ".ppt": isOLE,
	".txt": isPlainText, ".md": isPlainText, ".csv": isPlainText,
}

// CheckContent refuses an upload whose content is not of the type its
// extension names (an HTML page named x.pdf), for every extension this
// package knows: the media of its kinds and common documents. SVG images
// are also read whole for scripts. Other extensions are not checked.
func CheckContent(f content.File, field string) error {
	ext := content.Ext(f.Name)
	matches, svg := documentChecks[ext], false
	for _, k := range []Kind{PDF(), Image(), Audio(), Video()} {
		if ft, ok := k.r.types[ext]; ok {
			matches, svg = ft.matches, ft.svg
		}
	}
	if matches == nil {
		return nil
	}
	return verify(f, field, ext, matches, svg)
}

// verify checks an upload's first bytes, and an SVG image whole.
func verify(f content.File, field, ext string, matches func(head []byte) bool, svg bool) error {
	head, err := content.Head(f, 1024)
	if err != nil {
		return fmt.Errorf("file: read upload: %w", err)
	}
	if !matches(head) {
		return apperr.Field(field, fmt.Sprintf("The %s's content is not a %s file.", field, strings.TrimPrefix(ext, ".")))
	}
	if svg {
		return checkSVG(f, field)
	}
	return nil
}

// isZip wants a local file header, or the end record of an empty archive:
// Office Open XML and OpenDocument files are zip archives.
func isZip(head []byte) bool {
	return bytes.HasPrefix(head, []byte("PK\x03\x04")) || bytes.HasPrefix(head, []byte("PK\x05\x06"))
}

// isOLE wants the compound file header of the old Office formats.
func isOLE(head []byte) bool {
	return bytes.HasPrefix(head, []byte{0xD0, 0xCF, 0x11, 0xE0, 0xA1, 0xB1, 0x1A, 0xE1})
}

// isPlainText accepts what the sniffer calls plain text; an HTML page
// (which a browser would run) is not.
func isPlainText(head []byte) bool {
	return strings.HasPrefix(http.DetectContentType(head), "text/plain")
}
