package cmi5

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net/url"
	"regexp"
	"strconv"
	"strings"
)

// Limits of a course structure; beyond them the document is refused
// before it is checked.
const (
	MaxStructureSize = 16 << 20
	maxDepth         = 64
	maxElements      = 1_000_000
	// MaxAUs bounds the AUs of one course.
	MaxAUs = 10_000
)

// LaunchParameterNames are the query parameters the LMS adds to an AU's
// URL at launch (cmi5 section 8.1); an AU URL may not carry them itself.
var LaunchParameterNames = []string{"endpoint", "fetch", "actor", "registration", "activityId"}

// Parse reads and checks a course structure. fileExists tells whether a
// relative AU URL's file is in the package; nil means a bare cmi5.xml,
// whose AU URLs must then be absolute. Every problem found is returned in
// one *Error.
func Parse(data []byte, fileExists func(name string) bool) (*Course, error) {
	if len(data) > MaxStructureSize {
		return nil, &Error{Problems: []Problem{{Path: "/", Message: fmt.Sprintf("The course structure is larger than %d bytes.", MaxStructureSize)}}}
	}
	root, err := readTree(data)
	if err != nil {
		return nil, &Error{Problems: []Problem{{Path: "/", Message: "The course structure is not well-formed XML: " + err.Error()}}}
	}
	c := &checker{ids: map[string]string{}, declared: map[string]bool{}, fileExists: fileExists}
	course := c.courseStructure(root)
	c.checkObjectiveRefs()
	if len(c.problems) > 0 {
		return nil, &Error{Problems: c.problems}
	}
	return course, nil
}

// readTree builds the element tree of data, keeping foreign elements as
// written.
func readTree(data []byte) (*element, error) {
	d := xml.NewDecoder(bytes.NewReader(data))
	// Documents are UTF-8 (or ASCII); other charsets are refused rather
	// than guessed.
	d.CharsetReader = func(label string, in io.Reader) (io.Reader, error) {
		if strings.EqualFold(label, "utf-8") || strings.EqualFold(label, "us-ascii") {
			return in, nil
		}
		return nil, fmt.Errorf("unsupported encoding %q", label)
	}
	var stack []*element
	var starts []int64
	var root *element
	count := 0
	counts := []map[string]int{{}}
	for {
		offset := d.InputOffset()
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			count++
			if count > maxElements || len(stack) >= maxDepth {
				return nil, errors.New("too many or too deeply nested elements")
			}
			parentPath := ""
			if len(stack) > 0 {
				parentPath = stack[len(stack)-1].path
			} else if root != nil {
				return nil, errors.New("more than one root element")
			}
			e := &element{name: t.Name, attrs: t.Attr, path: childPath(parentPath, t.Name, counts[len(counts)-1])}
			if len(stack) == 0 {
				root = e
				e.path = "/" + t.Name.Local
			} else {
				parent := stack[len(stack)-1]
				parent.children = append(parent.children, e)
			}
			stack = append(stack, e)
			starts = append(starts, offset)
			counts = append(counts, map[string]int{})
		case xml.EndElement:
			e := stack[len(stack)-1]
			if e.foreign() {
				e.raw = string(data[starts[len(starts)-1]:d.InputOffset()])
			}
			stack, starts, counts = stack[:len(stack)-1], starts[:len(starts)-1], counts[:len(counts)-1]
		case xml.CharData:
			if len(stack) > 0 {
				stack[len(stack)-1].text.Write(t)
			} else if len(bytes.TrimSpace(t)) > 0 {
				return nil, errors.New("text outside the root element")
			}
		case xml.Directive:
			// A DOCTYPE could declare entities; the decoder does not expand
			// them, and cmi5 documents have no use for one.
			return nil, errors.New("DOCTYPE declarations are not allowed")
		}
	}
	if root == nil {
		return nil, errors.New("no root element")
	}
	return root, nil
}

type checker struct {
	problems   []Problem
	ids        map[string]string // id -> path of its first use
	declared   map[string]bool
	refs       []Problem // objective references: Path where, Message the idref
	fileExists func(string) bool
	aus        int
}

func (c *checker) fail(path, format string, args ...any) {
	c.problems = append(c.problems, Problem{Path: path, Message: fmt.Sprintf(format, args...)})
}

