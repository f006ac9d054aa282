package scorm

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/lms-platform/lms/internal/kinds/scorm/manifest"
	"github.com/lms-platform/lms/internal/sqldb"
)

// Objective maps of SCORM 2004 (SN book, objective map and the 4th
// edition's adlseq:objectives): an activity's objective may read its
// status from a shared global objective and write its own to one, so that
// one SCO's result decides what another may do (Rustici's "forced
// sequential order": each SCO is disabled until the previous one's
// primary objective, written to a global objective, reads back
// satisfied). Global objectives are kept per learner and package
// (scorm_objectives), whatever the organization's
// objectivesGlobalToSystem says: a package's objective identifiers mean
// nothing to another package.

// objState is what is known of one objective: the satisfied status and
// normalized measure (imsss maps), the completion status, progress
// measure and raw, min and max scores (adlseq maps of 4th edition). A nil
// pointer, or known false, is unknown.
type objState struct {
	known, satisfied bool
	measure          *float64
	progressKnown    bool
	completed        bool
	progress         *float64
	raw, min, max    *float64
}

// objectiveDef finds the objective an activity declares under id: the
// primary one for "" or its own id, else one of the others; nil when the
// activity declares none of that id (a rule then reads the primary).
func (n *node) objectiveDef(id string) (*manifest.Objective, bool) {
	if n.seq == nil || n.seq.Objectives == nil {
		return nil, true
	}
	o := n.seq.Objectives
	if id == "" || o.Primary != nil && o.Primary.ObjectiveID == id {
		return o.Primary, true
	}
	for i := range o.Others {
		if o.Others[i].ObjectiveID == id {
			return &o.Others[i], false
		}
	}
	return o.Primary, true
}

// adlMaps are the adlseq maps of the objective id.
func (n *node) adlMaps(id string) []manifest.ADLMapInfo {
	if n.seq == nil || n.seq.ADLObjectives == nil || id == "" {
		return nil
	}
	for _, o := range n.seq.ADLObjectives.List {
		if o.ObjectiveID == id {
			return o.MapInfo
		}
	}
	return nil
}

// localState is what the activity itself says of one of its objectives:
// a SCO's primary objective from its track (success and completion
// status, scaled score, progress measure), another objective from the
// cmi.objectives entry of its id; a cluster's primary objective from
// rollup. Read maps are not applied.
func (n *node) localState(def *manifest.Objective, primary bool) objState {
	var st objState
	if n.sco == nil {
		if primary {
			st.known, st.satisfied = n.rollup(n.objectiveRules(), "satisfied", "notSatisfied")
			st.progressKnown, st.completed = n.rollup(n.progressRules(), "completed", "incomplete")
		}
		return st
	}
	if n.track == nil {
		return st
	}
	if primary {
		switch {
		case n.track.Success == "passed" || n.track.Completion == "passed":
			st.known, st.satisfied = true, true
		case n.track.Success == "failed" || n.track.Completion == "failed":
			st.known = true
		}
		switch n.track.Completion {
		case "completed", "passed":
			st.progressKnown, st.completed = true, true
		case "not attempted", "unknown", "":
		default:
			st.progressKnown = true
		}
		st.measure, st.raw, st.min, st.max = n.track.ScoreScaled, n.track.ScoreRaw, n.track.ScoreMin, n.track.ScoreMax
		st.progress = number(n.track.CMI, "cmi.progress_measure")
		return st
	}
	if def == nil || def.ObjectiveID == "" {
		return st
	}
	prefix := cmiObjective(n.track.CMI, def.ObjectiveID)
	if prefix == "" {
		return st
	}
	switch text(n.track.CMI, prefix+"success_status") {
	case "passed":
		st.known, st.satisfied = true, true
	case "failed":
		st.known = true
	}
	switch text(n.track.CMI, prefix+"completion_status") {
	case "completed":
		st.progressKnown, st.completed = true, true
	case "incomplete":
		st.progressKnown = true
	}
	st.measure = number(n.track.CMI, prefix+"score.scaled")
	st.progress = number(n.track.CMI, prefix+"progress_measure")
	st.raw, st.min, st.max = number(n.track.CMI, prefix+"score.raw"), number(n.track.CMI, prefix+"score.min"),
		number(n.track.CMI, prefix+"score.max")
	return st
}

