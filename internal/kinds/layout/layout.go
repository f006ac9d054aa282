// Package layout is the layout content kind: a structured lesson built
// only from approved components (see Components), with a Markdown
// fallback for clients that do not render layouts. Documents are
// validated against the components' declared prop schemas; every problem
// is answered at once, keyed by node and prop path.
package layout

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/danielgtaylor/huma/v2"

	"github.com/lms-platform/lms/internal/apperr"
	"github.com/lms-platform/lms/internal/content"
	"github.com/lms-platform/lms/internal/kinds/richtext"
	"github.com/lms-platform/lms/internal/platform"
)

// Class is the topicable class of layout topics.
const Class = `Lms\TopicTypes\Models\TopicContent\Layout`

// The bounds of a layout topic's input.
const (
	MaxNodes    = 200
	MaxDocument = 1 << 20
	MaxFallback = 256 << 10
	// minLeakText is the shortest hint or solution looked for in the
	// fallback: shorter ones ("Yes", "42") are ordinary words of any
	// lesson and would refuse innocent fallbacks.
	minLeakText = 8
)

var nodeID = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// H5PContents tells whether H5P content exists for a tenant; the H5P
// service answers, so the check never reads its tables.
type H5PContents interface {
	ContentExists(ctx context.Context, t *platform.Tenant, id string) (bool, error)
}

// LiaCourses tells whether a LiaScript course exists for a tenant; the
// LiaScript service answers.
type LiaCourses interface {
	CourseExists(ctx context.Context, t *platform.Tenant, id int64) (bool, error)
}

// Node is one component of a document.
type Node struct {
	Component string          `json:"component"`
	Props     json.RawMessage `json:"props"`
	ID        string          `json:"id,omitempty"`
}

// Value is what a layout topic stores and what authors see.
type Value struct {
	Document []Node `json:"document"`
	Fallback string `json:"fallback"`
	// FallbackHTML is the fallback rendered and sanitised, for clients
	// that show it as it is.
	FallbackHTML string `json:"fallback_html"`
}

// Kind is the layout kind.
type Kind struct {
	H5P       H5PContents
	LiaScript LiaCourses
}

func (*Kind) Class() string { return Class }
func (*Kind) Name() string  { return "layout" }

// Build takes document (a JSON array of nodes) and fallback (Markdown). An
// update sending neither keeps the old value; one sent alone is checked
// with the other kept.
func (k *Kind) Build(ctx context.Context, env content.Env, old json.RawMessage, in content.Input) (json.RawMessage, error) {
	// Sent: a document or fallback sent empty is checked, and refused.
	docText, hasDoc := in.Sent("document")
	fallback, hasFallback := in.Sent("fallback")
	if !hasDoc && !hasFallback && old != nil {
		return old, nil
	}
	var prev Value
	if old != nil {
		var err error
		if prev, err = parse(old); err != nil {
			return nil, err
		}
	}
	p := &problems{fields: map[string][]string{}}
	var nodes []Node
	if hasDoc {
		nodes = p.document(docText)
	} else if old != nil {
		nodes = prev.Document
	} else {
		p.add("document", "The document is required: a list of at least one node.")
	}
	if !hasFallback {
		if old != nil {
			fallback = prev.Fallback
		} else {
			p.add("fallback", "The fallback is required: Markdown for clients that do not render layouts.")
		}
	}
	var g gathered
	for i, n := range nodes {
		p.node(i, n, &g)
	}
	// A kept fallback is checked too: new hints may be in it.
	if hasFallback || old != nil {
		p.fallback(fallback, g.practice)
	}
	t := env.Tenant
	if err := checkRefs(p, g.frames, "H5P content", func(id string) (bool, error) { return k.H5P.ContentExists(ctx, t, id) }); err != nil {
		return nil, err
	}
	if err := checkRefs(p, g.courses, "LiaScript course", func(id int64) (bool, error) { return k.LiaScript.CourseExists(ctx, t, id) }); err != nil {
		return nil, err
	}
	if len(p.fields) > 0 {
		return nil, apperr.Validation(p.fields)
	}
	html, err := richtext.Render(fallback)
	if err != nil {
		return nil, err
	}
	return json.Marshal(Value{Document: nodes, Fallback: fallback, FallbackHTML: html})
}

