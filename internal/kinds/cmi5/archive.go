package cmi5

import (
	"errors"
	"fmt"
	"io"

	"github.com/lms-platform/lms/internal/apperr"
	"github.com/lms-platform/lms/internal/h5p/h5ppackage"
)

// StructureFile is the course structure's name at the package root.
const StructureFile = "cmi5.xml"

// Archive limits: those of H5P packages, without H5P's own cap on
// content/content.json, which means nothing in a cmi5 package.
var archiveLimits = h5ppackage.Limits{MaxContentSize: h5ppackage.DefaultMaxFileSize}

// OpenZip checks a package zip before anything is extracted, with the
// archive safety checks of H5P packages (safe relative paths, regular
// files, no duplicates, entry count and size caps, ZIP64 read by the
// standard library), then reads and checks cmi5.xml at its root against
// the files present.
func OpenZip(r io.ReaderAt, size int64) (*Course, *h5ppackage.Package, error) {
	pkg, err := h5ppackage.Open(r, size, archiveLimits)
	if err != nil {
		return nil, nil, h5ppackage.AsAPIError("package", err)
	}
	present := map[string]bool{}
	for _, name := range pkg.Files() {
		present[name] = true
	}
	if !present[StructureFile] {
		return nil, nil, apperr.Field("package", "The package has no cmi5.xml at its root.")
	}
	if n, _ := pkg.Size(StructureFile); n > MaxStructureSize {
		return nil, nil, apperr.Field("package", fmt.Sprintf("cmi5.xml is larger than %d bytes.", MaxStructureSize))
	}
	rc, err := pkg.Open(StructureFile)
	if err != nil {
		return nil, nil, h5ppackage.AsAPIError("package", err)
	}
	data, err := io.ReadAll(rc)
	rc.Close()
	if err != nil {
		return nil, nil, h5ppackage.AsAPIError("package", err)
	}
	course, err := Parse(data, func(name string) bool { return present[name] })
	if err != nil {
		return nil, nil, StructureError(err)
	}
	return course, pkg, nil
}

// StructureError turns a Parse error into a 422 naming every problem
// under the field package.
func StructureError(err error) error {
	var e *Error
	if !errors.As(err, &e) {
		return err
	}
	msgs := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		msgs[i] = "cmi5.xml " + p.String()
	}
	out := apperr.Validation(map[string][]string{"package": msgs})
	out.Message = "The cmi5 course structure is invalid: " + msgs[0]
	return out
}
