package scorm

import (
	"fmt"
	"strings"

	"github.com/lms-platform/lms/internal/apperr"
	"github.com/lms-platform/lms/internal/scorm/manifest"
)

// tree is the default organization of a package with a learner's tracks:
// what the table of contents shows and what navigation allows. It holds
// the part of SCORM 2004 sequencing that the common authoring tools use
// (README, "SCORM"): control modes (choice, flow, forwardOnly),
// pre-condition rules (skip, disabled, hiddenFromChoice), attempt limits
// and the default completion and satisfaction rollup; and the 1.2
// prerequisites.
type tree struct {
	is2004     bool
	root       *node
	byID       map[string]*node
	leaves     []*node
	collection map[string]*manifest.Sequencing
}

type node struct {
	item     manifest.Item
	parent   *node
	children []*node
	seq      *manifest.Sequencing
	sco      *storedSCO
	track    *track
	depth    int
}

func newTree(pkg storedPackage, tracks map[int64]track) *tree {
	m := pkg.Manifest
	t := &tree{is2004: manifest.Is2004(pkg.Version), byID: map[string]*node{}, collection: map[string]*manifest.Sequencing{}}
	for i := range m.SequencingCollection {
		s := &m.SequencingCollection[i]
		t.collection[s.ID] = s
	}
	scos := map[string]*storedSCO{}
	for i := range pkg.SCOs {
		scos[pkg.SCOs[i].Item.Identifier] = &pkg.SCOs[i]
	}
	org := m.Default()
	t.root = &node{item: manifest.Item{Identifier: org.Identifier, Title: org.Title}, seq: t.resolve(org.Sequencing), depth: -1}
	var add func(parent *node, items []manifest.Item)
	add = func(parent *node, items []manifest.Item) {
		for _, it := range items {
			n := &node{item: it, parent: parent, seq: t.resolve(it.Sequencing), depth: parent.depth + 1}
			if s, ok := scos[it.Identifier]; ok {
				n.sco = s
				if tr, ok := tracks[s.ID]; ok {
					n.track = &tr
				}
				t.leaves = append(t.leaves, n)
			}
			parent.children = append(parent.children, n)
			t.byID[it.Identifier] = n
			add(n, it.Items)
		}
	}
	add(t.root, org.Items)
	return t
}

// resolve fills a sequencing element from the collection entry it names.
func (t *tree) resolve(s *manifest.Sequencing) *manifest.Sequencing {
	if s == nil || s.IDRef == "" {
		return s
	}
	base, ok := t.collection[s.IDRef]
	if !ok {
		return s
	}
	out := *s
	if out.ControlMode == nil {
		out.ControlMode = base.ControlMode
	}
	if out.Rules == nil {
		out.Rules = base.Rules
	}
	if out.LimitConditions == nil {
		out.LimitConditions = base.LimitConditions
	}
	if out.RollupRules == nil {
		out.RollupRules = base.RollupRules
	}
	if out.Objectives == nil {
		out.Objectives = base.Objectives
	}
	if out.DeliveryControls == nil {
		out.DeliveryControls = base.DeliveryControls
	}
	return &out
}

func flag(b *bool, def bool) bool {
	if b == nil {
		return def
	}
	return *b
}

// control reads the control mode a node gives its children; SCORM 1.2
// leaves navigation free (choice and flow).
func (t *tree) control(n *node) (choice, flow, forwardOnly bool) {
	if !t.is2004 {
		return true, true, false
	}
	if n.seq == nil || n.seq.ControlMode == nil {
		return true, false, false
	}
	cm := n.seq.ControlMode
	return flag(cm.Choice, true), flag(cm.Flow, false), flag(cm.ForwardOnly, false)
}

// completed and satisfied read a leaf's track or roll its children up
// (the default rules: every child that counts is completed, satisfied).
func (n *node) completed() bool {
	if n.sco != nil {
		return n.track != nil && done(n.track.Completion, "")
	}
	return n.rollup(func(c *node) bool { return c.completed() }, func(r *manifest.RollupRules) *bool { return r.ProgressCompletion })
}

func (n *node) satisfied() bool {
	if n.sco != nil {
		return n.track != nil && (n.track.Success == "passed" || n.track.Completion == "passed")
	}
	return n.rollup(func(c *node) bool { return c.satisfied() }, func(r *manifest.RollupRules) *bool { return r.ObjectiveSatisfied })
}

func (n *node) rollup(ok func(*node) bool, counts func(*manifest.RollupRules) *bool) bool {
	any := false
	for _, c := range n.children {
		if c.seq != nil && c.seq.RollupRules != nil && !flag(counts(c.seq.RollupRules), true) {
			continue
		}
		if c.sco == nil && len(c.children) == 0 {
			continue
		}
		any = true
		if !ok(c) {
			return false
		}
	}
	return any
}

func (n *node) attempted() bool {
	if n.sco != nil {
		return n.track != nil && n.track.Completion != "not attempted"
	}
	for _, c := range n.children {
		if c.attempted() {
			return true
		}
	}
	return false
}

// status is the 1.2 lesson status of an item (prerequisites read it).
func (n *node) status() string {
	switch {
	case n.sco != nil && n.track != nil:
		return n.track.Completion
	case n.sco == nil && n.completed():
		return "completed"
	case n.sco == nil && n.attempted():
		return "incomplete"
	}
	return "not attempted"
}

