// Package manifest reads the imsmanifest.xml of a SCORM package: the
// version (1.2, or 2004 2nd, 3rd or 4th edition), the organizations and
// their items, the resources, and what SCORM adds to items (masteryscore,
// maxtimeallowed, timelimitaction, datafromlms, 1.2 prerequisites, 2004
// completion thresholds and sequencing). It decides which items can be
// launched and where they launch, and checks the manifest against the
// files of the package.
//
// It is strict where a learner would be hurt (a launch file that is not
// in the package, a SCO without a launch URL, an organization that cannot
// be found) and tolerant, with a warning, where the commercial engines
// play the package anyway (an item naming a resource that does not exist
// is left out; a listed <file> that is absent is reported).
package manifest

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"net/url"
	"path"
	"strconv"
	"strings"
)

// The SCORM versions a manifest may declare.
const (
	V12       = "1.2"
	V2004Ed2  = "2004 2nd Edition"
	V2004Ed3  = "2004 3rd Edition"
	V2004Ed4  = "2004 4th Edition"
	maxDepth  = 64
	maxItems  = 10000
	maxIDSize = 4000
)

// Is2004 tells whether a version is one of the SCORM 2004 editions.
func Is2004(version string) bool { return strings.HasPrefix(version, "2004") }

// Manifest is a parsed imsmanifest.xml.
type Manifest struct {
	Identifier string `json:"identifier"`
	Version    string `json:"version"`
	// Title is the default organization's title.
	Title                string         `json:"title"`
	DefaultOrganization  string         `json:"default_organization"`
	Organizations        []Organization `json:"organizations"`
	Resources            []Resource     `json:"resources"`
	SequencingCollection []Sequencing   `json:"sequencing_collection,omitempty"`
	// Warnings name what a strict reader would refuse and the package is
	// played without.
	Warnings []string `json:"warnings,omitempty"`
}

// Organization is one organization: a tree of items.
type Organization struct {
	Identifier               string      `json:"identifier"`
	Title                    string      `json:"title"`
	Items                    []Item      `json:"items"`
	Sequencing               *Sequencing `json:"sequencing,omitempty"`
	ObjectivesGlobalToSystem *bool       `json:"objectives_global_to_system,omitempty"`
	SharedDataGlobalToSystem *bool       `json:"shared_data_global_to_system,omitempty"`
}

// Item is one item of an organization: an aggregation of child items, or
// a leaf that launches a resource.
type Item struct {
	Identifier    string `json:"identifier"`
	Title         string `json:"title"`
	IdentifierRef string `json:"identifierref,omitempty"`
	Parameters    string `json:"parameters,omitempty"`
	Visible       bool   `json:"visible"`
	// File is the package file the item launches ("shared/launch.html"),
	// Launch its URL relative to the package root, with the resource's
	// query and the item's parameters; both empty when the item launches
	// nothing.
	File      string `json:"file,omitempty"`
	Launch    string `json:"launch,omitempty"`
	ScormType string `json:"scorm_type,omitempty"`
	// MasteryScore (1.2) is the score from 0 to 100 that passes.
	MasteryScore    *float64 `json:"mastery_score,omitempty"`
	MaxTimeAllowed  string   `json:"max_time_allowed,omitempty"`
	TimeLimitAction string   `json:"time_limit_action,omitempty"`
	DataFromLMS     string   `json:"data_from_lms,omitempty"`
	// Prerequisites (1.2) is the aicc_script expression naming the items
	// to complete first (see Prerequisite).
	Prerequisites       string      `json:"prerequisites,omitempty"`
	CompletionThreshold *Threshold  `json:"completion_threshold,omitempty"`
	Sequencing          *Sequencing `json:"sequencing,omitempty"`
	HideLMSUI           []string    `json:"hide_lms_ui,omitempty"`
	Items               []Item      `json:"items,omitempty"`
}

// Threshold is a 2004 completion threshold.
type Threshold struct {
	CompletedByMeasure *bool   `json:"completed_by_measure,omitempty"`
	MinProgressMeasure float64 `json:"min_progress_measure"`
	ProgressWeight     float64 `json:"progress_weight"`
}

