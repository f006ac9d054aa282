// This file is the interactive content kind: a topic that plays
// an uploaded web app (packages.go stores the packages,
// serves the app in a sandbox and records what it reports). This package
// says what a package manifest and a topic's settings may be, and when a
// learner's reports complete the topic.

package interactive

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/lms-platform/lms/internal/apperr"
	"github.com/lms-platform/lms/internal/content"
	"github.com/lms-platform/lms/internal/kinds/richtext"
	"github.com/lms-platform/lms/internal/platform"
)

// Class is the topicable class of interactive topics.
const Class = `Lms\TopicTypes\Models\TopicContent\Interactive`

// The settings that gate interactive topics.
const (
	EnabledSetting      = "lms_interactive.enabled"
	AllowNetworkSetting = "lms_interactive.allow_network"
)

// Completion rules of a topic.
const (
	OnOpen     = "on_open"
	OnRangeEnd = "on_range_end"
	OnComplete = "on_complete"
	OnScore    = "on_score"
)

// Displays of a topic.
const (
	Inline     = "inline"
	Background = "background"
)

// Limits of a topic's settings (the spec's Limits table).
const (
	MinHeight     = 240
	MaxHeight     = 2000
	DefaultHeight = 600
	MaxPackage    = 256 << 20
	maxText       = 1 << 20
	// playTTL is how long a play link works; the program is fetched again
	// long before that.
	playTTL = 6 * time.Hour
)

// Value is what an interactive topic stores.
type Value struct {
	Package int64 `json:"package"`
	// Version is the pinned version; 0 with FollowLatest.
	Version      int    `json:"version,omitempty"`
	FollowLatest bool   `json:"follow_latest,omitempty"`
	StartStep    string `json:"start_step,omitempty"`
	EndStep      string `json:"end_step,omitempty"`
	Completion   string `json:"completion"`
	PassScore    *int   `json:"pass_score,omitempty"`
	Display      string `json:"display"`
	Height       int    `json:"height,omitempty"`
	Text         string `json:"text,omitempty"`
	TextHTML     string `json:"text_html,omitempty"`
	// Network holds the origins the author accepted (acceptNetwork), as
	// the manifest listed them then: a later version (followLatest) gets
	// no origin nobody accepted.
	Network []string `json:"network,omitempty"`
}

// Version is one stored version of a package.
type Version struct {
	Package  int64
	Version  int
	Current  int
	Manifest Manifest
	// Prefix is the blob prefix of the version's files.
	Prefix string
}

// Packages is the package library the kind builds topics on (the
// Service of this package).
type Packages interface {
	// Add stores an uploaded .zip as a new package, once check has
	// accepted its manifest: a package check refuses is not stored. check
	// gets nil for a manifest with problems, to name the others with them.
	Add(ctx context.Context, t *platform.Tenant, f content.File, check func(*Manifest) error) (Version, error)
	// Version finds a package's version; 0 is its current version.
	Version(ctx context.Context, t *platform.Tenant, pkg int64, version int) (Version, error)
}

// Settings reads the tenant's settings.
type Settings interface {
	Bool(ctx context.Context, t *platform.Tenant, key string) (bool, error)
}

// Kind is the interactive kind.
type Kind struct {
	Packages Packages
	Settings Settings
}

func (*Kind) Class() string { return Class }
func (*Kind) Name() string  { return "interactive" }

// MaxUpload and Extensions describe the package a create may carry in its
// file field.
func (*Kind) MaxUpload() int64     { return MaxPackage }
func (*Kind) Extensions() []string { return []string{".zip"} }

// Fields documents the kind's fields of a topic create or update.
func (*Kind) Fields() map[string]*huma.Schema {
	integer := func(doc string, min, max *float64) *huma.Schema {
		return &huma.Schema{Type: huma.TypeInteger, Minimum: min, Maximum: max, Description: doc}
	}
	f := func(v float64) *float64 { return &v }
	return map[string]*huma.Schema{
		"version":      integer("Interactive: pins that version of the package; default: its current version. Not with followLatest.", f(1), nil),
		"followLatest": {Type: huma.TypeBoolean, Description: "Interactive: play every new version of the package instead of pinning one."},
		"startStep":    {Type: huma.TypeString, Description: "Interactive: step id of the manifest the played range starts at; default the first."},
		"endStep":      {Type: huma.TypeString, Description: "Interactive: step id of the manifest the played range ends at, after startStep; default the last."},
		"completion": {Type: huma.TypeString, Enum: []any{OnOpen, OnRangeEnd, OnComplete, OnScore},
			Description: "Interactive: when the topic completes: on_open (the app was opened), on_range_end (default: the app reported endStep), on_complete (the app reported completion), on_score (the app reported a score of at least passScore)."},
		"passScore": integer("Interactive: pass percentage, required with completion on_score and only with it.", f(0), f(100)),
		"display":   {Type: huma.TypeString, Enum: []any{Inline, Background}, Description: "Interactive: inline (default) or as the page's background."},
		"height":    integer("Interactive: height of an inline app in pixels; default 600. Not with background display.", f(MinHeight), f(MaxHeight)),
		"text":      {Type: huma.TypeString, Description: "Interactive: lesson text in Markdown shown with the app."},
		"acceptNetwork": {Type: huma.TypeBoolean, Description: "Interactive: accept the network origins the manifest lists; required (true) when it lists any, " +
			"and refused while the setting lms_interactive.allow_network is off."},
	}
}

