// Package cmi5 reads cmi5 course packages: the course structure
// (cmi5.xml, checked against the rules of the cmi5 CourseStructure.xsd and
// of the cmi5 specification, section 13) and the zip holding it with the
// assignable units' files.
package cmi5

import (
	"encoding/xml"
	"fmt"
	"strings"
)

// Namespace is the namespace of the cmi5 course structure.
const Namespace = "https://w3id.org/xapi/profiles/cmi5/v1/CourseStructure.xsd"

// The moveOn criteria of an AU.
const (
	NotApplicable      = "NotApplicable"
	Passed             = "Passed"
	Completed          = "Completed"
	CompletedAndPassed = "CompletedAndPassed"
	CompletedOrPassed  = "CompletedOrPassed"
)

// The launch methods of an AU.
const (
	AnyWindow = "AnyWindow"
	OwnWindow = "OwnWindow"
)

// LangString is a text in one language.
type LangString struct {
	Lang string `json:"lang,omitempty"`
	Text string `json:"text"`
}

// Objective is an objective the course declares.
type Objective struct {
	ID          string       `json:"id"`
	Title       []LangString `json:"title"`
	Description []LangString `json:"description"`
}

// Course is a parsed course structure.
type Course struct {
	ID          string       `json:"id"`
	Title       []LangString `json:"title"`
	Description []LangString `json:"description"`
	Objectives  []Objective  `json:"objectives,omitempty"`
	Children    []Node       `json:"children"`
	// Extensions are the elements in foreign namespaces, as written, kept
	// so that an export or a tool reading them later finds them.
	Extensions []string `json:"extensions,omitempty"`
}

// Node is one child of the course or of a block: an AU or a block.
type Node struct {
	AU    *AU    `json:"au,omitempty"`
	Block *Block `json:"block,omitempty"`
}

// Block groups AUs and blocks.
type Block struct {
	ID          string       `json:"id"`
	Title       []LangString `json:"title"`
	Description []LangString `json:"description"`
	Objectives  []string     `json:"objectives,omitempty"`
	Children    []Node       `json:"children"`
	Extensions  []string     `json:"extensions,omitempty"`
}

// AU is an assignable unit.
type AU struct {
	ID           string       `json:"id"`
	Title        []LangString `json:"title"`
	Description  []LangString `json:"description"`
	Objectives   []string     `json:"objectives,omitempty"`
	URL          string       `json:"url"`
	MoveOn       string       `json:"moveOn"`
	MasteryScore *float64     `json:"masteryScore,omitempty"`
	LaunchMethod string       `json:"launchMethod"`
	ActivityType string       `json:"activityType,omitempty"`
	// LaunchParameters and EntitlementKey are passed to the AU as given.
	LaunchParameters string   `json:"launchParameters,omitempty"`
	EntitlementKey   string   `json:"entitlementKey,omitempty"`
	Extensions       []string `json:"extensions,omitempty"`
}

// AUs lists the course's AUs in document order.
func (c *Course) AUs() []*AU {
	var out []*AU
	walk(c.Children, nil, func(au *AU, _ []*Block) { out = append(out, au) })
	return out
}

// Blocks returns the blocks holding each AU, outermost first, by AU id.
func (c *Course) Blocks() map[string][]*Block {
	out := map[string][]*Block{}
	walk(c.Children, nil, func(au *AU, parents []*Block) { out[au.ID] = append([]*Block(nil), parents...) })
	return out
}

func walk(nodes []Node, parents []*Block, f func(*AU, []*Block)) {
	for _, n := range nodes {
		if n.AU != nil {
			f(n.AU, parents)
		} else if n.Block != nil {
			walk(n.Block.Children, append(parents, n.Block), f)
		}
	}
}

// Text is the first text of a LangString list, preferring English.
func Text(list []LangString) string {
	for _, l := range list {
		if strings.HasPrefix(strings.ToLower(l.Lang), "en") {
			return strings.TrimSpace(l.Text)
		}
	}
	if len(list) > 0 {
		return strings.TrimSpace(list[0].Text)
	}
	return ""
}

// Problem is one thing wrong with a course structure: where (an element
// path such as /courseStructure/au[2]/url) and what.
type Problem struct {
	Path    string `json:"path"`
	Message string `json:"message"`
}

func (p Problem) String() string { return p.Path + ": " + p.Message }

// Error lists every problem of a course structure.
type Error struct {
	Problems []Problem
}

func (e *Error) Error() string {
	parts := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		parts[i] = p.String()
	}
	return "cmi5: invalid course structure: " + strings.Join(parts, "; ")
}

// element is a node of the XML tree the parser builds first.
type element struct {
	name     xml.Name
	attrs    []xml.Attr
	children []*element
	text     strings.Builder
	raw      string // the element as written, for foreign elements
	path     string
}

func (e *element) attr(name string) (string, bool) {
	for _, a := range e.attrs {
		if a.Name.Space == "" && a.Name.Local == name {
			return a.Value, true
		}
	}
	return "", false
}

func (e *element) cmi5(local string) bool { return e.name.Space == Namespace && e.name.Local == local }

func (e *element) foreign() bool { return e.name.Space != Namespace }

func childPath(parent string, name xml.Name, counts map[string]int) string {
	counts[name.Local]++
	return fmt.Sprintf("%s/%s[%d]", parent, name.Local, counts[name.Local])
}
