package blob

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// ErrInvalidKey is returned (wrapped) for a key or prefix that a Store refuses.
var ErrInvalidKey = errors.New("blob: invalid key")

// Limits shared by every store, so a key accepted by one backend is accepted
// by all: S3 caps keys at 1024 bytes, and file systems cap a name at 255.
const (
	maxKeyLen     = 1024
	maxSegmentLen = 255
)

// ValidateKey reports whether key may name an object. A key is a relative,
// slash-separated path of UTF-8 segments; it must not be empty, start or end
// with "/", hold an empty, "." or ".." segment, a backslash or a control
// character. The same rules hold on every store, so that the fs store can map
// keys to paths safely and the s3 store behaves the same.
func ValidateKey(key string) error {
	if key == "" {
		return fmt.Errorf("%w: empty", ErrInvalidKey)
	}
	if err := checkChars(key); err != nil {
		return err
	}
	for seg := range strings.SplitSeq(key, "/") {
		if err := checkSegment(key, seg); err != nil {
			return err
		}
	}
	return nil
}

// validatePrefix checks a List or DeletePrefix prefix. Every complete segment
// (one followed by "/") must be valid as in a key; the last, partial segment
// is only a string filter, so it may be empty or look like "." or "..".
func validatePrefix(prefix string) error {
	if prefix == "" {
		return nil
	}
	if err := checkChars(prefix); err != nil {
		return err
	}
	segs := strings.Split(prefix, "/")
	for _, seg := range segs[:len(segs)-1] {
		if err := checkSegment(prefix, seg); err != nil {
			return err
		}
	}
	return nil
}

func checkChars(key string) error {
	if len(key) > maxKeyLen {
		return fmt.Errorf("%w: longer than %d bytes", ErrInvalidKey, maxKeyLen)
	}
	if !utf8.ValidString(key) {
		return fmt.Errorf("%w: %q: not UTF-8", ErrInvalidKey, key)
	}
	for _, r := range key {
		if r == '\\' || r < 0x20 || r == 0x7f {
			return fmt.Errorf("%w: %q: backslash or control character", ErrInvalidKey, key)
		}
	}
	return nil
}

func checkSegment(key, seg string) error {
	switch {
	case seg == "":
		return fmt.Errorf("%w: %q: empty segment or leading/trailing slash", ErrInvalidKey, key)
	case seg == "." || seg == "..":
		return fmt.Errorf("%w: %q: %q segment", ErrInvalidKey, key, seg)
	case len(seg) > maxSegmentLen:
		return fmt.Errorf("%w: %q: segment longer than %d bytes", ErrInvalidKey, key, maxSegmentLen)
	}
	return nil
}

// DefaultContentType is stored for an object put without a content type.
const DefaultContentType = "application/octet-stream"

// maxContentTypeLen keeps the fs header a fixed size; real media types with
// parameters are far shorter.
const maxContentTypeLen = 200

// normalizeContentType applies the default and refuses values that could not
// travel as an HTTP header (control characters, non-ASCII) or are too long.
func normalizeContentType(ct string) (string, error) {
	if ct == "" {
		return DefaultContentType, nil
	}
	if len(ct) > maxContentTypeLen {
		return "", fmt.Errorf("blob: content type longer than %d bytes", maxContentTypeLen)
	}
	for i := 0; i < len(ct); i++ {
		if ct[i] < 0x20 || ct[i] > 0x7e {
			return "", fmt.Errorf("blob: content type %q: not printable ASCII", ct)
		}
	}
	return ct, nil
}