// cmiObjective is the key prefix ("cmi.objectives.2.") of the model's
// objective with the id, or "".
func cmiObjective(cmi map[string]any, id string) string {
	for k, v := range cmi {
		rest, ok := strings.CutPrefix(k, "cmi.objectives.")
		if !ok || !strings.HasSuffix(rest, ".id") || v != id {
			continue
		}
		if _, err := strconv.Atoi(strings.TrimSuffix(rest, ".id")); err == nil {
			return strings.TrimSuffix(k, "id")
		}
	}
	return ""
}

// objectiveState is the objective id of the activity ("" or the primary
// one's id: the primary) as sequencing sees it: the local state, then
// each read map whose global objective knows the value, then the
// satisfaction a known measure decides when the objective is satisfied
// by measure.
func (n *node) objectiveState(id string) objState {
	def, primary := n.objectiveDef(id)
	st := n.localState(def, primary)
	if def != nil {
		for _, m := range def.MapInfo {
			g, ok := n.tree.globals[m.TargetObjectiveID]
			if !ok {
				continue
			}
			if flag(m.ReadSatisfiedStatus, true) && g.known {
				st.known, st.satisfied = true, g.satisfied
			}
			if flag(m.ReadNormalizedMeasure, true) && g.measure != nil {
				st.measure = g.measure
			}
		}
		if flag(def.SatisfiedByMeasure, false) && st.measure != nil {
			threshold := 1.0
			if f, err := strconv.ParseFloat(strings.TrimSpace(def.MinNormalizedMeasure), 64); err == nil {
				threshold = f
			}
			st.known, st.satisfied = true, *st.measure >= threshold
		}
		for _, m := range n.adlMaps(def.ObjectiveID) {
			g, ok := n.tree.globals[m.TargetObjectiveID]
			if !ok {
				continue
			}
			if flag(m.ReadCompletionStatus, true) && g.progressKnown {
				st.progressKnown, st.completed = true, g.completed
			}
			if flag(m.ReadProgressMeasure, true) && g.progress != nil {
				st.progress = g.progress
			}
			if flag(m.ReadRawScore, true) && g.raw != nil {
				st.raw = g.raw
			}
			if flag(m.ReadMinScore, true) && g.min != nil {
				st.min = g.min
			}
			if flag(m.ReadMaxScore, true) && g.max != nil {
				st.max = g.max
			}
		}
	}
	return st
}

// globalWrite is what an activity's write maps put into one global
// objective; unknown values leave the stored ones as they are.
type globalWrite struct {
	target string
	objState
}

// writes collects what the write maps of a SCO and of its ancestors put
// into the global objectives after the SCO's track changed, from their
// own (local) states: the SCO's from its track, the clusters' from
// rollup.
func (t *tree) writes(leaf *node) []globalWrite {
	var out []globalWrite
	for n := leaf; n != nil; n = n.parent {
		if n.seq == nil || n.seq.Objectives == nil {
			continue
		}
		o := n.seq.Objectives
		defs := []*manifest.Objective{o.Primary}
		for i := range o.Others {
			defs = append(defs, &o.Others[i])
		}
		for i, def := range defs {
			if def == nil {
				continue
			}
			st := n.localState(def, i == 0)
			for _, m := range def.MapInfo {
				var w globalWrite
				if flag(m.WriteSatisfiedStatus, false) && st.known {
					w.known, w.satisfied = true, st.satisfied
				}
				if flag(m.WriteNormalizedMeasure, false) {
					w.measure = st.measure
				}
				out = appendWrite(out, m.TargetObjectiveID, w)
			}
			for _, m := range n.adlMaps(def.ObjectiveID) {
				var w globalWrite
				if flag(m.WriteCompletionStatus, false) && st.progressKnown {
					w.progressKnown, w.completed = true, st.completed
				}
				if flag(m.WriteProgressMeasure, false) {
					w.progress = st.progress
				}
				if flag(m.WriteRawScore, false) {
					w.raw = st.raw
				}
				if flag(m.WriteMinScore, false) {
					w.min = st.min
				}
				if flag(m.WriteMaxScore, false) {
					w.max = st.max
				}
				out = appendWrite(out, m.TargetObjectiveID, w)
			}
		}
	}
	return out
}

func appendWrite(out []globalWrite, target string, w globalWrite) []globalWrite {
	if target == "" || !w.known && w.measure == nil && !w.progressKnown && w.progress == nil && w.raw == nil && w.min == nil && w.max == nil {
		return out
	}
	w.target = target
	return append(out, w)
}