// ruleHolds tells whether a pre-condition rule with the action holds on
// the node.
func (n *node) ruleHolds(action string) bool {
	if n.seq == nil || n.seq.Rules == nil {
		return false
	}
	for _, r := range n.seq.Rules.Pre {
		if !strings.EqualFold(r.Action.Action, action) {
			continue
		}
		all := !strings.EqualFold(r.Conditions.Combination, "any")
		result := all
		for _, c := range r.Conditions.List {
			v := n.condition(c.Condition)
			if strings.EqualFold(c.Operator, "not") {
				v = !v
			}
			if all {
				result = result && v
			} else {
				result = result || v
			}
		}
		if len(r.Conditions.List) > 0 && result {
			return true
		}
	}
	return false
}

func (n *node) condition(name string) bool {
	switch name {
	case "always":
		return true
	case "completed", "activityProgressKnown":
		return n.completed()
	case "satisfied", "objectiveStatusKnown":
		return n.satisfied()
	case "attempted":
		return n.attempted()
	case "attemptLimitExceeded":
		return n.attemptsUsed()
	}
	// Conditions on measures and time limits are not evaluated (README).
	return false
}

func (n *node) attemptsUsed() bool {
	if n.seq == nil || n.seq.LimitConditions == nil || n.track == nil {
		return false
	}
	var limit int
	fmt.Sscan(n.seq.LimitConditions.AttemptLimit, &limit)
	return limit > 0 && n.track.Attempt >= limit && ended(n.track.Completion, n.track.Success)
}

// enter checks that the learner may start the item: its 1.2
// prerequisites are met; it and its ancestors are not disabled and
// within their attempt limits.
func (t *tree) enter(identifier string) error {
	n, ok := t.byID[identifier]
	if !ok {
		return errSCOMissing
	}
	if !t.is2004 && n.item.Prerequisites != "" {
		p, err := manifest.ParsePrerequisite(n.item.Prerequisites)
		if err == nil && !p.Met(t.status) {
			return apperr.New(apperr.Forbidden, fmt.Sprintf("%q needs %s first.", n.item.Title, t.names(p.Identifiers())))
		}
	}
	for a := n; a != nil && a != t.root; a = a.parent {
		if a.ruleHolds("disabled") {
			return apperr.New(apperr.Forbidden, fmt.Sprintf("%q is not available now.", a.item.Title))
		}
		if a.attemptsUsed() {
			return apperr.New(apperr.Forbidden, fmt.Sprintf("Every attempt at %q is used.", a.item.Title))
		}
	}
	return nil
}

func (t *tree) status(identifier string) string {
	if n, ok := t.byID[identifier]; ok {
		return n.status()
	}
	return "not attempted"
}

func (t *tree) names(ids []string) string {
	var out []string
	for _, id := range ids {
		if n, ok := t.byID[id]; ok {
			out = append(out, fmt.Sprintf("%q", n.item.Title))
		}
	}
	return strings.Join(out, " and ")
}

// chosen checks a choice of the item from the table of contents.
func (t *tree) chosen(identifier string) error {
	n, ok := t.byID[identifier]
	if !ok || n.sco == nil {
		return errSCOMissing
	}
	for a := n; a != t.root; a = a.parent {
		if choice, _, _ := t.control(a.parent); !choice || a.ruleHolds("hiddenFromChoice") {
			return apperr.New(apperr.Forbidden, fmt.Sprintf("%q cannot be chosen; use continue or previous.", n.item.Title))
		}
	}
	return t.enter(identifier)
}

// step finds the leaf before (dir -1) or after (dir 1) the current one
// that flow navigation reaches, skipping items a skip rule holds on.
func (t *tree) step(current string, dir int) (*node, error) {
	i := -1
	for j, l := range t.leaves {
		if l.item.Identifier == current {
			i = j
		}
	}
	if i < 0 {
		return nil, errSCOMissing
	}
	cur := t.leaves[i]
	_, flow, forwardOnly := t.control(cur.parent)
	if !flow || dir < 0 && forwardOnly {
		return nil, apperr.New(apperr.Forbidden, "This package does not allow that navigation here.")
	}
	for j := i + dir; j >= 0 && j < len(t.leaves); j += dir {
		if l := t.leaves[j]; !l.skipped() {
			return l, nil
		}
	}
	return nil, apperr.New(apperr.Invalid, "There is no activity in that direction.")
}

func (n *node) skipped() bool {
	for a := n; a != nil; a = a.parent {
		if a.ruleHolds("skip") {
			return true
		}
	}
	return false
}

// Entry is one line of the table of contents.
type Entry struct {
	SCOID      int64  `json:"sco_id,omitempty"`
	Identifier string `json:"identifier"`
	Title      string `json:"title"`
	Depth      int    `json:"depth"`
	Status     string `json:"status"`
	Choosable  bool   `json:"choosable"`
}

// contents lists the visible items for the table of contents.
func (t *tree) contents() []Entry {
	var out []Entry
	var walk func(n *node)
	walk = func(n *node) {
		for _, c := range n.children {
			if !c.item.Visible || c.ruleHolds("hiddenFromChoice") {
				continue
			}
			e := Entry{Identifier: c.item.Identifier, Title: c.item.Title, Depth: c.depth, Status: c.status()}
			if c.sco != nil {
				e.SCOID = c.sco.ID
				e.Choosable = t.chosen(c.item.Identifier) == nil
			}
			out = append(out, e)
			walk(c)
		}
	}
	walk(t.root)
	return out
}
