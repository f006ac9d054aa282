package scorm

import (
	"context"
	"fmt"
	"time"

	"github.com/lms-platform/lms/internal/apperr"
	"github.com/lms-platform/lms/internal/platform"
	"github.com/lms-platform/lms/internal/sqldb"
)

// ending is what the end of a SCO's attempt leads to under the SCORM
// 2004 exit and post-condition rules (SN book, Termination Request
// Process: Sequencing Exit Action Rules and Sequencing Post Condition
// Rules subprocesses).
type ending struct {
	// current is the activity whose attempt ended last: the SCO, or the
	// ancestor an exit or exitParent rule ended.
	current *node
	// request is the sequencing request the rules make: retry (a new
	// attempt on current: the root for retryAll), continue or previous
	// (flow from current), end (exitAll: the sequencing session ends),
	// or "" when the learner's navigation request stands.
	request string
	// rule names the last rule that acted (exit, exitParent, exitAll,
	// retry, retryAll, continue, previous), for the answer.
	rule string
}

// postActions are the actions of postConditionRule.
var postActions = []string{"exitParent", "exitAll", "retry", "retryAll", "continue", "previous"}

// end evaluates the rules when the attempt on the leaf ends. A suspended
// attempt is not over: no rule applies.
func (t *tree) end(leaf *node) ending {
	e := ending{current: leaf}
	if !t.is2004 || leaf.track != nil && leaf.track.Exit == "suspend" {
		return e
	}
	// Exit rules, from the root down to the leaf's parent: the first
	// ancestor one holds on ends its attempt with its descendants'.
	var path []*node
	for a := leaf.parent; a != nil; a = a.parent {
		path = append([]*node{a}, path...)
	}
	for _, a := range path {
		if a.seq != nil && a.seq.Rules != nil && a.firstRule(a.seq.Rules.Exit, "exit") != "" {
			e.current, e.rule = a, "exit"
			break
		}
	}
	// Post-condition rules on the activity whose attempt ended, then on
	// each parent an exitParent rule climbs to.
	for {
		n := e.current
		action := ""
		if n.seq != nil && n.seq.Rules != nil {
			action = n.firstRule(n.seq.Rules.Post, postActions...)
		}
		switch action {
		case "exitParent":
			if n.parent == nil {
				return e
			}
			e.current, e.rule = n.parent, action
			continue
		case "exitAll":
			e.current, e.request, e.rule = t.root, "end", action
		case "retryAll":
			e.current, e.request, e.rule = t.root, "retry", action
		case "retry", "continue", "previous":
			e.request, e.rule = action, action
		}
		return e
	}
}

// leavesOf lists the SCOs of n's subtree in order.
func (t *tree) leavesOf(n *node) []*node {
	var out []*node
	for _, l := range t.leaves {
		if l.within(n) {
			out = append(out, l)
		}
	}
	return out
}

// retryTarget resets, in the tree, the tracks of the SCOs below n for a
// new attempt on n, and finds the SCO it starts with: n itself, or the
// first SCO flow reaches into the cluster (its control mode must allow
// flow), skipping those a skip rule holds on.
func (t *tree) retryTarget(n *node) (*node, []*node, error) {
	if n.sco != nil {
		if !n.attemptsLeft() {
			return nil, nil, apperr.New(apperr.Forbidden, fmt.Sprintf("Every attempt at %q is used.", n.item.Title))
		}
		return n, []*node{n}, nil
	}
	if _, flow, _ := t.control(n); !flow {
		return nil, nil, apperr.New(apperr.Forbidden, fmt.Sprintf("%q cannot start again: its navigation is not flow.", n.item.Title))
	}
	leaves := t.leavesOf(n)
	for _, l := range leaves {
		if l.track != nil {
			l.track.Completion, l.track.Success, l.track.CMI, l.track.Exit = "not attempted", "unknown", map[string]any{}, exitRetry
		}
	}
	for _, l := range leaves {
		if !l.skipped() {
			return l, leaves, nil
		}
	}
	return nil, nil, errNoActivity
}

// attemptsLeft tells whether the SCO may have one more attempt.
func (n *node) attemptsLeft() bool {
	if n.seq == nil || n.seq.LimitConditions == nil || n.track == nil {
		return true
	}
	var limit int
	fmt.Sscan(n.seq.LimitConditions.AttemptLimit, &limit)
	return limit <= 0 || n.track.Attempt < limit
}

