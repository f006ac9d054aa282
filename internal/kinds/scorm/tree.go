package scorm

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/lms-platform/lms/internal/apperr"
	"github.com/lms-platform/lms/internal/kinds/scorm/manifest"
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
	// globals are the learner's global objectives of the package.
	globals map[string]objState
}

type node struct {
	item     manifest.Item
	parent   *node
	children []*node
	seq      *manifest.Sequencing
	sco      *storedSCO
	track    *track
	depth    int
	tree     *tree
}

func newTree(pkg storedPackage, tracks map[int64]track, globals map[string]objState) *tree {
	m := pkg.Manifest
	t := &tree{is2004: manifest.Is2004(pkg.Version), byID: map[string]*node{}, collection: map[string]*manifest.Sequencing{},
		globals: globals}
	for i := range m.SequencingCollection {
		s := &m.SequencingCollection[i]
		t.collection[s.ID] = s
	}
	scos := map[string]*storedSCO{}
	for i := range pkg.SCOs {
		scos[pkg.SCOs[i].Item.Identifier] = &pkg.SCOs[i]
	}
	org := m.Default()
	t.root = &node{item: manifest.Item{Identifier: org.Identifier, Title: org.Title}, seq: t.resolve(org.Sequencing), depth: -1, tree: t}
	var add func(parent *node, items []manifest.Item)
	add = func(parent *node, items []manifest.Item) {
		for _, it := range items {
			n := &node{item: it, parent: parent, seq: t.resolve(it.Sequencing), depth: parent.depth + 1, tree: t}
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
	if out.ADLObjectives == nil {
		out.ADLObjectives = base.ADLObjectives
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

// completed reads a leaf's track or rolls its children up.
func (n *node) completed() bool {
	_, ok := n.progress()
	return ok
}

// progress is the activity's completion: whether it is known, and
// whether it is completed. A SCO's comes from its track (not attempted
// and unknown are not known), a cluster's from rollup; a global
// objective that the primary objective reads (4th edition) overrides it.
func (n *node) progress() (known, completed bool) {
	st := n.objectiveState("")
	return st.progressKnown, st.completed
}

// Rollup (SN book, Overall Rollup Process, without measures): the
// cluster's rollup rules with the actions of the kind, or when it has
// none the default ones: positive when every child that counts is, and
// known negative when every child that counts is known. The negative
// rules are applied first, the positive ones after (they win).
type rollupRule struct {
	set         string
	count       int
	percent     float64
	combination string
	conditions  []manifest.Condition
	action      string
}

func (n *node) rules(actions ...string) []rollupRule {
	var out []rollupRule
	if n.seq == nil || n.seq.RollupRules == nil {
		return nil
	}
	for _, r := range n.seq.RollupRules.Rules {
		for _, a := range actions {
			if !strings.EqualFold(r.Action.Action, a) {
				continue
			}
			rr := rollupRule{set: r.ChildActivitySet, combination: r.Conditions.Combination, conditions: r.Conditions.List, action: a}
			fmt.Sscan(r.MinimumCount, &rr.count)
			fmt.Sscan(r.MinimumPercent, &rr.percent)
			out = append(out, rr)
		}
	}
	return out
}

func (n *node) progressRules() []rollupRule {
	if r := n.rules("completed", "incomplete"); len(r) > 0 {
		return r
	}
	return []rollupRule{
		{set: "all", conditions: []manifest.Condition{{Condition: "activityProgressKnown"}}, action: "incomplete"},
		{set: "all", conditions: []manifest.Condition{{Condition: "completed"}}, action: "completed"},
	}
}

func (n *node) objectiveRules() []rollupRule {
	if r := n.rules("satisfied", "notSatisfied"); len(r) > 0 {
		return r
	}
	return []rollupRule{
		{set: "all", conditions: []manifest.Condition{{Condition: "objectiveStatusKnown"}}, action: "notSatisfied"},
		{set: "all", conditions: []manifest.Condition{{Condition: "satisfied"}}, action: "satisfied"},
	}
}

// rollup applies the rules of one kind: positive and negative are the
// actions (completed and incomplete, satisfied and notSatisfied).
func (n *node) rollup(rules []rollupRule, positive, negative string) (known, value bool) {
	var children []*node
	for _, c := range n.children {
		if c.sco == nil && len(c.children) == 0 {
			continue
		}
		if c.seq != nil && c.seq.RollupRules != nil {
			counts := c.seq.RollupRules.ObjectiveSatisfied
			if positive == "completed" {
				counts = c.seq.RollupRules.ProgressCompletion
			}
			if !flag(counts, true) {
				continue
			}
		}
		if c.seq != nil && c.seq.DeliveryControls != nil && !flag(c.seq.DeliveryControls.Tracked, true) {
			continue
		}
		children = append(children, c)
	}
	for _, action := range []string{negative, positive} {
		for _, r := range rules {
			if r.action == action && r.applies(children) {
				known, value = true, action == positive
				break
			}
		}
	}
	return known, value
}

// applies tells whether a rollup rule's conditions hold on its child
// activity set of the children.
func (r rollupRule) applies(children []*node) bool {
	if len(children) == 0 {
		return false
	}
	hits := 0
	for _, c := range children {
		if c.rollupHolds(r.combination, r.conditions) {
			hits++
		}
	}
	switch strings.ToLower(r.set) {
	case "any":
		return hits > 0
	case "none":
		return hits == 0
	case "atleastcount":
		return hits >= max(r.count, 0)
	case "atleastpercent":
		return float64(hits) >= r.percent*float64(len(children))-1e-9
	}
	return hits == len(children)
}

// rollupHolds evaluates rollup conditions on a child: any of them by
// default (the IMS schema's default for rollupConditions), or all.
func (n *node) rollupHolds(combination string, cs []manifest.Condition) bool {
	if len(cs) == 0 {
		return false
	}
	all := strings.EqualFold(combination, "all")
	for _, c := range cs {
		v := n.condition(c)
		if strings.EqualFold(c.Operator, "not") {
			v = !v
		}
		if all && !v {
			return false
		}
		if !all && v {
			return true
		}
	}
	return all
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
	return n.firstRule(n.seq.Rules.Pre, action) != ""
}

// firstRule is the action of the first rule, in the manifest's order,
// whose action is one of actions and whose conditions hold on the node;
// "" when none does.
func (n *node) firstRule(rules []manifest.Rule, actions ...string) string {
	for _, r := range rules {
		for _, a := range actions {
			if strings.EqualFold(r.Action.Action, a) && n.holds(r.Conditions) {
				return a
			}
		}
	}
	return ""
}

// holds evaluates a rule's conditions (all by default, or any).
func (n *node) holds(cs manifest.Conditions) bool {
	if len(cs.List) == 0 {
		return false
	}
	all := !strings.EqualFold(cs.Combination, "any")
	result := all
	for _, c := range cs.List {
		v := n.condition(c)
		if strings.EqualFold(c.Operator, "not") {
			v = !v
		}
		if all {
			result = result && v
		} else {
			result = result || v
		}
	}
	return result
}

// condition evaluates a rule condition on the activity. Conditions on
// objectives read the referenced objective (the primary one when none is
// named); completed and activityProgressKnown read the activity's
// progress, or, when they reference another of its objectives, that
// objective's completion status (4th edition).
func (n *node) condition(c manifest.Condition) bool {
	ref := c.ReferencedObjective
	st := func() objState { return n.objectiveState(ref) }
	_, primary := n.objectiveDef(ref)
	switch c.Condition {
	case "always":
		return true
	case "completed":
		if !primary {
			s := st()
			return s.progressKnown && s.completed
		}
		return n.completed()
	case "activityProgressKnown":
		if !primary {
			return st().progressKnown
		}
		known, _ := n.progress()
		return known
	case "satisfied":
		s := st()
		return s.known && s.satisfied
	case "objectiveStatusKnown":
		return st().known
	case "objectiveMeasureKnown":
		return st().measure != nil
	case "objectiveMeasureGreaterThan", "objectiveMeasureLessThan":
		m := st().measure
		threshold, err := strconv.ParseFloat(strings.TrimSpace(c.MeasureThreshold), 64)
		if m == nil || err != nil {
			return false
		}
		if c.Condition == "objectiveMeasureGreaterThan" {
			return *m > threshold
		}
		return *m < threshold
	case "attempted":
		return n.attempted()
	case "attemptLimitExceeded":
		return n.attemptsUsed()
	}
	// Time limit conditions are not evaluated (README).
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
	n, ok := t.byID[current]
	if !ok || n.sco == nil {
		return nil, errSCOMissing
	}
	return t.stepFrom(n, dir)
}

var (
	errNoActivity = apperr.New(apperr.Invalid, "There is no activity in that direction.")
	errNoFlow     = apperr.New(apperr.Forbidden, "This package does not allow that navigation here.")
)

// flows checks that the control mode of n's parent lets flow navigation
// leave n in the direction.
func (t *tree) flows(n *node, dir int) error {
	if n.parent == nil {
		return errNoActivity
	}
	if _, flow, forwardOnly := t.control(n.parent); !flow || dir < 0 && forwardOnly {
		return errNoFlow
	}
	return nil
}

// stepFrom finds the first leaf outside n's subtree, after it (dir 1)
// or before it (dir -1), that flow navigation reaches: n is a SCO or a
// cluster whose attempt an exit or exitParent rule ended. Leaving the
// root, or the last leaf forwards, reaches nothing (errNoActivity).
func (t *tree) stepFrom(n *node, dir int) (*node, error) {
	if err := t.flows(n, dir); err != nil {
		return nil, err
	}
	lo, hi := t.span(n)
	if lo < 0 {
		return nil, errNoActivity
	}
	start := hi + 1
	if dir < 0 {
		start = lo - 1
	}
	for j := start; j >= 0 && j < len(t.leaves); j += dir {
		if l := t.leaves[j]; !l.skipped() {
			return l, nil
		}
	}
	return nil, errNoActivity
}

// span is the range of t.leaves in n's subtree; -1, -1 when it has none.
func (t *tree) span(n *node) (lo, hi int) {
	lo, hi = -1, -1
	for j, l := range t.leaves {
		if l.within(n) {
			if lo < 0 {
				lo = j
			}
			hi = j
		}
	}
	return lo, hi
}

// within tells whether n is a or below it.
func (n *node) within(a *node) bool {
	for x := n; x != nil; x = x.parent {
		if x == a {
			return true
		}
	}
	return false
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