// problems collects every problem of an input, keyed by its path.
type problems struct {
	fields map[string][]string
}

func (p *problems) add(key, msg string) { p.fields[key] = append(p.fields[key], msg) }

// nodeKey is the path of a node ("document[2]").
func nodeKey(i int) string { return fmt.Sprintf("document[%d]", i) }

// nodeName names a node in messages by its index and id, so that authors
// (and agents) find it in either way.
func nodeName(i int, n Node) string {
	if n.ID != "" {
		return fmt.Sprintf("Node %d (id %q)", i, n.ID)
	}
	return fmt.Sprintf("Node %d", i)
}

// document reads the list of nodes, checking its shape, bounds and ids.
func (p *problems) document(text string) []Node {
	if len(text) > MaxDocument {
		p.add("document", fmt.Sprintf("The document may not be greater than %d bytes.", MaxDocument))
		return nil
	}
	var raw []json.RawMessage
	if err := json.Unmarshal([]byte(text), &raw); err != nil {
		p.add("document", "The document must be a JSON array of nodes {component, props, id?}.")
		return nil
	}
	if len(raw) == 0 {
		p.add("document", "The document must have at least one node.")
		return nil
	}
	if len(raw) > MaxNodes {
		p.add("document", fmt.Sprintf("The document may not have more than %d nodes.", MaxNodes))
		return nil
	}
	nodes := make([]Node, 0, len(raw))
	ids := map[string]int{}
	for i, r := range raw {
		var members map[string]json.RawMessage
		if json.Unmarshal(r, &members) != nil || members == nil {
			p.add(nodeKey(i), nodeName(i, Node{})+": a node must be an object {component, props, id?}.")
			nodes = append(nodes, Node{})
			continue
		}
		var n Node
		for name, v := range members {
			switch name {
			case "component":
				if json.Unmarshal(v, &n.Component) != nil {
					p.add(nodeKey(i)+".component", nodeName(i, n)+": the component must be a string.")
				}
			case "id":
				if json.Unmarshal(v, &n.ID) != nil {
					p.add(nodeKey(i)+".id", nodeName(i, n)+": the id must be a string.")
				}
			case "props":
				n.Props = v
			default:
				p.add(nodeKey(i)+"."+name, fmt.Sprintf("%s: unexpected member %q; a node has component, props and id.", nodeName(i, n), name))
			}
		}
		if n.ID != "" {
			if !nodeID.MatchString(n.ID) {
				p.add(nodeKey(i)+".id", nodeName(i, Node{})+": the id must be 1 to 64 letters, digits, _ or -.")
			} else if first, dup := ids[n.ID]; dup {
				p.add(nodeKey(i)+".id", fmt.Sprintf("%s: the id is already used by node %d.", nodeName(i, n), first))
			} else {
				ids[n.ID] = i
			}
		}
		nodes = append(nodes, n)
	}
	return nodes
}

// ref is what a node names in another service (H5P content, a LiaScript
// course), checked with that service once every node was read.
type ref[ID comparable] struct {
	key, name string
	id        ID
}

// gathered is what the nodes of a document hold that is checked across
// them: the practice (against the fallback) and the references.
type gathered struct {
	practice []PracticeActivityProps
	frames   []ref[string]
	courses  []ref[int64]
}