// Build validates a create or update. On update, fields not sent keep
// their values, and the whole is checked again against the manifest.
func (k *Kind) Build(ctx context.Context, env content.Env, old json.RawMessage, in content.Input) (json.RawMessage, error) {
	if on, err := k.Enabled(ctx, env.Tenant); err != nil {
		return nil, err
	} else if !on {
		return nil, apperr.New(apperr.Forbidden, "Interactive topics are disabled on this platform (lms_interactive.enabled).")
	}
	v := Value{Completion: OnRangeEnd, Display: Inline}
	if old != nil {
		prev, err := Parse(old)
		if err != nil {
			return nil, err
		}
		v = prev
	}
	errs := apperr.Problems{}
	fail := errs.Add
	r := reader{in: in, fail: fail}

	file, fileField, hasFile := content.FileFrom(in, "file")
	pkg, hasPkg := r.integer("package")
	version, hasVersion := r.integer("version", "version_pin")
	follow, hasFollow := r.boolean("followLatest", "follow_latest")
	switch {
	case hasFile && hasPkg:
		fail("package", "Send either a package id or a .zip in file, not both.")
	case hasPkg && pkg < 1:
		fail("package", "The package must be the id of an uploaded package.")
	case !hasFile && !hasPkg && old == nil:
		fail("package", "The package field (or a .zip in the file field) is required.")
	}
	switch {
	case hasVersion && version < 1:
		fail("version", "The version must be at least 1.")
	case hasVersion && hasFile:
		// A package uploaded on the way has only its first version.
		fail("version", "The version pins a version of a package sent by its id; a .zip in file makes a new package.")
	}
	if hasFollow {
		v.FollowLatest = follow
	}
	if hasPkg || hasFile {
		// Another package: its versions and steps start over.
		v.Version, v.StartStep, v.EndStep = 0, "", ""
	}
	if hasVersion {
		v.Version = int(version)
	}
	if v.FollowLatest && hasVersion {
		fail("version", "A topic that follows the latest version pins none; send version or followLatest.")
	}
	if s, ok := in.Sent("startStep", "start_step"); ok {
		v.StartStep = strings.TrimSpace(s)
	}
	if s, ok := in.Sent("endStep", "end_step"); ok {
		v.EndStep = strings.TrimSpace(s)
	}
	if s, ok := in.Sent("completion"); ok {
		v.Completion = strings.TrimSpace(s)
	}
	if !slices.Contains([]string{OnOpen, OnRangeEnd, OnComplete, OnScore}, v.Completion) {
		fail("completion", "The completion must be on_open, on_range_end, on_complete or on_score.")
	}
	if n, ok := r.integer("passScore", "pass_score"); ok {
		if n < 0 || n > 100 {
			fail("passScore", "The passScore must be an integer from 0 to 100.")
		}
		p := int(n)
		v.PassScore = &p
	}
	switch sentScore := has(in, "passScore", "pass_score"); {
	case v.Completion == OnScore && v.PassScore == nil:
		fail("passScore", "The passScore is required with completion on_score.")
	case v.Completion != OnScore && sentScore:
		fail("passScore", "The passScore applies only to completion on_score.")
	case v.Completion != OnScore:
		v.PassScore = nil
	}
	if s, ok := in.Sent("display"); ok {
		v.Display = strings.TrimSpace(s)
		if v.Display == Background && !has(in, "height") {
			v.Height = 0
		}
	}
	if v.Display != Inline && v.Display != Background {
		fail("display", "The display must be inline or background.")
	}
	if n, ok := r.integer("height"); ok {
		if n < MinHeight || n > MaxHeight {
			fail("height", fmt.Sprintf("The height must be from %d to %d pixels.", MinHeight, MaxHeight))
		}
		v.Height = int(n)
	}
	if v.Display == Background && v.Height != 0 {
		fail("height", "The height applies only to inline display.")
	}
	if v.Display == Inline && v.Height == 0 {
		v.Height = DefaultHeight
	}
	if text, ok := in.Sent("text"); ok {
		if len(text) > maxText {
			fail("text", "The text may not be greater than 1 MiB.")
		} else if html, err := richtext.Render(text); err != nil {
			return nil, err
		} else {
			v.Text, v.TextHTML = text, html
		}
	}
	accept, hasAccept := r.boolean("acceptNetwork", "accept_network")
	if len(errs) > 0 && !hasFile {
		return nil, apperr.Validation(errs)
	}
	if !hasAccept && old != nil {
		accept = len(v.Network) > 0
	}
	// The problems of the fields above are named with those of a package
	// sent on the way, and those of the rules that depend on its manifest
	// when it has none of its own (m is nil then).
	check := func(m *Manifest) error {
		p := apperr.Problems{}
		for field, msgs := range errs {
			p[field] = slices.Clone(msgs)
		}
		if m == nil {
			return p.Err()
		}
		p.Join(v.checkSteps(*m))
		if err := k.checkNetwork(ctx, env.Tenant, *m, accept); !p.Join(err) {
			return err
		}
		return p.Err()
	}

	var ver Version
	var err error
	switch {
	case hasFile:
		if content.Ext(file.Name) != ".zip" {
			fail(fileField, "The file must be a .zip package with lms-interactive.json at its root.")
			return nil, errs.Err()
		}
		// Checked before the package is stored, so that a refused topic
		// leaves no package behind.
		ver, err = k.Packages.Add(ctx, env.Tenant, file, check)
	default:
		if hasPkg {
			v.Package = pkg
		}
		ver, err = k.Packages.Version(ctx, env.Tenant, v.Package, v.Version)
		if apperr.Is(err, apperr.NotFound) {
			field := "package"
			if v.Version != 0 {
				field = "version"
			}
			return nil, apperr.Field(field, "The package has no such version.")
		}
		if err == nil {
			err = check(&ver.Manifest)
		}
	}
	if err != nil {
		return nil, err
	}
	v.Package = ver.Package
	if !v.FollowLatest {
		v.Version = ver.Version
	} else {
		v.Version = 0
	}
	v.Network = nil
	if accept {
		v.Network = slices.Clone(ver.Manifest.Network)
	}
	return json.Marshal(v)
}

