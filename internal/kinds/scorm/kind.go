// This file is the SCORM content kind: a topic plays one SCO of an
// uploaded SCORM package (scorm.go stores packages, launches
// SCOs and keeps the learners' tracks). This package says what a SCORM
// topic holds and checks the input of its creation.

package scorm

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/danielgtaylor/huma/v2"

	"github.com/lms-platform/lms/internal/apperr"
	"github.com/lms-platform/lms/internal/content"
	"github.com/lms-platform/lms/internal/platform"
)

// Class is the topicable class of SCORM topics.
const Class = `Lms\TopicTypes\Models\TopicContent\ScormSco`

// ScormPackage is an uploaded package as topics see it.
type ScormPackage struct {
	ID       int64    `json:"id"`
	Title    string   `json:"title"`
	Version  string   `json:"version"`
	SCOs     []SCO    `json:"scos"`
	Warnings []string `json:"warnings,omitempty"`
}

// SCO is one launchable item of a package.
type SCO struct {
	ID         int64  `json:"id"`
	Identifier string `json:"identifier"`
	Title      string `json:"title"`
	Launch     string `json:"launch"`
	ScormType  string `json:"scorm_type" enum:"sco,asset"`
}

// Packages stores and finds packages (Service).
type Packages interface {
	Import(ctx context.Context, t *platform.Tenant, f content.File) (ScormPackage, error)
	Package(ctx context.Context, t *platform.Tenant, id int64) (ScormPackage, error)
}

// Value is what a SCORM topic stores.
type Value struct {
	PackageID int64  `json:"package_id"`
	SCOID     int64  `json:"sco_id"`
	Title     string `json:"title"`
	Version   string `json:"version"`
}

// Kind is the SCORM kind.
type Kind struct {
	Packages Packages
}

func (Kind) Class() string { return Class }
func (Kind) Name() string  { return "scorm" }

// Fields documents the kind's fields of a topic create or update.
func (Kind) Fields() map[string]*huma.Schema {
	return map[string]*huma.Schema{
		"sco": {Description: "SCORM: the id of the SCO the topic plays (from the package's scos). Required when the package has several; " +
			"without it the answer is 422 with details.choices listing them."},
	}
}

// Build takes package (a file, or a package id) and sco. An update that
// sends neither keeps the old value; one that sends only sco picks another
// SCO of the same package.
func (k Kind) Build(ctx context.Context, env content.Env, old json.RawMessage, in content.Input) (json.RawMessage, error) {
	var prev Value
	if old != nil {
		if err := json.Unmarshal(old, &prev); err != nil {
			return nil, fmt.Errorf("scorm: stored value: %w", err)
		}
	}
	var pkg ScormPackage
	var err error
	f, upload := in.Files["package"]
	// Sent: a package or sco sent empty is refused, not taken for "not
	// sent".
	idText, byID := in.Sent("package", "package_id")
	scoText, hasSCO := in.Sent("sco", "sco_id")
	switch {
	case upload:
		pkg, err = k.Packages.Import(ctx, env.Tenant, f)
	case byID:
		id, perr := strconv.ParseInt(strings.TrimSpace(idText), 10, 64)
		if perr != nil || id < 1 {
			return nil, apperr.Validation(map[string][]string{"package": {"The package must be a .zip file or a package id."}})
		}
		pkg, err = k.Packages.Package(ctx, env.Tenant, id)
		if apperr.Is(err, apperr.NotFound) {
			return nil, apperr.Validation(map[string][]string{"package": {"The package does not exist."}})
		}
	case old != nil && !hasSCO:
		return old, nil
	case old != nil:
		pkg, err = k.Packages.Package(ctx, env.Tenant, prev.PackageID)
	default:
		return nil, apperr.Validation(map[string][]string{"package": {"A SCORM package (.zip) or the id of an uploaded package is required."}})
	}
	if err != nil {
		return nil, err
	}
	sco, err := chooseSCO(pkg, scoText, hasSCO)
	if err != nil {
		return nil, err
	}
	return json.Marshal(Value{PackageID: pkg.ID, SCOID: sco.ID, Title: sco.Title, Version: pkg.Version})
}

// chooseSCO picks the SCO the input names, or the only one.
func chooseSCO(pkg ScormPackage, text string, given bool) (SCO, error) {
	if given {
		id, err := strconv.ParseInt(strings.TrimSpace(text), 10, 64)
		for _, s := range pkg.SCOs {
			if err == nil && s.ID == id {
				return s, nil
			}
		}
		e := ChoicesError(pkg)
		e.Message = fmt.Sprintf("The sco %q is not a SCO of package %d; choose one of details.choices.", text, pkg.ID)
		return SCO{}, e
	}
	if len(pkg.SCOs) == 1 {
		return pkg.SCOs[0], nil
	}
	return SCO{}, ChoicesError(pkg)
}

// ChoicesError is the 422 of a package with several SCOs and none
// chosen: details.choices lists them and details.package names the
// package, so that the caller can retry with package and sco.
func ChoicesError(pkg ScormPackage) *apperr.Error {
	choices := make([]map[string]any, len(pkg.SCOs))
	for i, s := range pkg.SCOs {
		choices[i] = map[string]any{"id": s.ID, "identifier": s.Identifier, "title": s.Title}
	}
	return &apperr.Error{Kind: apperr.Invalid,
		Message: fmt.Sprintf("The package has %d SCOs; choose one with sco (details.choices lists them).", len(pkg.SCOs)),
		Fields:  map[string][]string{"sco": {"The sco field is required for a package with several SCOs."}},
		Code:    "sco_required", Details: map[string]any{"package": pkg.ID, "choices": choices}}
}

// Copy returns the value: a clone plays the same stored package.
func (Kind) Copy(_ context.Context, _ content.Env, value json.RawMessage) (json.RawMessage, error) {
	return value, nil
}

// Remove keeps the package: other topics may play it, and the tracks of
// the topic go with the topic.
func (Kind) Remove(context.Context, content.Env, json.RawMessage) error { return nil }

// CompletesItself: a SCORM topic completes when its SCO reports completed
// or passed, never by a progress write.
func (Kind) CompletesItself(json.RawMessage) bool { return true }

// View is what clients see of a SCORM topic: its package and SCO, launched
// with POST /api/scorm/launch/{sco}.
func (Kind) View(_ content.Env, value json.RawMessage) (any, error) {
	var v Value
	if err := json.Unmarshal(value, &v); err != nil {
		return nil, fmt.Errorf("scorm: parse value: %w", err)
	}
	return v, nil
}

// Parse reads a stored value.
func Parse(value json.RawMessage) (Value, error) {
	var v Value
	err := json.Unmarshal(value, &v)
	return v, err
}
