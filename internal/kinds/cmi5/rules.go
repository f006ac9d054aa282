package cmi5

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/lms-platform/lms/internal/apperr"
	"github.com/lms-platform/lms/internal/clock"
	"github.com/lms-platform/lms/internal/lrs"
	"github.com/lms-platform/lms/internal/platform"
	"github.com/lms-platform/lms/internal/sqldb"
	"github.com/lms-platform/lms/internal/topics"
)

func insertSession(ctx context.Context, db *sqldb.DB, s session, fetchHash string) error {
	_, err := db.ExecContext(ctx, `INSERT INTO cmi5_sessions (id, registration, au_id, topic_id, user_id, launch_mode, fetch_hash, launched_at)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`, s.ID, s.Registration, s.AUID, s.TopicID, s.UserID, s.LaunchMode, fetchHash, s.LaunchedAt)
	if err != nil {
		return fmt.Errorf("cmi5: insert session: %w", err)
	}
	return nil
}

// claimFetch gives the session of a fetch code its token, once.
func claimFetch(ctx context.Context, db *sqldb.DB, fetchHash, tokenHash string) (used, found bool, err error) {
	res, err := db.ExecContext(ctx, `UPDATE cmi5_sessions SET token_hash = $1 WHERE fetch_hash = $2 AND token_hash IS NULL
AND terminated_at IS NULL AND abandoned_at IS NULL`, tokenHash, fetchHash)
	if err != nil {
		return false, false, fmt.Errorf("cmi5: claim fetch: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 1 {
		return false, true, nil
	}
	var id string
	err = db.QueryRowContext(ctx, `SELECT id FROM cmi5_sessions WHERE fetch_hash = $1`, fetchHash).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return false, false, nil
	}
	if err != nil {
		return false, false, fmt.Errorf("cmi5: look up fetch: %w", err)
	}
	return true, true, nil
}

// registered evaluates moveOn at a new registration: NotApplicable AUs
// are satisfied.
func (s *Service) registered(ctx context.Context, t *platform.Tenant, pkg Cmi5Package, reg string, userID, topicID int64) error {
	changed := false
	for _, au := range pkg.AUs {
		if au.MoveOn == NotApplicable {
			if err := saveStatus(ctx, t.DB, reg, au.ID, auStatus{Satisfied: true}); err != nil {
				return err
			}
			changed = true
		}
	}
	if changed {
		return s.satisfyContainers(ctx, t, pkg, reg, userID, uuid.NewString())
	}
	return nil
}

// abandonOpen records abandoned for the registration's sessions that
// neither terminated nor were abandoned: a new launch ends them (cmi5
// section 9.3.6). Their duration runs from launched to their last
// statement.
func (s *Service) abandonOpen(ctx context.Context, t *platform.Tenant, pkg Cmi5Package, reg string, now time.Time) error {
	for _, au := range pkg.AUs {
		open, err := openSessions(ctx, t.DB, reg, au.ID)
		if err != nil {
			return err
		}
		for _, sess := range open {
			if err := s.abandon(ctx, t, sess, au, now); err != nil {
				return err
			}
		}
	}
	return nil
}