// checkSteps checks the played range against the manifest: named steps
// are steps of it, and the range, the defaults resolved, runs forward
// from its start to a later end (a manifest of one step plays just it).
// The field named is the one the topic names: endStep, else startStep.
func (v Value) checkSteps(m Manifest) error {
	errs := map[string][]string{}
	start, end := v.steps(m)
	if start < 0 {
		errs["startStep"] = []string{"The startStep must be a step id of the package's manifest."}
	}
	if end < 0 {
		errs["endStep"] = []string{"The endStep must be a step id of the package's manifest."}
	}
	if len(errs) == 0 && len(m.Steps) > 1 && start >= end {
		switch {
		case v.StartStep != "" && v.EndStep != "":
			errs["endStep"] = []string{"The endStep must come after the startStep."}
		case v.EndStep != "":
			errs["endStep"] = []string{"The endStep must come after the manifest's first step, where the range starts by default."}
		default:
			errs["startStep"] = []string{"The startStep must come before the manifest's last step, where the range ends by default."}
		}
	}
	if len(errs) > 0 {
		return apperr.Validation(errs)
	}
	return nil
}

// steps finds the played range in a manifest: the indexes of the steps
// the topic names, by default the first and the last; -1 for a step the
// manifest lacks.
func (v Value) steps(m Manifest) (start, end int) {
	start, end = 0, len(m.Steps)-1
	if v.StartStep != "" {
		start = m.Step(v.StartStep)
	}
	if v.EndStep != "" {
		end = m.Step(v.EndStep)
	}
	return start, end
}

// checkNetwork applies the acceptNetwork rule and the tenant's setting.
func (k *Kind) checkNetwork(ctx context.Context, t *platform.Tenant, m Manifest, accept bool) error {
	if len(m.Network) == 0 {
		return nil
	}
	if !accept {
		return apperr.Field("acceptNetwork", fmt.Sprintf("The app connects to %s; accept it with acceptNetwork.",
			strings.Join(m.Network, ", ")))
	}
	allowed, err := k.Settings.Bool(ctx, t, AllowNetworkSetting)
	if err != nil {
		return err
	}
	if !allowed {
		return apperr.Field("acceptNetwork", "Apps may not use the network on this platform (lms_interactive.allow_network).")
	}
	return nil
}