// Resource is one resource of the manifest.
type Resource struct {
	Identifier   string   `json:"identifier"`
	Type         string   `json:"type"`
	ScormType    string   `json:"scorm_type"`
	Href         string   `json:"href,omitempty"`
	Base         string   `json:"base,omitempty"`
	Files        []string `json:"files,omitempty"`
	Dependencies []string `json:"dependencies,omitempty"`
}

// Error lists every problem that makes a manifest unplayable, each in a
// sentence that names it.
type Error struct {
	Problems []string
}

func (e *Error) Error() string { return strings.Join(e.Problems, " ") }

// Launchables lists the items of the default organization that launch
// something, in the order a learner meets them.
func (m *Manifest) Launchables() []Item {
	var out []Item
	for _, o := range m.Organizations {
		if o.Identifier == m.DefaultOrganization {
			walk(o.Items, func(it Item) {
				if it.Launch != "" {
					it.Items = nil
					out = append(out, it)
				}
			})
		}
	}
	return out
}

// Default returns the default organization.
func (m *Manifest) Default() Organization {
	for _, o := range m.Organizations {
		if o.Identifier == m.DefaultOrganization {
			return o
		}
	}
	return Organization{}
}

func walk(items []Item, f func(Item)) {
	for _, it := range items {
		f(it)
		walk(it.Items, f)
	}
}

// Parse reads a manifest. has tells whether the package holds a file
// (a clean relative path such as "shared/launch.html").
func Parse(data []byte, has func(name string) bool) (*Manifest, error) {
	var x xManifest
	if err := decode(data, &x); err != nil {
		return nil, &Error{Problems: []string{"imsmanifest.xml is not well-formed XML: " + err.Error() + "."}}
	}
	p := &parser{has: has, m: &Manifest{Identifier: x.Identifier}, ids: map[string]bool{}}
	p.m.Version = p.detect(&x)
	p.resources(&x)
	p.organizations(&x)
	p.m.SequencingCollection = x.Collection
	if len(x.Submanifests) > 0 {
		p.warn("The package's sub-manifests are ignored.")
	}
	if len(p.problems) > 0 {
		return nil, &Error{Problems: p.problems}
	}
	return p.m, nil
}

// decode unmarshals with the limits a hostile manifest needs: no
// external entities or DTDs are fetched (encoding/xml never does), and
// nesting is bounded so that a deep document cannot exhaust the stack.
func decode(data []byte, x *xManifest) error {
	depth := 0
	d := xml.NewDecoder(bytes.NewReader(data))
	d.CharsetReader = func(label string, in io.Reader) (io.Reader, error) {
		switch strings.ToLower(label) {
		case "utf-8", "us-ascii", "ascii", "iso-8859-1", "latin1", "windows-1252":
			// Authoring tools that declare a Latin charset write ASCII in
			// practice; bytes above 127 would be mis-read, never unsafe.
			return in, nil
		}
		return nil, fmt.Errorf("unsupported encoding %q", label)
	}
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		switch tok.(type) {
		case xml.StartElement:
			depth++
			if depth > maxDepth {
				return fmt.Errorf("elements nested deeper than %d", maxDepth)
			}
		case xml.EndElement:
			depth--
		}
	}
	d = xml.NewDecoder(bytes.NewReader(data))
	d.CharsetReader = func(_ string, in io.Reader) (io.Reader, error) { return in, nil }
	if err := d.Decode(x); err != nil {
		return err
	}
	if x.XMLName.Local != "manifest" {
		return fmt.Errorf("the root element is <%s>, not <manifest>", x.XMLName.Local)
	}
	return nil
}

type parser struct {
	has      func(string) bool
	m        *Manifest
	problems []string
	byID     map[string]*Resource
	ids      map[string]bool
	count    int
}

func (p *parser) fail(format string, args ...any) {
	p.problems = append(p.problems, fmt.Sprintf(format, args...))
}

