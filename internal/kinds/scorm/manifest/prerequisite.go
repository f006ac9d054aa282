package manifest

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
)

// Prerequisite is a parsed SCORM 1.2 prerequisites expression (the AICC
// script: item identifiers combined with & | ~ or AND OR NOT, brackets,
// status comparisons "id = passed" and "id <> failed", and sets
// "2*{a,b,c}", at least two of a, b, c).
type Prerequisite struct{ root node }

// ParsePrerequisite reads an expression.
func ParsePrerequisite(expr string) (*Prerequisite, error) { return parsePrerequisite(expr) }

// Met evaluates the expression; status gives an item's lesson_status
// ("completed", "passed", "not attempted", ...). An item alone is met
// when it is completed or passed.
func (p *Prerequisite) Met(status func(identifier string) string) bool { return p.root.eval(status) }

// Identifiers lists the items the expression names.
func (p *Prerequisite) Identifiers() []string {
	var out []string
	p.root.ids(&out)
	return out
}

type node interface {
	eval(func(string) string) bool
	ids(*[]string)
}

type (
	andNode  struct{ l, r node }
	orNode   struct{ l, r node }
	notNode  struct{ n node }
	itemNode struct {
		id, status string
		negate     bool // <> instead of =
		compare    bool
	}
	setNode struct {
		n       int
		members []string
	}
)

func (n andNode) eval(s func(string) string) bool { return n.l.eval(s) && n.r.eval(s) }
func (n orNode) eval(s func(string) string) bool  { return n.l.eval(s) || n.r.eval(s) }
func (n notNode) eval(s func(string) string) bool { return !n.n.eval(s) }
func (n itemNode) eval(s func(string) string) bool {
	st := s(n.id)
	if !n.compare {
		return st == "completed" || st == "passed"
	}
	return (st == n.status) != n.negate
}
func (n setNode) eval(s func(string) string) bool {
	met := 0
	for _, id := range n.members {
		if st := s(id); st == "completed" || st == "passed" {
			met++
		}
	}
	return met >= n.n
}
func (n andNode) ids(out *[]string)  { n.l.ids(out); n.r.ids(out) }
func (n orNode) ids(out *[]string)   { n.l.ids(out); n.r.ids(out) }
func (n notNode) ids(out *[]string)  { n.n.ids(out) }
func (n itemNode) ids(out *[]string) { *out = append(*out, n.id) }
func (n setNode) ids(out *[]string)  { *out = append(*out, n.members...) }

// statusWords are the AICC status values and their one-letter forms.
var statusWords = map[string]string{
	"passed": "passed", "p": "passed", "completed": "completed", "c": "completed", "failed": "failed", "f": "failed",
	"incomplete": "incomplete", "i": "incomplete", "browsed": "browsed", "b": "browsed",
	"not attempted": "not attempted", "n": "not attempted",
}

const maxPrerequisite = 4000

type prereqParser struct {
	toks []string
	pos  int
	deep int
}

func parsePrerequisite(expr string) (*Prerequisite, error) {
	if len(expr) > maxPrerequisite {
		return nil, fmt.Errorf("longer than %d characters", maxPrerequisite)
	}
	toks, err := tokenize(expr)
	if err != nil {
		return nil, err
	}
	p := &prereqParser{toks: toks}
	n, err := p.or()
	if err != nil {
		return nil, err
	}
	if p.pos < len(p.toks) {
		return nil, fmt.Errorf("unexpected %q", p.toks[p.pos])
	}
	return &Prerequisite{root: n}, nil
}

func tokenize(s string) ([]string, error) {
	var out []string
	for i := 0; i < len(s); {
		c := rune(s[i])
		switch {
		case unicode.IsSpace(c):
			i++
		case strings.ContainsRune("&|~(){},*=", c):
			out = append(out, string(c))
			i++
		case c == '<' && i+1 < len(s) && s[i+1] == '>':
			out = append(out, "<>")
			i += 2
		case c == '"':
			j := strings.IndexByte(s[i+1:], '"')
			if j < 0 {
				return nil, fmt.Errorf("unclosed quote")
			}
			out = append(out, `"`+s[i+1:i+1+j])
			i += j + 2
		default:
			j := i
			for j < len(s) && !unicode.IsSpace(rune(s[j])) && !strings.ContainsRune("&|~(){},*=<>\"", rune(s[j])) {
				j++
			}
			if j == i {
				return nil, fmt.Errorf("unexpected %q", s[i:i+1])
			}
			out = append(out, s[i:j])
			i = j
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("empty expression")
	}
	return out, nil
}

func (p *prereqParser) peek() string {
	if p.pos < len(p.toks) {
		return p.toks[p.pos]
	}
	return ""
}

func (p *prereqParser) is(words ...string) bool {
	t := p.peek()
	for _, w := range words {
		if strings.EqualFold(t, w) {
			p.pos++
			return true
		}
	}
	return false
}

func (p *prereqParser) or() (node, error) {
	l, err := p.and()
	for err == nil && p.is("|", "or") {
		var r node
		if r, err = p.and(); err == nil {
			l = orNode{l, r}
		}
	}
	return l, err
}

func (p *prereqParser) and() (node, error) {
	l, err := p.unary()
	for err == nil && p.is("&", "and") {
		var r node
		if r, err = p.unary(); err == nil {
			l = andNode{l, r}
		}
	}
	return l, err
}

func (p *prereqParser) unary() (node, error) {
	p.deep++
	defer func() { p.deep-- }()
	if p.deep > 100 {
		return nil, fmt.Errorf("nested too deeply")
	}
	if p.is("~", "not") {
		n, err := p.unary()
		return notNode{n}, err
	}
	if p.is("(") {
		n, err := p.or()
		if err != nil {
			return nil, err
		}
		if !p.is(")") {
			return nil, fmt.Errorf("missing )")
		}
		return n, nil
	}
	t := p.peek()
	if t == "" || strings.ContainsAny(t[:1], "&|~(){},*=<\"") {
		return nil, fmt.Errorf("expected an item identifier, found %q", t)
	}
	p.pos++
	if p.is("*") {
		n, err := strconv.Atoi(t)
		if err != nil || n < 0 {
			return nil, fmt.Errorf("a set needs a count before *")
		}
		if !p.is("{") {
			return nil, fmt.Errorf("missing { after *")
		}
		set := setNode{n: n}
		for {
			id := p.peek()
			if id == "" || strings.ContainsAny(id[:1], "&|~(){},*=<\"") {
				return nil, fmt.Errorf("expected an item identifier in the set")
			}
			p.pos++
			set.members = append(set.members, id)
			if p.is("}") {
				return set, nil
			}
			if !p.is(",") {
				return nil, fmt.Errorf("missing , or } in the set")
			}
		}
	}
	it := itemNode{id: t}
	if op := p.peek(); op == "=" || op == "<>" {
		p.pos++
		word := strings.ToLower(strings.TrimPrefix(p.peek(), `"`))
		if word == "not" && p.pos+1 < len(p.toks) && strings.EqualFold(p.toks[p.pos+1], "attempted") {
			p.pos++
			word = "not attempted"
		}
		st, ok := statusWords[word]
		if !ok {
			return nil, fmt.Errorf("unknown status %q", p.peek())
		}
		p.pos++
		it.compare, it.negate, it.status = true, op == "<>", st
	}
	return it, nil
}