// node checks one node against its component's schema and rules; it
// gathers the node's practice props and references.
func (p *problems) node(i int, n Node, g *gathered) {
	key, name := nodeKey(i), nodeName(i, n)
	if n.Component == "" {
		if _, seen := p.fields[key]; !seen {
			p.add(key+".component", name+": the component is required.")
		}
		return
	}
	c, ok := componentNamed(n.Component)
	if !ok {
		p.add(key+".component", fmt.Sprintf("%s: %q is not an approved component; use one of %s.", name, n.Component, approvedList()))
		return
	}
	name += " " + c.Name
	var props any
	if len(n.Props) == 0 || json.Unmarshal(n.Props, &props) != nil {
		p.add(key+".props", name+": the props are required: an object.")
		return
	}
	reg := schemas()
	res := &huma.ValidateResult{}
	huma.Validate(reg, reg.Schema(c.props, true, ""), huma.NewPathBuffer([]byte(key+".props"), len(key)+6), huma.ModeWriteToServer, props, res)
	for _, e := range res.Errors {
		if d, ok := e.(*huma.ErrorDetail); ok {
			p.add(d.Location, name+": "+d.Message+".")
		} else {
			p.add(key+".props", name+": "+e.Error()+".")
		}
	}
	if len(res.Errors) > 0 {
		return
	}
	switch c.Name {
	case "ComparisonTable":
		var t ComparisonTableProps
		json.Unmarshal(n.Props, &t)
		p.table(key, name, t)
	case "H5PFrame":
		var f H5PFrameProps
		json.Unmarshal(n.Props, &f)
		g.frames = append(g.frames, ref[string]{key: key + ".props.content_id", name: name, id: f.ContentID})
	case "LiaScriptLesson":
		var l LiaScriptLessonProps
		json.Unmarshal(n.Props, &l)
		g.courses = append(g.courses, ref[int64]{key: key + ".props.course_id", name: name, id: l.CourseID})
	case "PracticeActivity":
		var a PracticeActivityProps
		json.Unmarshal(n.Props, &a)
		p.practice(key, name, a)
		g.practice = append(g.practice, a)
	}
}

func approvedList() string {
	names := make([]string, len(Components))
	for i, c := range Components {
		names[i] = c.Name
	}
	return strings.Join(names, ", ")
}

func (p *problems) table(key, name string, t ComparisonTableProps) {
	for j, col := range t.Columns {
		if strings.TrimSpace(col) == "" || len(col) > 200 {
			p.add(fmt.Sprintf("%s.props.columns[%d]", key, j), name+": a column heading must have 1 to 200 characters.")
		}
	}
	for r, row := range t.Rows {
		if len(row.Cells) != len(t.Columns) {
			p.add(fmt.Sprintf("%s.props.rows[%d].cells", key, r), fmt.Sprintf("%s: the row has %d cells for %d columns.", name, len(row.Cells), len(t.Columns)))
		}
		for j, cell := range row.Cells {
			if len(cell) > 1000 {
				p.add(fmt.Sprintf("%s.props.rows[%d].cells[%d]", key, r, j), name+": a cell may not be greater than 1000 characters.")
			}
		}
	}
}

func (p *problems) practice(key, name string, a PracticeActivityProps) {
	for q, question := range a.Questions {
		qk := fmt.Sprintf("%s.props.questions[%d]", key, q)
		switch {
		case question.GIFT != "":
			if question.Prompt != "" || len(question.Options) > 0 {
				p.add(qk, name+": a question is either {prompt, options} or {gift}, not both.")
			} else if _, err := question.asGIFT(); err != nil {
				p.add(qk+".gift", fmt.Sprintf("%s, question %d: %s.", name, q, err))
			}
		case strings.TrimSpace(question.Prompt) == "":
			p.add(qk+".prompt", name+": the question needs a prompt with options, or gift.")
		case len(question.Options) < 2:
			p.add(qk+".options", name+": a choice question needs at least 2 options.")
		default:
			correct := 0
			for _, o := range question.Options {
				if o.Correct {
					correct++
				}
			}
			if correct == 0 {
				p.add(qk+".options", name+": at least one option must be correct.")
			} else if _, err := question.asGIFT(); err != nil {
				// What the checks above let through but the quiz's
				// conversion refuses (a blank option), refused here
				// rather than when a learner checks.
				p.add(qk+".options", fmt.Sprintf("%s, question %d: %s.", name, q, err))
			}
		}
		for h, hint := range question.Hints {
			if strings.TrimSpace(hint) == "" || len(hint) > 1000 {
				p.add(fmt.Sprintf("%s.hints[%d]", qk, h), name+": a hint must have 1 to 1000 characters.")
			}
		}
	}
}