func (p *parser) warn(format string, args ...any) {
	p.m.Warnings = append(p.m.Warnings, fmt.Sprintf(format, args...))
}

// detect reads the version from metadata/schemaversion, and from the
// namespaces when the manifest does not say.
func (p *parser) detect(x *xManifest) string {
	switch v := strings.ToLower(strings.TrimSpace(x.Metadata.SchemaVersion)); v {
	case "1.2":
		return V12
	case "cam 1.3", "2004 2nd edition", "1.3":
		return V2004Ed2
	case "2004 3rd edition":
		return V2004Ed3
	case "2004 4th edition":
		return V2004Ed4
	case "":
	default:
		p.warn("The schemaversion %q is unknown; the version is taken from the namespaces.", x.Metadata.SchemaVersion)
	}
	for _, a := range x.Namespaces {
		if strings.Contains(a.Value, "adlcp_v1p3") || strings.Contains(a.Value, "imsss") {
			p.warn("The manifest does not declare its SCORM version; it is read as SCORM 2004 3rd Edition.")
			return V2004Ed3
		}
	}
	if x.XMLName.Space == "http://www.imsglobal.org/xsd/imscp_v1p1" {
		p.warn("The manifest does not declare its SCORM version; it is read as SCORM 2004 3rd Edition.")
		return V2004Ed3
	}
	if strings.TrimSpace(x.Metadata.SchemaVersion) == "" {
		p.warn("The manifest does not declare its SCORM version; it is read as SCORM 1.2.")
	}
	return V12
}

func (p *parser) resources(x *xManifest) {
	p.byID = map[string]*Resource{}
	var missing []string
	for _, xr := range x.Resources.List {
		r := Resource{Identifier: xr.Identifier, Type: xr.Type, ScormType: strings.ToLower(xr.ScormType12 + xr.ScormType),
			Base: joinBase(x.Base, x.Resources.Base, xr.Base)}
		if r.ScormType == "" {
			r.ScormType = "asset"
		}
		if xr.Href != nil {
			r.Href = strings.TrimSpace(*xr.Href)
		}
		if r.Identifier == "" {
			p.fail("A resource has no identifier.")
			continue
		}
		if _, dup := p.byID[r.Identifier]; dup {
			p.fail("The resource identifier %q is used twice.", r.Identifier)
			continue
		}
		for _, f := range xr.Files {
			r.Files = append(r.Files, f.Href)
			if name, ok := packagePath(r.Base, f.Href); ok && !p.has(name) {
				missing = append(missing, name)
			}
		}
		for _, d := range xr.Dependencies {
			r.Dependencies = append(r.Dependencies, d.IdentifierRef)
		}
		p.m.Resources = append(p.m.Resources, r)
		p.byID[r.Identifier] = &p.m.Resources[len(p.m.Resources)-1]
	}
	for i := range p.m.Resources {
		for _, d := range p.m.Resources[i].Dependencies {
			if _, ok := p.byID[d]; !ok {
				p.warn("The resource %q depends on %q, which the manifest does not hold.", p.m.Resources[i].Identifier, d)
			}
		}
	}
	if len(missing) > 0 {
		shown := missing[:min(len(missing), 5)]
		p.warn("%d file(s) the manifest lists are not in the package: %s.", len(missing), strings.Join(shown, ", "))
	}
}

func (p *parser) organizations(x *xManifest) {
	orgs := x.Organizations
	if len(orgs.List) == 0 {
		p.fail("The manifest has no <organization>, so nothing can be launched.")
		return
	}
	for i, xo := range orgs.List {
		o := Organization{Identifier: strings.TrimSpace(xo.Identifier), Sequencing: xo.Sequencing,
			ObjectivesGlobalToSystem: xo.ObjectivesGlobalToSys, SharedDataGlobalToSystem: xo.SharedDataGlobalToSys}
		if o.Identifier == "" {
			p.fail("The organization %d has no identifier attribute.", i+1)
		}
		if xo.Title == nil || strings.TrimSpace(*xo.Title) == "" {
			p.fail("The organization %q is missing its required <title> element.", o.Identifier)
		} else {
			o.Title = strings.TrimSpace(*xo.Title)
		}
		o.Items = p.items(xo.Items, 0)
		p.m.Organizations = append(p.m.Organizations, o)
	}
	def := strings.TrimSpace(orgs.Default)
	switch {
	case def == "":
		def = p.m.Organizations[0].Identifier
	case !p.hasOrg(def):
		p.fail("The default organization %q is not in the manifest.", def)
	}
	p.m.DefaultOrganization = def
	p.m.Title = p.m.Default().Title
	if len(p.problems) == 0 && len(p.m.Launchables()) == 0 {
		p.fail("The default organization has no item that launches a resource.")
	}
}

