// Package h5pstore keeps the H5P libraries and contents of a tenant: their
// rows in the tenant database and their files in the tenant's blob store.
//
// Blob layout:
//
//	h5p/libraries/<machine>-<major>.<minor>/<patch>/<file>   library files, one folder per patch version
//	h5p/content/<id>/<file>                                   content files (not content.json)
//	h5p/temp/<random>/<name>                                  editor uploads not saved yet
//	h5p/hub/content-types.json                                last content-type list read from the hub
//
// A library's row names its patch version, so the row alone says which
// folder readers use: a patch update writes the new folder in full, then
// switches the row, then deletes the old folder.
package h5pstore

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"mime"
	"path"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/lms-platform/lms/internal/apperr"
	"github.com/lms-platform/lms/internal/cache"
	"github.com/lms-platform/lms/internal/clock"
	"github.com/lms-platform/lms/internal/lock"
	"github.com/lms-platform/lms/internal/platform"
)

// Dependency types of h5p_library_dependencies and h5p_content_libraries.
const (
	Preloaded = "preloaded"
	Dynamic   = "dynamic"
	Editor    = "editor"
)

// lockTTL bounds how long a crashed installer can block others from
// installing the same library.
const lockTTL = 10 * time.Minute

// Store reads and writes the H5P data of tenants. It holds no tenant
// state: every method takes the tenant.
type Store struct {
	Clock  clock.Clock
	Locker lock.Locker
	// Cache holds each tenant's library generation, so that processes can
	// keep the player assets of contents (nil: computed every time).
	Cache cache.Cache
	// settings are read and replaced through Settings and SetSettings.
	settings atomic.Pointer[Settings]
}

func (s *Store) now() time.Time {
	if s.Clock == nil {
		return time.Now().UTC()
	}
	return s.Clock.Now().UTC()
}

// LibraryRef names one version of a library.
type LibraryRef struct {
	MachineName string `json:"machineName"`
	Major       int    `json:"majorVersion"`
	Minor       int    `json:"minorVersion"`
	Patch       int    `json:"patchVersion"`
}

// Dir is the folder name of the library, "H5P.Foo-1.2".
func (r LibraryRef) Dir() string { return libDir(r.MachineName, r.Major, r.Minor) }

// FilesPrefix is the blob folder of this patch version's files,
// "h5p/libraries/H5P.Foo-1.2/3/".
func (r LibraryRef) FilesPrefix() string {
	return libraryPrefix(r.Dir()) + strconv.Itoa(r.Patch) + "/"
}

// String is "H5P.Foo 1.2.3".
func (r LibraryRef) String() string {
	return fmt.Sprintf("%s %d.%d.%d", r.MachineName, r.Major, r.Minor, r.Patch)
}

// Library is an installed library.
type Library struct {
	ID          int64
	MachineName string
	Major       int
	Minor       int
	Patch       int
	Title       string
	Runnable    bool
	Restricted  bool
	// JSON is the library.json of the installed patch version.
	JSON      json.RawMessage
	CreatedAt time.Time
	UpdatedAt time.Time
}

// Ref is the library's name and version.
func (l Library) Ref() LibraryRef {
	return LibraryRef{MachineName: l.MachineName, Major: l.Major, Minor: l.Minor, Patch: l.Patch}
}

// Content is a stored H5P content.
type Content struct {
	ID          int64
	Title       string
	MainLibrary string
	// LibraryVersion is "<major>.<minor>" of the main library.
	LibraryVersion string
	// UserID is the creator; edits never change it.
	UserID    int64
	CreatedAt time.Time
	UpdatedAt time.Time
	// Metadata is the package descriptor (h5p.json).
	Metadata json.RawMessage
	// Parameters is content.json, compact JSON. A string, as the database
	// driver gives it: parameters may be megabytes, and every conversion
	// would copy them for each reader.
	Parameters string
}

func libDir(machine string, major, minor int) string {
	return fmt.Sprintf("%s-%d.%d", machine, major, minor)
}

// libraryPrefix is the folder of every patch version of a library.
func libraryPrefix(dir string) string { return "h5p/libraries/" + dir + "/" }
func contentPrefix(id int64) string   { return "h5p/content/" + strconv.FormatInt(id, 10) + "/" }
func lockName(t *platform.Tenant, dir string) string {
	return "h5p-lib:" + tenantName(t) + ":" + dir
}

func tenantName(t *platform.Tenant) string {
	if t.Name != "" {
		return t.Name
	}
	return strconv.FormatInt(t.ID, 10)
}

// ParseLibrary reads "H5P.Foo 1.2" (the H5P way of naming a library with
// its major and minor version).
func ParseLibrary(s string) (machine string, major, minor int, err error) {
	name, version, ok := strings.Cut(strings.TrimSpace(s), " ")
	if ok {
		maj, min, ok2 := strings.Cut(version, ".")
		var e1, e2 error
		major, e1 = strconv.Atoi(maj)
		minor, e2 = strconv.Atoi(min)
		if ok2 && e1 == nil && e2 == nil && name != "" && major >= 0 && minor >= 0 {
			return name, major, minor, nil
		}
	}
	return "", 0, 0, apperr.Field("library", fmt.Sprintf("%q is not a library name such as \"H5P.Foo 1.2\".", s))
}

// compactJSON checks that b is a JSON object and returns it compacted.
func compactJSON(b []byte, field string) (string, error) {
	var buf bytes.Buffer
	if err := json.Compact(&buf, b); err != nil || buf.Len() == 0 || buf.Bytes()[0] != '{' {
		return "", apperr.Field(field, "Must be a JSON object.")
	}
	return buf.String(), nil
}

func contentType(name string) string {
	if ct := mime.TypeByExtension(path.Ext(name)); ct != "" {
		return ct
	}
	return "application/octet-stream"
}

func randomSuffix() string {
	b := make([]byte, 8)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// background keeps the values of ctx but not its cancellation, for clean-up
// that must run after ctx ended.
func background(ctx context.Context) context.Context { return context.WithoutCancel(ctx) }