// exitRetry marks a track whose next launch starts a new attempt, clean,
// whatever the last one left (a retry or retryAll rule ended it).
const exitRetry = "retry"

// resetForRetry stores what retryTarget did to the tracks of the topic:
// the statuses and data of the ended attempt are gone, and the next
// launch of each starts a new attempt. Tracks of the package's SCOs in
// other topics keep their attempts.
func resetForRetry(ctx context.Context, t *platform.Tenant, topicID int64, leaves []*node, now time.Time) error {
	return t.Tx(ctx, func(tx *sqldb.Tx) error {
		for _, l := range leaves {
			if l.track == nil || l.track.TopicID != topicID {
				continue
			}
			_, err := tx.ExecContext(ctx, `UPDATE scorm_tracks SET cmi = '{}', completion = 'not attempted', success = 'unknown',
				score_raw = NULL, score_min = NULL, score_max = NULL, score_scaled = NULL, exit_mode = $2, updated_at = $3
				WHERE id = $1`, l.track.ID, exitRetry, now)
			if err != nil {
				return fmt.Errorf("scorm: reset track %d: %w", l.track.ID, err)
			}
		}
		return nil
	})
}

// Navigate ends the attempt on the session's SCO and starts the session
// of the SCO that comes next: the one the exit and post-condition rules
// ask for (SCORM 2004), else the learner's request: the next or previous
// SCO (flow), or one chosen from the table of contents. exit asks for
// nothing: the answer has ended true unless a rule delivers a SCO.
func (s *Service) Navigate(ctx context.Context, t *platform.Tenant, k ticket, action, target string) (ScoLaunch, error) {
	_, value, err := scormTopic(ctx, t, k.TopicID)
	if err != nil {
		return ScoLaunch{}, err
	}
	pkg, err := loadPackage(ctx, t, value.PackageID)
	if err != nil {
		return ScoLaunch{}, err
	}
	cur, ok := pkg.sco(k.SCOID)
	if !ok {
		return ScoLaunch{}, errSCOMissing
	}
	tracks, globals, err := learnerState(ctx, t.DB, pkg, k.UserID, k.TopicID, k.SCOID)
	if err != nil {
		return ScoLaunch{}, err
	}
	tree := newTree(pkg, tracks, globals)
	leaf := tree.byID[cur.Item.Identifier]
	if leaf == nil || leaf.sco == nil {
		return ScoLaunch{}, errSCOMissing
	}
	// The learner's request must be valid before the attempt ends.
	dir := 1
	switch action {
	case "continue":
	case "previous":
		dir = -1
	case "choice":
		if err := tree.chosen(target); err != nil {
			return ScoLaunch{}, err
		}
	case "exit":
	default:
		return ScoLaunch{}, apperr.New(apperr.Invalid, "The action must be continue, previous, choice or exit.")
	}
	if action == "continue" || action == "previous" {
		if err := tree.flows(leaf, dir); err != nil {
			return ScoLaunch{}, err
		}
	}
	e := tree.end(leaf)
	switch e.request {
	case "end":
		return ScoLaunch{Ended: true, Rule: e.rule}, nil
	case "retry":
		next, reset, err := tree.retryTarget(e.current)
		if err != nil {
			return ScoLaunch{}, err
		}
		if err := resetForRetry(ctx, t, k.TopicID, reset, s.Clock.Now().UTC()); err != nil {
			return ScoLaunch{}, err
		}
		return s.deliver(ctx, t, k, value, next, e.rule)
	case "continue", "previous":
		action, dir = e.request, 1
		if action == "previous" {
			dir = -1
		}
	}
	var next *node
	switch action {
	case "continue", "previous":
		next, err = tree.stepFrom(e.current, dir)
		if err == errNoActivity && (e.request != "" || e.current != leaf) {
			// Flow past the end of the tree after a rule acted ends
			// the sequencing session.
			return ScoLaunch{Ended: true, Rule: e.rule}, nil
		}
	case "choice":
		next = tree.byID[target]
	case "exit":
		return ScoLaunch{Ended: true, Rule: e.rule}, nil
	}
	if err != nil {
		return ScoLaunch{}, err
	}
	return s.deliver(ctx, t, k, value, next, e.rule)
}

func (s *Service) deliver(ctx context.Context, t *platform.Tenant, k ticket, value Value, next *node, rule string) (ScoLaunch, error) {
	l, err := s.open(ctx, t, k.UserID, k.TopicID, value, next.sco.ID, k.Preview)
	l.Rule = rule
	return l, err
}