func (p *parser) hasOrg(id string) bool {
	for _, o := range p.m.Organizations {
		if o.Identifier == id {
			return true
		}
	}
	return false
}

func (p *parser) items(xs []xItem, depth int) []Item {
	var out []Item
	for _, xi := range xs {
		p.count++
		if p.count > maxItems {
			if p.count == maxItems+1 {
				p.fail("The manifest has more than %d items.", maxItems)
			}
			return out
		}
		it := p.item(xi)
		it.Items = p.items(xi.Items, depth+1)
		out = append(out, it)
	}
	return out
}

func (p *parser) item(xi xItem) Item {
	it := Item{Identifier: strings.TrimSpace(xi.Identifier), Title: strings.TrimSpace(xi.Title),
		IdentifierRef: strings.TrimSpace(xi.IdentifierRef), Parameters: strings.TrimSpace(xi.Parameters),
		Visible: xi.IsVisible == nil || *xi.IsVisible, MaxTimeAllowed: strings.TrimSpace(xi.MaxTimeAllowed),
		TimeLimitAction: first(xi.TimeLimitAction, xi.TimeLimitAction2004),
		DataFromLMS:     first(xi.DataFromLMS, xi.DataFromLMS2004), Sequencing: xi.Sequencing}
	switch {
	case it.Identifier == "":
		p.fail("An item (%q) has no identifier.", it.Title)
	case len(it.Identifier) > maxIDSize:
		p.fail("An item identifier is longer than %d characters.", maxIDSize)
	case p.ids[it.Identifier]:
		p.fail("The item identifier %q is used twice.", it.Identifier)
	}
	p.ids[it.Identifier] = true
	if it.Title == "" {
		p.warn("The item %q has no title; its identifier stands in.", it.Identifier)
		it.Title = it.Identifier
	}
	if xi.Presentation != nil {
		it.HideLMSUI = xi.Presentation.Hide
	}
	if s := strings.TrimSpace(xi.MasteryScore); s != "" {
		f, err := strconv.ParseFloat(s, 64)
		if err != nil || f < 0 || f > 100 {
			p.warn("The masteryscore %q of item %q is not a number from 0 to 100; it is ignored.", s, it.Identifier)
		} else {
			it.MasteryScore = &f
		}
	}
	for _, pr := range xi.Prerequisites {
		expr := strings.TrimSpace(pr.Value)
		if expr == "" {
			continue
		}
		if _, err := parsePrerequisite(expr); err != nil {
			p.warn("The prerequisites %q of item %q cannot be read (%v); they are ignored.", expr, it.Identifier, err)
			continue
		}
		it.Prerequisites = expr
	}
	if t := xi.CompletionThreshold; t != nil {
		it.CompletionThreshold = threshold(t)
	}
	if it.IdentifierRef == "" {
		return it
	}
	r, ok := p.byID[it.IdentifierRef]
	if !ok {
		p.warn("The item %q names the resource %q, which the manifest does not hold; the item is left out.", it.Identifier, it.IdentifierRef)
		return it
	}
	it.ScormType = r.ScormType
	if r.Href == "" {
		p.fail("The resource %q of item %q is missing its required launch URL (href).", r.Identifier, it.Identifier)
		return it
	}
	if len(xi.Items) > 0 {
		p.warn("The item %q has child items and a resource; only its children are launched.", it.Identifier)
		return it
	}
	p.launch(&it, r)
	return it
}