// fallback checks the fallback and that it does not give away the
// practice's hints and solutions, compared without case and spacing.
func (p *problems) fallback(text string, practice []PracticeActivityProps) {
	if strings.TrimSpace(text) == "" {
		p.add("fallback", "The fallback must not be empty.")
		return
	}
	if len(text) > MaxFallback {
		p.add("fallback", fmt.Sprintf("The fallback may not be greater than %d bytes.", MaxFallback))
		return
	}
	plain := normalize(text)
	for _, a := range practice {
		for _, q := range a.Questions {
			for _, hint := range q.Hints {
				if leaks(plain, hint) {
					p.add("fallback", fmt.Sprintf("The fallback must leave out hints; it contains the hint %q.", short(hint)))
				}
			}
			if leaks(plain, q.Solution) {
				p.add("fallback", fmt.Sprintf("The fallback must leave out worked solutions; it contains the solution %q.", short(q.Solution)))
			}
			if q.GIFT == "" {
				continue
			}
			g, err := q.asGIFT()
			if err != nil {
				continue
			}
			for _, f := range feedbackTexts(g) {
				if leaks(plain, f) {
					p.add("fallback", fmt.Sprintf("The fallback must leave out the feedback of practice questions; it contains the feedback %q.", short(f)))
				}
			}
		}
	}
}

func leaks(plainFallback, secret string) bool {
	s := normalize(secret)
	return len(s) >= minLeakText && strings.Contains(plainFallback, s)
}

func normalize(s string) string { return strings.ToLower(strings.Join(strings.Fields(s), " ")) }

func short(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > 60 {
		return string(r[:60]) + "…"
	}
	return s
}

// checkRefs asks exists once for each id the nodes name; the services
// know only the calling tenant's content, so another tenant's is as
// unknown as content that does not exist.
func checkRefs[ID comparable](p *problems, refs []ref[ID], what string, exists func(ID) (bool, error)) error {
	known := map[ID]bool{}
	for _, r := range refs {
		ok, seen := known[r.id]
		if !seen {
			var err error
			if ok, err = exists(r.id); err != nil {
				return err
			}
			known[r.id] = ok
		}
		if !ok {
			p.add(r.key, fmt.Sprintf("%s: no %s %v exists on this platform.", r.name, what, r.id))
		}
	}
	return nil
}

// Copy returns the value: the document names H5P content and LiaScript
// courses, shared as H5P and LiaScript topics share them, and holds no
// files.
func (*Kind) Copy(_ context.Context, _ content.Env, value json.RawMessage) (json.RawMessage, error) {
	return value, nil
}

// Remove has nothing to delete.
func (*Kind) Remove(context.Context, content.Env, json.RawMessage) error { return nil }

// View is the whole value, for authors, who edit it.
func (*Kind) View(_ content.Env, value json.RawMessage) (any, error) {
	return parse(value)
}

// H5PContentIDs are the H5P contents a layout topic's value plays in its
// H5PFrames.
func H5PContentIDs(value json.RawMessage) []string {
	v, err := parse(value)
	if err != nil {
		return nil
	}
	var ids []string
	for _, n := range v.Document {
		var f H5PFrameProps
		if n.Component == "H5PFrame" && json.Unmarshal(n.Props, &f) == nil && f.ContentID != "" {
			ids = append(ids, f.ContentID)
		}
	}
	return ids
}

func parse(value json.RawMessage) (Value, error) {
	var v Value
	if err := json.Unmarshal(value, &v); err != nil {
		return v, fmt.Errorf("layout: parse value: %w", err)
	}
	return v, nil
}