// Copy shares the package: the clone plays the same app.
func (*Kind) Copy(_ context.Context, _ content.Env, value json.RawMessage) (json.RawMessage, error) {
	return value, nil
}

// Remove keeps the package: it belongs to the library, not the topic.
func (*Kind) Remove(context.Context, content.Env, json.RawMessage) error { return nil }

// Enabled reports whether the tenant plays interactive topics (the
// setting lms_interactive.enabled). While it is off their topics are kept
// but not played, so that switching it on again brings them back.
func (k *Kind) Enabled(ctx context.Context, t *platform.Tenant) (bool, error) {
	return k.Settings.Bool(ctx, t, EnabledSetting)
}

// View is the value with the link that plays the app.
type View struct {
	Value
	PlayURL string `json:"play_url,omitempty"`
	// Disabled is true while the tenant has interactive topics switched
	// off: there is no play link, as the app would not be served.
	Disabled bool `json:"disabled,omitempty"`
}

// View shows the settings and a signed link that plays the app, or, while
// the tenant has the kind switched off, that it is.
func (*Kind) View(env content.Env, value json.RawMessage) (any, error) {
	v, err := Parse(value)
	if err != nil {
		return nil, err
	}
	if env.Off {
		return View{Value: v, Disabled: true}, nil
	}
	return View{Value: v, PlayURL: PlayURL(env.Tenant, env.TopicID, env.Now)}, nil
}

// CompletesItself: only an app's own reports complete it, unless it
// completes when opened.
func (*Kind) CompletesItself(value json.RawMessage) bool {
	v, err := Parse(value)
	return err != nil || v.Completion != OnOpen
}

// Parse reads a stored value.
func Parse(value json.RawMessage) (Value, error) {
	var v Value
	if err := json.Unmarshal(value, &v); err != nil {
		return v, fmt.Errorf("interactive: parse value: %w", err)
	}
	return v, nil
}

// Range is the played range of the manifest: the indexes of its first and
// last step. Build checked the range against the version it pinned; a
// later version (followLatest) may lack a step the topic names, or hold
// it elsewhere: a start it lacks falls back to the first step, an end it
// lacks or that no longer follows the start to the last.
func (v Value) Range(m Manifest) (int, int) {
	start, end := v.steps(m)
	if start < 0 {
		start = 0
	}
	if end <= start {
		end = len(m.Steps) - 1
	}
	return start, end
}

// Played is the played range's steps of a manifest, in order.
func (v Value) Played(m Manifest) []Step {
	start, end := v.Range(m)
	return m.Steps[start : end+1]
}

// PlayURL is the signed link of a topic's app:
// /api/interactive/play/<topic>-<expires>-<signature>/.
func PlayURL(t *platform.Tenant, topicID int64, now time.Time) string {
	return "/api/interactive/play/" + content.SignGrant(t.URLKey, grantPurpose, topicID, content.GrantExpiry(now, playTTL)) + "/"
}

// grantPurpose is what play links of apps are signed for.
const grantPurpose = "interactive"

// VerifyGrant checks a play link's grant and returns its topic id.
func VerifyGrant(t *platform.Tenant, grant string, now time.Time) (int64, error) {
	return content.VerifyGrant(t.URLKey, grantPurpose, grant, now)
}

func has(in content.Input, names ...string) bool {
	_, ok := in.Text(names...)
	return ok
}

// reader reads typed fields of an Input.
type reader struct {
	in   content.Input
	fail func(field, msg string)
}

// integer and boolean read fields sent empty too: an empty value is not
// a number or a truth, and is refused rather than taken for "not sent".
func (r reader) integer(names ...string) (int64, bool) {
	s, ok := r.in.Sent(names...)
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if err != nil {
		r.fail(names[0], fmt.Sprintf("The %s must be an integer.", names[0]))
		return 0, false
	}
	return n, true
}

func (r reader) boolean(names ...string) (bool, bool) {
	s, ok := r.in.Sent(names...)
	if !ok {
		return false, false
	}
	switch strings.TrimSpace(strings.ToLower(s)) {
	case "true", "1", "on", "yes":
		return true, true
	case "false", "0", "off", "no":
		return false, true
	}
	r.fail(names[0], fmt.Sprintf("The %s must be true or false.", names[0]))
	return false, false
}