func first(lists ...[]string) string {
	for _, l := range lists {
		for _, s := range l {
			if s = strings.TrimSpace(s); s != "" {
				return s
			}
		}
	}
	return ""
}

func threshold(t *xThreshold) *Threshold {
	out := &Threshold{CompletedByMeasure: t.CompletedByMeasure, ProgressWeight: 1}
	num := func(s string, def float64) float64 {
		if f, err := strconv.ParseFloat(strings.TrimSpace(s), 64); err == nil && f >= 0 && f <= 1 {
			return f
		}
		return def
	}
	// 2nd edition puts the threshold in the text, later ones in attributes.
	out.MinProgressMeasure = num(t.MinProgressMeasure, num(t.Value, 1))
	out.ProgressWeight = num(t.ProgressWeight, 1)
	return out
}

// launch resolves the item's launch file and URL: the resource's href
// under its xml:base, with the href's query and the item's parameters.
func (p *parser) launch(it *Item, r *Resource) {
	href, query, frag := splitURL(r.Href)
	if isExternal(r.Href) {
		p.fail("The resource %q of item %q launches the external address %q; only files of the package can be played.", r.Identifier, it.Identifier, r.Href)
		return
	}
	name, ok := packagePath(r.Base, href)
	if !ok {
		p.fail("The launch URL %q of item %q leaves the package.", r.Href, it.Identifier)
		return
	}
	if !p.has(name) {
		p.fail("The launch file %q of item %q is not in the package.", name, it.Identifier)
		return
	}
	// The item's parameters join the href's query (IMS Content Packaging
	// best practice: a leading '?' or '&' is dropped, a '#' starts a
	// fragment).
	params := it.Parameters
	if i := strings.IndexByte(params, '#'); i >= 0 {
		if frag == "" {
			frag = params[i+1:]
		}
		params = params[:i]
	}
	params = strings.TrimLeft(params, "?&")
	switch {
	case query != "" && params != "":
		query += "&" + params
	case params != "":
		query = params
	}
	it.File = name
	it.Launch = (&url.URL{Path: name}).EscapedPath()
	if query != "" {
		it.Launch += "?" + query
	}
	if frag != "" {
		it.Launch += "#" + frag
	}
}

func splitURL(s string) (pathPart, query, frag string) {
	if i := strings.IndexByte(s, '#'); i >= 0 {
		s, frag = s[:i], s[i+1:]
	}
	if i := strings.IndexByte(s, '?'); i >= 0 {
		s, query = s[:i], s[i+1:]
	}
	return s, query, frag
}

func isExternal(s string) bool {
	if strings.HasPrefix(s, "//") {
		return true
	}
	u, err := url.Parse(s)
	return err == nil && u.Scheme != ""
}

// joinBase joins the xml:base values from the outside in.
func joinBase(bases ...string) string {
	out := ""
	for _, b := range bases {
		b = strings.TrimSpace(b)
		if b == "" {
			continue
		}
		if strings.HasPrefix(b, "/") || isExternal(b) {
			out = b
			continue
		}
		if out != "" && !strings.HasSuffix(out, "/") {
			out += "/"
		}
		out += b
	}
	return out
}

// packagePath turns an href under base into the clean path of a package
// file; false when it is absolute, external or leaves the package.
func packagePath(base, href string) (string, bool) {
	href, _, _ = splitURL(strings.TrimSpace(href))
	if href == "" || isExternal(base) || isExternal(href) {
		return "", false
	}
	joined := href
	if base != "" {
		joined = strings.TrimSuffix(base, "/") + "/" + href
	}
	if dec, err := url.PathUnescape(joined); err == nil {
		joined = dec
	}
	if strings.HasPrefix(joined, "/") || strings.Contains(joined, "\\") {
		return "", false
	}
	clean := path.Clean(joined)
	if clean == "." || clean == ".." || strings.HasPrefix(clean, "../") {
		return "", false
	}
	return clean, true
}
