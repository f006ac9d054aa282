package h5ppackage

import (
	"errors"
	"fmt"
	"strings"
)

// Kind says why a package was refused. The HTTP layer maps it to a status:
// TooLarge to 413, every other kind to 422.
type Kind int

const (
	// MissingDependencies: the package is well formed but needs libraries
	// that neither it nor the installation holds.
	MissingDependencies Kind = iota + 1
	// Invalid: the archive is readable but breaks the H5P package format or
	// a safety rule (unsafe path, link, disallowed extension, ...).
	Invalid
	// TooLarge: too many entries, or a file or the whole package over the
	// size limits, whether the central directory says so or the data does.
	TooLarge
	// Corrupt: not a ZIP archive, or data that cannot be read back.
	Corrupt
)

func (k Kind) String() string {
	switch k {
	case MissingDependencies:
		return "missing dependencies"
	case Invalid:
		return "invalid"
	case TooLarge:
		return "too large"
	case Corrupt:
		return "corrupt"
	}
	return fmt.Sprintf("kind(%d)", int(k))
}

// Problem codes. Where H5P's own validators have an id for the same defect
// the code reuses it, so operators can look it up.
const (
	CodeCorruptArchive         = "corrupt-archive"
	CodeTooManyEntries         = "too-many-entries"
	CodeFileTooLarge           = "file-size-too-large"
	CodeTotalTooLarge          = "total-size-too-large"
	CodeContentTooLarge        = "content-too-large"
	CodeSizeMismatch           = "file-size-mismatch"
	CodeUnsafePath             = "unsafe-path"
	CodeSymlink                = "symlink"
	CodeNotRegularFile         = "not-regular-file"
	CodeDuplicateEntry         = "duplicate-entry"
	CodeEncryptedEntry         = "encrypted-entry"
	CodeUnsupportedCompression = "unsupported-compression"

	CodeMissingH5PJSON        = "missing-h5p-json"
	CodeInvalidH5PJSON        = "invalid-h5p-json"
	CodeInvalidH5PJSONSchema  = "invalid-h5p-json-schema"
	CodeMainLibraryNotListed  = "main-library-not-in-dependencies"
	CodeMissingContentJSON    = "missing-content-json"
	CodeInvalidContentJSON    = "invalid-content-json"
	CodeInvalidLibraryName    = "invalid-library-name"
	CodeMissingLibraryJSON    = "missing-library-json"
	CodeInvalidLibraryJSON    = "invalid-library-json"
	CodeInvalidLibrarySchema  = "invalid-library-json-schema"
	CodeLibraryDirMismatch    = "library-directory-name-mismatch"
	CodeAPIVersionUnsupported = "api-version-unsupported"
	CodeLibraryFileMissing    = "library-file-missing"
	CodeInvalidSemanticsJSON  = "invalid-semantics-json"
	CodeInvalidLanguageFile   = "invalid-language-file"
	CodeInvalidLanguageJSON   = "invalid-language-file-json"
	CodeNotInWhitelist        = "not-in-whitelist"
	CodeMissingDependency     = "missing-dependency"
	CodeUnsafeSVG             = "unsafe-svg"
)

// Problem is one defect of a package. Message is safe to show to the
// uploader; File and Library say where the defect is when it has a place.
type Problem struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	// File is the path of the entry inside the archive.
	File string `json:"file,omitempty"`
	// Library is a library directory ("H5P.Foo-1.2") or, for a missing
	// dependency, the library that is missing ("H5P.Foo 1.2").
	Library string `json:"library,omitempty"`
}

// Error is every problem found in a package, with the kind of the most
// serious one (Corrupt, then TooLarge, then Invalid, then
// MissingDependencies).
type Error struct {
	Kind     Kind
	Problems []Problem
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("h5p package ")
	b.WriteString(e.Kind.String())
	// A package with thousands of bad entries must not produce a log line
	// of megabytes; the full list stays in Problems.
	const shown = 5
	for i, p := range e.Problems {
		if i == shown {
			fmt.Fprintf(&b, "; and %d more", len(e.Problems)-shown)
			break
		}
		if i == 0 {
			b.WriteString(": ")
		} else {
			b.WriteString("; ")
		}
		b.WriteString(p.Code)
		b.WriteString(": ")
		b.WriteString(p.Message)
	}
	return b.String()
}

// Has reports whether some problem has the code.
func (e *Error) Has(code string) bool {
	for _, p := range e.Problems {
		if p.Code == code {
			return true
		}
	}
	return false
}

// Codes lists the problem codes in order, repeated codes included.
func (e *Error) Codes() []string {
	codes := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		codes[i] = p.Code
	}
	return codes
}

// report collects problems and keeps the most serious kind.
type report struct {
	kind     Kind
	problems []Problem
}

func (r *report) add(kind Kind, p Problem) {
	if kind > r.kind {
		r.kind = kind
	}
	r.problems = append(r.problems, p)
}

// addErr records an error met while reading an entry: an *Error keeps its
// kind and problems, anything else counts as corrupt data.
func (r *report) addErr(file string, err error) {
	var e *Error
	if errors.As(err, &e) {
		for _, p := range e.Problems {
			r.add(e.Kind, p)
		}
		return
	}
	r.add(Corrupt, Problem{Code: CodeCorruptArchive, File: file,
		Message: fmt.Sprintf("%s cannot be read from the archive.", quote(file))})
}

func (r *report) err() error {
	if len(r.problems) == 0 {
		return nil
	}
	return &Error{Kind: r.kind, Problems: r.problems}
}

func single(kind Kind, p Problem) *Error {
	return &Error{Kind: kind, Problems: []Problem{p}}
}

// quote renders an archive path for a message: quoted, control characters
// escaped, and cut short, since the name comes from the uploader.
func quote(name string) string {
	const max = 200
	if len(name) > max {
		cut := max
		for cut > 0 && name[cut]&0xC0 == 0x80 { // stay on a rune boundary
			cut--
		}
		name = name[:cut] + "…"
	}
	return fmt.Sprintf("%q", name)
}