// loadGlobals reads a learner's global objectives of a package.
func loadGlobals(ctx context.Context, q sqldb.Querier, userID, packageID int64) (map[string]objState, error) {
	rows, err := q.QueryContext(ctx, `SELECT objective_id, satisfied, measure, completion, progress, score_raw, score_min, score_max
		FROM scorm_objectives WHERE user_id = $1 AND package_id = $2`, userID, packageID)
	if err != nil {
		return nil, fmt.Errorf("scorm: global objectives: %w", err)
	}
	defer rows.Close()
	out := map[string]objState{}
	for rows.Next() {
		var id, satisfied, completion string
		var measure, progress, raw, lo, hi sql.NullFloat64
		if err := rows.Scan(&id, &satisfied, &measure, &completion, &progress, &raw, &lo, &hi); err != nil {
			return nil, err
		}
		var g objState
		g.known, g.satisfied = satisfied != "", satisfied == "satisfied"
		g.progressKnown, g.completed = completion != "", completion == "completed"
		g.measure, g.progress, g.raw, g.min, g.max = float(measure), float(progress), float(raw), float(lo), float(hi)
		out[id] = g
	}
	return out, rows.Err()
}

// storeGlobals writes the write maps' values; a value a write does not
// know keeps the stored one.
func storeGlobals(ctx context.Context, q sqldb.Querier, userID, packageID int64, ws []globalWrite, now time.Time) error {
	for _, w := range ws {
		satisfied, completion := "", ""
		if w.known {
			satisfied = "notSatisfied"
			if w.satisfied {
				satisfied = "satisfied"
			}
		}
		if w.progressKnown {
			completion = "incomplete"
			if w.completed {
				completion = "completed"
			}
		}
		_, err := q.ExecContext(ctx, `INSERT INTO scorm_objectives (user_id, package_id, objective_id, satisfied, measure,
				completion, progress, score_raw, score_min, score_max, updated_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
			ON CONFLICT (user_id, package_id, objective_id) DO UPDATE SET
				satisfied = CASE WHEN excluded.satisfied = '' THEN scorm_objectives.satisfied ELSE excluded.satisfied END,
				measure = COALESCE(excluded.measure, scorm_objectives.measure),
				completion = CASE WHEN excluded.completion = '' THEN scorm_objectives.completion ELSE excluded.completion END,
				progress = COALESCE(excluded.progress, scorm_objectives.progress),
				score_raw = COALESCE(excluded.score_raw, scorm_objectives.score_raw),
				score_min = COALESCE(excluded.score_min, scorm_objectives.score_min),
				score_max = COALESCE(excluded.score_max, scorm_objectives.score_max),
				updated_at = excluded.updated_at`,
			userID, packageID, w.target, satisfied, w.measure, completion, w.progress, w.raw, w.min, w.max, now)
		if err != nil {
			return fmt.Errorf("scorm: write global objective %q: %w", w.target, err)
		}
	}
	return nil
}

// writeGlobals stores what the write maps of a committed SCO and of its
// ancestors say, in the commit's transaction, so that the next launch or
// navigation reads the SCO's new result.
func writeGlobals(ctx context.Context, tx *sqldb.Tx, pkg storedPackage, sco storedSCO, k ticket, now time.Time) error {
	if !manifest.Is2004(pkg.Version) || !writesMaps(newTree(pkg, nil, nil).byID[sco.Item.Identifier]) {
		// Most packages map no objective: their commits read nothing more.
		return nil
	}
	state, globals, err := learnerState(ctx, tx, pkg, k.UserID, k.TopicID, k.SCOID)
	if err != nil {
		return err
	}
	tree := newTree(pkg, state, globals)
	leaf := tree.byID[sco.Item.Identifier]
	if leaf == nil {
		return nil
	}
	return storeGlobals(ctx, tx, k.UserID, pkg.ID, tree.writes(leaf), now)
}

// writesMaps tells whether the SCO or one of its ancestors has a write
// map.
func writesMaps(leaf *node) bool {
	for n := leaf; n != nil; n = n.parent {
		if n.seq == nil || n.seq.Objectives == nil {
			continue
		}
		o := n.seq.Objectives
		defs := append([]manifest.Objective{}, o.Others...)
		if o.Primary != nil {
			defs = append(defs, *o.Primary)
		}
		for _, d := range defs {
			for _, m := range d.MapInfo {
				if flag(m.WriteSatisfiedStatus, false) || flag(m.WriteNormalizedMeasure, false) {
					return true
				}
			}
			for _, m := range n.adlMaps(d.ObjectiveID) {
				if flag(m.WriteCompletionStatus, false) || flag(m.WriteProgressMeasure, false) || flag(m.WriteRawScore, false) ||
					flag(m.WriteMinScore, false) || flag(m.WriteMaxScore, false) {
					return true
				}
			}
		}
	}
	return false
}