// id reads a required id attribute: an absolute IRI unique in the course.
func (c *checker) id(e *element) string {
	id, ok := e.attr("id")
	if !ok {
		c.fail(e.path, "The id attribute is required.")
		return ""
	}
	id = strings.TrimSpace(id)
	if !absoluteIRI(id) {
		c.fail(e.path+"/@id", "The id %q is not an absolute IRI.", id)
	}
	if first, dup := c.ids[id]; dup {
		c.fail(e.path+"/@id", "The id %q is already used by %s; ids must be unique in the course.", id, first)
	} else {
		c.ids[id] = e.path
	}
	return id
}

var schemeRe = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*:`)

// absoluteIRI tells whether s is an absolute IRI: a scheme, something
// after it, and no spaces or control characters.
func absoluteIRI(s string) bool {
	if !schemeRe.MatchString(s) || len(s) > 2048 {
		return false
	}
	for _, r := range s {
		if r <= ' ' || r == 0x7f || strings.ContainsRune(`<>"{}|\^`+"`", r) {
			return false
		}
	}
	i := strings.IndexByte(s, ':')
	return i+1 < len(s)
}

// attrs refuses attributes without a namespace other than allowed;
// attributes in other namespaces are extensions and allowed.
func (c *checker) attrs(e *element, allowed ...string) {
	for _, a := range e.attrs {
		if a.Name.Space == "xmlns" || a.Name.Space == "" && a.Name.Local == "xmlns" {
			continue
		}
		if a.Name.Space == "" || a.Name.Space == Namespace {
			ok := false
			for _, name := range allowed {
				ok = ok || a.Name.Local == name && a.Name.Space == ""
			}
			if !ok {
				c.fail(e.path+"/@"+a.Name.Local, "The attribute %s is not allowed here.", a.Name.Local)
			}
		}
	}
}

// sequence walks e's children in the order of names (each name once,
// "?" suffix for optional ones), then calls choice for the repeated
// part (when not nil), then takes foreign elements to the end; it reports
// children out of place. It returns the children by name and the foreign
// ones as written.
func (c *checker) sequence(e *element, names []string, choice func(*element) bool) (map[string]*element, []string) {
	got := map[string]*element{}
	var foreign []string
	i := 0
	inChoice, choiceSeen, inForeign := false, false, false
	for _, ch := range e.children {
		if ch.foreign() {
			inForeign = true
			foreign = append(foreign, ch.raw)
			continue
		}
		if inForeign {
			c.fail(ch.path, "The element %s comes after extension elements; extensions belong at the end.", ch.name.Local)
			continue
		}
		if !inChoice {
			if j := position(names, i, ch.name.Local); j >= 0 {
				c.missing(e, names[i:j])
				got[ch.name.Local] = ch
				i = j + 1
				continue
			}
		}
		if choice != nil && choice(ch) {
			if !inChoice {
				c.missing(e, names[i:])
				i = len(names)
			}
			inChoice, choiceSeen = true, true
			continue
		}
		c.fail(ch.path, "The element %s is not allowed here.", ch.name.Local)
	}
	c.missing(e, names[i:])
	if choice != nil && !choiceSeen {
		c.fail(e.path, "At least one au or block is required.")
	}
	return got, foreign
}

// position is the index of local among names[from:] (names may carry a
// "?" suffix), or -1.
func position(names []string, from int, local string) int {
	for j := from; j < len(names); j++ {
		if strings.TrimSuffix(names[j], "?") == local {
			return j
		}
	}
	return -1
}

// missing reports the required names of skipped.
func (c *checker) missing(e *element, skipped []string) {
	for _, name := range skipped {
		if !strings.HasSuffix(name, "?") {
			c.fail(e.path, "The element %s is missing.", name)
		}
	}
}

func (c *checker) courseStructure(root *element) *Course {
	if !root.cmi5("courseStructure") {
		c.fail(root.path, "The root element must be courseStructure in the namespace %s.", Namespace)
		return nil
	}
	c.attrs(root)
	course := &Course{}
	got, ext := c.sequence(root, []string{"course", "objectives?"}, func(ch *element) bool {
		n, ok := c.node(ch)
		if ok {
			course.Children = append(course.Children, n)
		}
		return ok
	})
	course.Extensions = ext
	if e := got["course"]; e != nil {
		c.attrs(e, "id")
		course.ID = c.id(e)
		g, ext := c.sequence(e, []string{"title", "description"}, nil)
		course.Title, course.Description = c.text(g["title"]), c.text(g["description"])
		course.Extensions = append(course.Extensions, ext...)
	}
	if e := got["objectives"]; e != nil {
		course.Objectives = c.objectives(e)
	}
	if c.aus > MaxAUs {
		c.fail(root.path, "The course has %d AUs; at most %d are allowed.", c.aus, MaxAUs)
	}
	return course
}

func (c *checker) node(e *element) (Node, bool) {
	switch {
	case e.cmi5("au"):
		return Node{AU: c.au(e)}, true
	case e.cmi5("block"):
		return Node{Block: c.block(e)}, true
	}
	return Node{}, false
}

func (c *checker) objectives(e *element) []Objective {
	c.attrs(e)
	var out []Objective
	seen := false
	for _, ch := range e.children {
		if ch.foreign() {
			continue
		}
		if !ch.cmi5("objective") {
			c.fail(ch.path, "The element %s is not allowed here.", ch.name.Local)
			continue
		}
		seen = true
		c.attrs(ch, "id")
		o := Objective{ID: c.id(ch)}
		c.declared[o.ID] = true
		// title and description in any order (xs:all), each once.
		var title, desc *element
		for _, g := range ch.children {
			switch {
			case g.cmi5("title") && title == nil:
				title = g
			case g.cmi5("description") && desc == nil:
				desc = g
			default:
				c.fail(g.path, "The element %s is not allowed here.", g.name.Local)
			}
		}
		if title == nil {
			c.fail(ch.path, "The element title is missing.")
		}
		if desc == nil {
			c.fail(ch.path, "The element description is missing.")
		}
		o.Title, o.Description = c.text(title), c.text(desc)
		out = append(out, o)
	}
	if !seen {
		c.fail(e.path, "At least one objective is required.")
	}
	return out
}

// objectiveRefs reads a list of objective references (idref).
func (c *checker) objectiveRefs(e *element) []string {
	if e == nil {
		return nil
	}
	c.attrs(e)
	var out []string
	for _, ch := range e.children {
		if ch.foreign() {
			continue
		}
		if !ch.cmi5("objective") {
			c.fail(ch.path, "The element %s is not allowed here.", ch.name.Local)
			continue
		}
		c.attrs(ch, "idref")
		ref, ok := ch.attr("idref")
		ref = strings.TrimSpace(ref)
		if !ok || ref == "" {
			c.fail(ch.path, "The idref attribute is required.")
			continue
		}
		c.refs = append(c.refs, Problem{Path: ch.path + "/@idref", Message: ref})
		out = append(out, ref)
	}
	if len(out) == 0 && len(e.children) == 0 {
		c.fail(e.path, "At least one objective is required.")
	}
	return out
}

func (c *checker) checkObjectiveRefs() {
	for _, r := range c.refs {
		if !c.declared[r.Message] {
			c.fail(r.Path, "The objective %q is not declared in the course's objectives.", r.Message)
		}
	}
}

func (c *checker) text(e *element) []LangString {
	if e == nil {
		return nil
	}
	c.attrs(e)
	var out []LangString
	for _, ch := range e.children {
		if ch.foreign() {
			continue
		}
		if !ch.cmi5("langstring") {
			c.fail(ch.path, "The element %s is not allowed here.", ch.name.Local)
			continue
		}
		c.attrs(ch, "lang")
		if len(ch.children) > 0 {
			c.fail(ch.path, "A langstring holds text only.")
		}
		ls := LangString{Text: strings.TrimSpace(ch.text.String())}
		if lang, ok := ch.attr("lang"); ok {
			if !languageRe.MatchString(lang) {
				c.fail(ch.path+"/@lang", "The language %q is not a language tag.", lang)
			}
			ls.Lang = lang
		}
		out = append(out, ls)
	}
	if len(out) == 0 {
		c.fail(e.path, "At least one langstring is required.")
	}
	return out
}

// languageRe is the lexical form of xs:language.
var languageRe = regexp.MustCompile(`^[a-zA-Z]{1,8}(-[a-zA-Z0-9]{1,8})*$`)

func (c *checker) block(e *element) *Block {
	c.attrs(e, "id")
	b := &Block{ID: c.id(e)}
	got, ext := c.sequence(e, []string{"title", "description", "objectives?"}, func(ch *element) bool {
		n, ok := c.node(ch)
		if ok {
			b.Children = append(b.Children, n)
		}
		return ok
	})
	b.Title, b.Description = c.text(got["title"]), c.text(got["description"])
	b.Objectives = c.objectiveRefs(got["objectives"])
	b.Extensions = ext
	return b
}

func (c *checker) au(e *element) *AU {
	c.aus++
	c.attrs(e, "id", "moveOn", "masteryScore", "launchMethod", "activityType")
	au := &AU{ID: c.id(e), MoveOn: NotApplicable, LaunchMethod: AnyWindow}
	if v, ok := e.attr("moveOn"); ok {
		switch v {
		case NotApplicable, Passed, Completed, CompletedAndPassed, CompletedOrPassed:
			au.MoveOn = v
		default:
			c.fail(e.path+"/@moveOn", "The moveOn %q is not one of NotApplicable, Passed, Completed, CompletedAndPassed, CompletedOrPassed.", v)
		}
	}
	if v, ok := e.attr("masteryScore"); ok {
		f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil || !decimalRe.MatchString(strings.TrimSpace(v)) {
			c.fail(e.path+"/@masteryScore", "The masteryScore %q is not a decimal number.", v)
		} else if f < 0 || f > 1 {
			c.fail(e.path+"/@masteryScore", "The masteryScore %s is outside 0 to 1.", v)
		} else {
			au.MasteryScore = &f
		}
	}
	if v, ok := e.attr("launchMethod"); ok {
		if v != AnyWindow && v != OwnWindow {
			c.fail(e.path+"/@launchMethod", "The launchMethod %q is not AnyWindow or OwnWindow.", v)
		} else {
			au.LaunchMethod = v
		}
	}
	au.ActivityType, _ = e.attr("activityType")
	got, ext := c.sequence(e, []string{"title", "description", "objectives?", "url", "launchParameters?", "entitlementKey?"}, nil)
	au.Title, au.Description = c.text(got["title"]), c.text(got["description"])
	au.Objectives = c.objectiveRefs(got["objectives"])
	au.Extensions = ext
	if u := got["url"]; u != nil {
		c.attrs(u)
		au.URL = strings.TrimSpace(u.text.String())
		c.auURL(u.path, au.URL)
	}
	if p := got["launchParameters"]; p != nil {
		c.attrs(p)
		au.LaunchParameters = p.text.String()
	}
	if k := got["entitlementKey"]; k != nil {
		c.attrs(k)
		au.EntitlementKey = strings.TrimSpace(k.text.String())
	}
	return au
}

// decimalRe is the lexical form of xs:decimal.
var decimalRe = regexp.MustCompile(`^[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)$`)

// auURL checks an AU URL: absolute http(s), or relative to the package
// and present in it; without the launch parameters in its query.
func (c *checker) auURL(path, raw string) {
	if raw == "" {
		c.fail(path, "The AU url is empty.")
		return
	}
	u, err := url.Parse(raw)
	if err != nil {
		c.fail(path, "The AU url %q is not a valid URL.", raw)
		return
	}
	q, err := url.ParseQuery(u.RawQuery)
	if err != nil {
		c.fail(path, "The query of the AU url %q is not valid.", raw)
	}
	for _, name := range LaunchParameterNames {
		if q.Has(name) {
			c.fail(path, "The AU url %q carries the launch parameter %s, which the LMS adds at launch.", raw, name)
		}
	}
	switch {
	case u.IsAbs():
		if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
			c.fail(path, "The AU url %q is not an http or https URL.", raw)
		}
	case c.fileExists == nil:
		c.fail(path, "The AU url %q is relative; a course structure uploaded without its package needs absolute AU urls.", raw)
	case u.Host != "" || strings.HasPrefix(u.Path, "/"):
		c.fail(path, "The AU url %q must be relative to the package root.", raw)
	default:
		name, err := url.PathUnescape(u.Path)
		if err != nil || name == "" || !c.fileExists(name) {
			c.fail(path, "The AU url %q names a file the package does not hold.", raw)
		}
	}
}
