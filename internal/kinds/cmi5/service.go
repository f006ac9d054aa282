package cmi5

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"mime"
	"path"
	"strings"
	"time"

	"github.com/lms-platform/lms/internal/access"
	"github.com/lms-platform/lms/internal/apperr"
	"github.com/lms-platform/lms/internal/clock"
	"github.com/lms-platform/lms/internal/h5p/h5ppackage"
	"github.com/lms-platform/lms/internal/kinds"
	"github.com/lms-platform/lms/internal/lock"
	"github.com/lms-platform/lms/internal/lrs"
	"github.com/lms-platform/lms/internal/platform"
	"github.com/lms-platform/lms/internal/sqldb"
	"github.com/lms-platform/lms/internal/topics"
)

// Gate says whether a learner may record progress in a topic now
// (package learning).
type Gate = kinds.Gate

// TopicTime adds time a content kind measured itself to a learner's time
// on a topic (package learning).
type TopicTime interface {
	AddTopicTime(ctx context.Context, q sqldb.Querier, userID, topicID, seconds int64) error
}

// Service imports packages, launches AUs and applies cmi5's rules to the
// statements of their sessions.
type Service struct {
	Clock clock.Clock
	LRS   *lrs.Service
	// Progress completes a topic when its AU is satisfied; Gate says
	// whether a learner may launch (both package learning).
	Progress topics.ScoredCompleter
	Gate     Gate
	// Time adds a session's time to the learner's time on the topic
	// (package learning); nil: session time stays in cmi5_sessions.
	Time TopicTime

	// Locker orders the launches of one registration.
	Locker lock.Locker
	// SessionTimeout is how long a session may go without a statement
	// before it is abandoned (default DefaultSessionTimeout).
	SessionTimeout time.Duration
}

func (s *Service) now() time.Time { return s.Clock.Now().UTC().Truncate(time.Millisecond) }

// Cmi5Package is an imported course.
type Cmi5Package struct {
	ID        int64     `json:"id"`
	CourseIRI string    `json:"course_iri"`
	Title     string    `json:"title"`
	AUs       []AUInfo  `json:"aus"`
	Structure *Course   `json:"structure"`
	CreatedAt time.Time `json:"created_at"`

	filePrefix string
}

// AUInfo is an AU of an imported course with the id topics name it by.
type AUInfo struct {
	ID               int64    `json:"id"`
	IRI              string   `json:"iri"`
	Title            string   `json:"title"`
	URL              string   `json:"url"`
	MoveOn           string   `json:"move_on"`
	MasteryScore     *float64 `json:"mastery_score,omitempty"`
	LaunchMethod     string   `json:"launch_method"`
	LaunchParameters string   `json:"launch_parameters,omitempty"`
	EntitlementKey   string   `json:"entitlement_key,omitempty"`
	// Blocks are the IRIs of the blocks holding the AU, outermost first.
	Blocks []string `json:"blocks"`

	packageID int64
}

var errEditor = apperr.New(apperr.Forbidden, "This action is unauthorized.")

// CanImport tells whether p may upload cmi5 packages: whoever may author
// courses.
func CanImport(p *access.Principal) bool {
	return p.Has(access.CourseUpdate) || p.Has(access.CourseUpdateAuthored) || p.Has(access.CourseCreate)
}

// Upload is an uploaded file: a zip package or a bare cmi5.xml.
type Upload struct {
	Name string
	Data []byte
}

// Import checks an uploaded package (a zip with cmi5.xml at its root, or
// a bare cmi5.xml with absolute AU URLs), stores its files and records the
// course and its AUs.
func (s *Service) Import(ctx context.Context, t *platform.Tenant, p *access.Principal, up Upload) (Cmi5Package, error) {
	if !CanImport(p) {
		return Cmi5Package{}, errEditor
	}
	data := up.Data
	isZip := len(data) >= 4 && bytes.Equal(data[:4], []byte("PK\x03\x04")) || strings.HasSuffix(strings.ToLower(up.Name), ".zip")
	var course *Course
	prefix := ""
	if isZip {
		c, pkg, err := OpenZip(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			return Cmi5Package{}, err
		}
		course = c
		prefix = "cmi5/" + randomHex(12) + "/"
		for _, name := range pkg.Files() {
			if err := s.storeFile(ctx, t, pkg, prefix, name); err != nil {
				t.Blob.DeletePrefix(context.WithoutCancel(ctx), prefix)
				return Cmi5Package{}, err
			}
		}
	} else {
		c, err := Parse(data, nil)
		if err != nil {
			return Cmi5Package{}, StructureError(err)
		}
		course = c
	}
	out := Cmi5Package{CourseIRI: course.ID, Title: Text(course.Title), Structure: course, CreatedAt: s.now(), filePrefix: prefix}
	blocks := course.Blocks()
	for _, au := range course.AUs() {
		info := AUInfo{IRI: au.ID, Title: Text(au.Title), URL: au.URL, MoveOn: au.MoveOn, MasteryScore: au.MasteryScore,
			LaunchMethod: au.LaunchMethod, LaunchParameters: au.LaunchParameters, EntitlementKey: au.EntitlementKey, Blocks: []string{}}
		for _, b := range blocks[au.ID] {
			info.Blocks = append(info.Blocks, b.ID)
		}
		out.AUs = append(out.AUs, info)
	}
	var creator *int64
	if p.UserID > 0 {
		creator = &p.UserID
	}
	err := t.Tx(ctx, func(tx *sqldb.Tx) error { return insertPackage(ctx, tx, &out, creator) })
	if err != nil {
		if prefix != "" {
			t.Blob.DeletePrefix(context.WithoutCancel(ctx), prefix)
		}
		return Cmi5Package{}, err
	}
	return out, nil
}

func (s *Service) storeFile(ctx context.Context, t *platform.Tenant, pkg *h5ppackage.Package, prefix, name string) error {
	rc, err := pkg.Open(name)
	if err != nil {
		return h5ppackage.AsAPIError("package", err)
	}
	defer rc.Close()
	ct := mime.TypeByExtension(path.Ext(name))
	if ct == "" {
		ct = "application/octet-stream"
	}
	if err := t.Blob.Put(ctx, prefix+name, rc, -1, ct); err != nil {
		return fmt.Errorf("cmi5: store %s: %w", name, h5ppackage.AsAPIError("package", err))
	}
	return nil
}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// Get loads an imported package with its AUs.
func (s *Service) Get(ctx context.Context, t *platform.Tenant, id int64) (Cmi5Package, error) {
	return packageByID(ctx, t.DB, id)
}

// Choices is the 422 of a topic that names no AU of a package with
// several: details.choices lists them.
func Choices(pkg Cmi5Package, message string) error {
	choices := make([]map[string]any, len(pkg.AUs))
	for i, au := range pkg.AUs {
		choices[i] = map[string]any{"id": au.ID, "title": au.Title, "iri": au.IRI}
	}
	if message == "" {
		message = fmt.Sprintf("The package has %d AUs; choose one with au.", len(pkg.AUs))
	}
	e := apperr.Field("au", message)
	e.Details = map[string]any{"choices": choices}
	return e
}

func structureJSON(c *Course) (string, error) {
	b, err := json.Marshal(c)
	return string(b), err
}