func (s *Service) abandon(ctx context.Context, t *platform.Tenant, sess session, au AUInfo, now time.Time) error {
	res, err := t.DB.ExecContext(ctx, `UPDATE cmi5_sessions SET abandoned_at = $1 WHERE id = $2 AND abandoned_at IS NULL AND terminated_at IS NULL`,
		now, sess.ID)
	if err != nil {
		return fmt.Errorf("cmi5: abandon session: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return nil
	}
	last := sess.LaunchedAt
	if sess.LastAt != nil && sess.LastAt.After(last) {
		last = *sess.LastAt
	}
	// The LMS's estimate of the session's time counts as the learner's
	// time on the topic, as a terminated session's own duration does.
	if err := s.addTime(ctx, t, sess, int64(math.Round(last.Sub(sess.LaunchedAt).Seconds()))); err != nil {
		return err
	}
	stmt := map[string]any{"actor": Actor(t, sess.UserID), "verb": verb(VerbAbandoned, "abandoned"),
		"object":    activity(launchActivityID(t, au.packageID, au.IRI, sess.Registration)),
		"timestamp": now.Format(time.RFC3339Nano),
		"result":    map[string]any{"duration": isoDuration(last.Sub(sess.LaunchedAt))},
		"context": map[string]any{"registration": sess.Registration, "extensions": map[string]any{ExtSessionID: sess.ID},
			"contextActivities": map[string]any{"category": []any{activity(CategoryCmi5)}, "grouping": []any{activity(au.IRI)}}}}
	return s.issue(ctx, t, stmt)
}

var errAUVoiding = apperr.New(apperr.Forbidden, "An AU may not void statements (cmi5 section 6.3).")

// Admit applies the rules of a statement as the AU sent it (403 when
// broken): no voiding, an id of the AU's own, a timestamp in UTC.
func (s *Service) Admit(_ lrs.Scope, st *lrs.Statement) error {
	// The LMS gives an AU no credentials to void statements (cmi5 section
	// 6.3), not even its own.
	if st.Verb == lrs.VerbVoided {
		return errAUVoiding
	}
	if st.ID == "" {
		return rejected("the AU must give each statement its id (cmi5 section 9.1).")
	}
	ts, _ := st.Object["timestamp"].(string)
	if ts == "" {
		return rejected("the statement needs a timestamp (cmi5 section 9.7).")
	}
	if !utc(ts) {
		return rejected("the timestamp %s is not in UTC (cmi5 section 9.7).", ts)
	}
	return nil
}

// utc tells whether an ISO 8601 timestamp is written in UTC: Z, or the
// offset +00:00 (xAPI refuses -00:00 already).
func utc(ts string) bool {
	return strings.HasSuffix(ts, "Z") || strings.HasSuffix(ts, "z") || strings.HasSuffix(ts, "+00:00") || strings.HasSuffix(ts, "+0000")
}

func isoDuration(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	return fmt.Sprintf("PT%.2fS", d.Seconds())
}

// Record applies cmi5's session rules to a batch a launch writes (cmi5
// sections 9.3 and 9.5), in the transaction storing it, so a refusal
// refuses the batch, and records what it changed: the session and the
// AU's status and score. When the AU turns satisfied, the returned
// function completes the topic and satisfies the AU's blocks and course,
// after the commit.
func (s *Service) Record(ctx context.Context, tx *sqldb.Tx, t *platform.Tenant, scope lrs.Scope, list []*lrs.Statement) (func(context.Context) error, error) {
	sess, au, st, err := recordState(ctx, tx, scope.Session)
	if err != nil {
		return nil, err
	}
	before, wasTerminated := st, sess.Terminated != nil
	if _, err := apply(&sess, &st, au, scope.ActivityID, list); err != nil {
		return nil, err
	}
	st.Satisfied = st.Satisfied || moveOnMet(au.MoveOn, st)
	// last_at is the server's time of the session's last statement, what
	// an abandoned session's time is measured to: the AU's clock is not
	// trusted for the learner's time.
	last := s.now()
	if sess.Terminated != nil && !wasTerminated {
		// terminated's duration is the AU's claim: it counts at most the
		// wall-clock time since the launch.
		sess.Seconds = clock.Spent(sess.Seconds, sess.LaunchedAt, last)
	}
	_, err = tx.ExecContext(ctx, `UPDATE cmi5_sessions SET initialized_at = $1, completed = $2, passed = $3, failed = $4, terminated_at = $5,
seconds = $6, last_at = $7 WHERE id = $8`, sess.Initialized, sess.Completed, sess.Passed, sess.Failed, sess.Terminated, sess.Seconds, last, sess.ID)
	if err != nil {
		return nil, fmt.Errorf("cmi5: update session: %w", err)
	}
	// After the commit: the session's time (terminated's duration) joins
	// the learner's time on the topic, and a satisfied AU completes the
	// topic and satisfies its blocks and course.
	var after []func(context.Context) error
	if sess.Terminated != nil && !wasTerminated {
		after = append(after, func(ctx context.Context) error { return s.addTime(ctx, t, sess, sess.Seconds) })
	}
	if st != before {
		if err := saveStatus(ctx, tx, sess.Registration, au.ID, st); err != nil {
			return nil, err
		}
	}
	// A satisfied AU completes the topic with its best scaled score, and
	// passes on a better one later (the topic keeps the best).
	rescored := st.Score != nil && (before.Score == nil || *st.Score > *before.Score)
	if st.Satisfied && (!before.Satisfied || rescored) {
		var score *topics.TopicScore
		if st.Score != nil {
			score = topics.Scaled(*st.Score)
		}
		after = append(after, func(ctx context.Context) error {
			if err := s.completeTopic(ctx, t, sess.UserID, sess.TopicID, score); err != nil {
				return err
			}
			if before.Satisfied {
				return nil
			}
			pkg, err := packageByID(ctx, t.DB, au.packageID)
			if err != nil {
				return err
			}
			return s.satisfyContainers(ctx, t, pkg, sess.Registration, sess.UserID, sess.ID)
		})
	}
	if len(after) == 0 {
		return nil, nil
	}
	return func(ctx context.Context) error {
		for _, fn := range after {
			if err := fn(ctx); err != nil {
				return err
			}
		}
		return nil
	}, nil
}

// completeTopic completes a learner's topic (with a score to keep). A
// topic that is gone, or closed to the learner, stays as it is.
func (s *Service) completeTopic(ctx context.Context, t *platform.Tenant, userID, topicID int64, score *topics.TopicScore) error {
	err := s.Progress.CompleteTopicScored(ctx, t, userID, topicID, score)
	if err != nil && !apperr.Is(err, apperr.Forbidden) && !apperr.Is(err, apperr.NotFound) {
		return err
	}
	return nil
}

// addTime adds a session's seconds to the learner's time on its topic.
// A topic that is gone, or closed to the learner, keeps no time.
func (s *Service) addTime(ctx context.Context, t *platform.Tenant, sess session, seconds int64) error {
	if s.Time == nil || seconds <= 0 {
		return nil
	}
	err := s.Time.AddTopicTime(ctx, t.DB, sess.UserID, sess.TopicID, seconds)
	if err != nil && !apperr.Is(err, apperr.NotFound) && !apperr.Is(err, apperr.Forbidden) {
		return err
	}
	return nil
}

// moveOnMet tells whether an AU's status meets its moveOn.
func moveOnMet(moveOn string, st auStatus) bool {
	switch moveOn {
	case Completed:
		return st.Completed
	case Passed:
		return st.Passed
	case CompletedAndPassed:
		return st.Completed && st.Passed
	case CompletedOrPassed:
		return st.Completed || st.Passed
	}
	return true
}

// satisfyContainers issues satisfied for each block whose AUs are all
// satisfied, and for the course, once per registration.
func (s *Service) satisfyContainers(ctx context.Context, t *platform.Tenant, pkg Cmi5Package, reg string, userID int64, sessionID string) error {
	done, err := satisfiedAUs(ctx, t.DB, reg)
	if err != nil {
		return err
	}
	blocks := map[string][]int64{}
	var order []string
	all := true
	for _, au := range pkg.AUs {
		all = all && done[au.ID]
		for _, b := range au.Blocks {
			if _, seen := blocks[b]; !seen {
				order = append(order, b)
			}
			blocks[b] = append(blocks[b], au.ID)
		}
	}
	// Inner blocks first, so a block is satisfied before the one holding
	// it and the course last.
	slices.Reverse(order)
	for _, b := range order {
		ok := true
		for _, id := range blocks[b] {
			ok = ok && done[id]
		}
		if ok {
			if err := s.satisfy(ctx, t, pkg.ID, reg, userID, sessionID, "block", b); err != nil {
				return err
			}
		}
	}
	if all {
		return s.satisfy(ctx, t, pkg.ID, reg, userID, sessionID, "course", pkg.CourseIRI)
	}
	return nil
}

func (s *Service) satisfy(ctx context.Context, t *platform.Tenant, packageID int64, reg string, userID int64, sessionID, kind, iri string) error {
	fresh, err := markSatisfied(ctx, t.DB, reg, iri)
	if err != nil || !fresh {
		return err
	}
	object := map[string]any{"objectType": "Activity", "id": lmsActivityID(t, packageID, kind, iri),
		"definition": map[string]any{"type": "https://w3id.org/xapi/cmi5/activitytype/" + kind}}
	stmt := map[string]any{"actor": Actor(t, userID), "verb": verb(VerbSatisfied, "satisfied"), "object": object,
		"timestamp": s.now().Format(time.RFC3339Nano),
		"context": map[string]any{"registration": reg, "extensions": map[string]any{ExtSessionID: sessionID},
			"contextActivities": map[string]any{"category": []any{activity(CategoryCmi5)}, "grouping": []any{activity(iri)}}}}
	return s.issue(ctx, t, stmt)
}

var lmsVerbs = map[string]bool{VerbLaunched: true, VerbAbandoned: true, VerbWaived: true, VerbSatisfied: true}

var cmi5Verbs = map[string]bool{VerbInitialized: true, VerbCompleted: true, VerbPassed: true, VerbFailed: true, VerbTerminated: true}

func rejected(format string, args ...any) error {
	return rejectedAs("Statement rejected by the cmi5 rules: ", format, args...)
}

func rejectedAs(prefix, format string, args ...any) error {
	return apperr.New(apperr.Forbidden, prefix+fmt.Sprintf(format, args...))
}

// apply walks a batch through the session's state, changing sess and st
// as the statements would, or refuses the first statement breaking a
// rule. activityID is the launch's activityId, the object of the AU's
// cmi5 defined statements. It returns the time of the last statement.
func apply(sess *session, st *auStatus, au AUInfo, activityID string, list []*lrs.Statement) (time.Time, error) {
	var last time.Time
	if sess.Abandoned != nil {
		return last, rejected("the session was abandoned.")
	}
	for _, stmt := range list {
		obj := stmt.Object
		ctxObj, _ := obj["context"].(map[string]any)
		if err := matchesTemplate(ctxObj, au, sess.ID); err != nil {
			return last, err
		}
		if sess.Terminated != nil {
			return last, rejected("the session has terminated.")
		}
		if lmsVerbs[stmt.Verb] {
			return last, rejected("only the LMS issues %s.", stmt.Verb)
		}
		if sess.Initialized == nil && stmt.Verb != VerbInitialized {
			return last, rejected("the first statement of a session must be initialized.")
		}
		ts := statementTime(obj)
		last = ts
		defined := cmi5Verbs[stmt.Verb] && hasActivity(ctxObj, "category", CategoryCmi5)
		if !defined {
			if stmt.Verb == VerbInitialized && sess.Initialized == nil {
				return last, rejected("initialized must be a cmi5 defined statement (with the cmi5 category).")
			}
			if hasActivity(ctxObj, "category", CategoryMoveOn) {
				return last, rejected("only cmi5 defined statements may carry the moveon category (cmi5 section 9.6.2.2).")
			}
			continue
		}
		if actor, _ := obj["actor"].(map[string]any); actor["objectType"] != nil && actor["objectType"] != "Agent" {
			return last, rejected("the actor of a cmi5 defined statement must be an Agent (cmi5 section 9.2).")
		}
		if stmt.ObjectType != "Activity" || stmt.ObjectID != activityID {
			return last, rejected("the object of a cmi5 defined statement must be the launch's activityId %s (cmi5 section 9.4).", activityID)
		}
		result, _ := obj["result"].(map[string]any)
		if err := checkResult(stmt.Verb, result, ctxObj); err != nil {
			return last, err
		}
		switch stmt.Verb {
		case VerbInitialized:
			if sess.Initialized != nil {
				return last, rejected("initialized was already sent in this session.")
			}
			if !sess.PreferencesRead {
				return last, rejected("the AU must read the learner preferences (cmi5LearnerPreferences) before initialized (cmi5 section 11.0).")
			}
			sess.Initialized = &ts
		case VerbCompleted:
			if sess.LaunchMode != Normal {
				return last, rejected("completed is not allowed in %s mode.", sess.LaunchMode)
			}
			if sess.Completed || st.Completed {
				return last, rejected("completed was already sent in this registration.")
			}
			sess.Completed, st.Completed = true, true
		case VerbPassed, VerbFailed:
			if sess.LaunchMode != Normal {
				return last, rejected("passed and failed are not allowed in %s mode.", sess.LaunchMode)
			}
			if sess.Passed || sess.Failed {
				return last, rejected("passed or failed was already sent in this session.")
			}
			if st.Passed {
				return last, rejected("the AU was already passed in this registration.")
			}
			if err := checkMastery(stmt.Verb, au.MasteryScore, ctxObj); err != nil {
				return last, err
			}
			scaled, hasScaled := scaledScore(result)
			if stmt.Verb == VerbPassed {
				if hasScaled && au.MasteryScore != nil && scaled < *au.MasteryScore {
					return last, rejected("passed with the scaled score %v below the mastery score %v.", scaled, *au.MasteryScore)
				}
				sess.Passed, st.Passed = true, true
			} else {
				if hasScaled && au.MasteryScore != nil && scaled >= *au.MasteryScore {
					return last, rejected("failed with the scaled score %v at or above the mastery score %v.", scaled, *au.MasteryScore)
				}
				sess.Failed = true
			}
			if hasScaled && (st.Score == nil || scaled > *st.Score) {
				st.Score = &scaled
			}
		case VerbTerminated:
			sess.Terminated = &ts
			if d, ok := result["duration"].(string); ok {
				if dur, err := lrs.ParseDuration(d); err == nil {
					sess.Seconds = int64(math.Round(dur.Seconds()))
				}
			}
		}
	}
	return last, nil
}

// matchesTemplate checks that a statement carries the session's context
// template: the session id and the AU's publisher id in grouping.
func matchesTemplate(ctxObj map[string]any, au AUInfo, sessionID string) error {
	ext, _ := ctxObj["extensions"].(map[string]any)
	if id, _ := ext[ExtSessionID].(string); id != sessionID {
		return rejected("the context does not carry the session id of LMS.LaunchData's contextTemplate.")
	}
	if !hasActivity(ctxObj, "grouping", au.IRI) {
		return rejected("the context's grouping does not hold the AU's publisher id of LMS.LaunchData's contextTemplate.")
	}
	return nil
}

func hasActivity(ctxObj map[string]any, list, id string) bool {
	ca, _ := ctxObj["contextActivities"].(map[string]any)
	items, _ := ca[list].([]any)
	for _, a := range items {
		if m, ok := a.(map[string]any); ok && m["id"] == id {
			return true
		}
	}
	return false
}

// checkResult applies cmi5 section 9.5 to a cmi5 defined statement.
func checkResult(verbID string, result, ctxObj map[string]any) error {
	_, hasSuccess := result["success"]
	_, hasCompletion := result["completion"]
	_, hasScore := result["score"]
	_, hasDuration := result["duration"]
	switch verbID {
	case VerbPassed, VerbFailed:
		if result["success"] != (verbID == VerbPassed) {
			return rejected("%s needs result.success %v.", verbID, verbID == VerbPassed)
		}
		if hasCompletion {
			return rejected("%s may not have result.completion.", verbID)
		}
	case VerbCompleted:
		if result["completion"] != true {
			return rejected("completed needs result.completion true.")
		}
		if hasSuccess {
			return rejected("completed may not have result.success.")
		}
	default:
		if hasSuccess || hasCompletion {
			return rejected("%s may not have result.success or result.completion.", verbID)
		}
	}
	if hasScore && verbID != VerbPassed && verbID != VerbFailed {
		return rejected("only passed and failed may have a score.")
	}
	if score, _ := result["score"].(map[string]any); score["raw"] != nil && (score["min"] == nil || score["max"] == nil) {
		return rejected("a raw score needs min and max (cmi5 section 9.5.1).")
	}
	if !hasDuration && (verbID == VerbTerminated || verbID == VerbCompleted || verbID == VerbPassed || verbID == VerbFailed) {
		return rejected("%s needs result.duration.", verbID)
	}
	moveOn := hasActivity(ctxObj, "category", CategoryMoveOn)
	if (hasSuccess || hasCompletion) != moveOn {
		return rejected("the moveon category belongs exactly to statements with result.success or result.completion.")
	}
	return nil
}

// checkMastery applies cmi5 section 9.6.3.2: passed and failed of an AU
// with a mastery score carry it in the masteryscore extension.
func checkMastery(verbID string, mastery *float64, ctxObj map[string]any) error {
	if mastery == nil {
		return nil
	}
	ext, _ := ctxObj["extensions"].(map[string]any)
	n, ok := ext[ExtMasteryScore].(interface{ Float64() (float64, error) })
	if !ok {
		return rejected("%s needs the masteryscore extension %v of LMS.LaunchData.", verbID, *mastery)
	}
	if f, err := n.Float64(); err != nil || f != *mastery {
		return rejected("%s carries the masteryscore %v, not LMS.LaunchData's %v.", verbID, n, *mastery)
	}
	return nil
}

func scaledScore(result map[string]any) (float64, bool) {
	score, _ := result["score"].(map[string]any)
	n, ok := score["scaled"].(interface{ Float64() (float64, error) })
	if !ok {
		return 0, false
	}
	f, err := n.Float64()
	return f, err == nil
}

func statementTime(obj map[string]any) time.Time {
	ts, _ := obj["timestamp"].(string)
	if t, err := time.Parse(time.RFC3339Nano, ts); err == nil {
		return t.UTC()
	}
	return time.Now().UTC()
}
