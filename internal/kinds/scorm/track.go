package scorm

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/lms-platform/lms/internal/access"
	"github.com/lms-platform/lms/internal/accounts"
	"github.com/lms-platform/lms/internal/apperr"
	"github.com/lms-platform/lms/internal/clock"
	"github.com/lms-platform/lms/internal/courses"
	"github.com/lms-platform/lms/internal/kinds/scorm/manifest"
	"github.com/lms-platform/lms/internal/platform"
	"github.com/lms-platform/lms/internal/sqldb"
	"github.com/lms-platform/lms/internal/topics"
)

// ScoLaunch is what POST /api/scorm/launch/{sco} answers.
type ScoLaunch struct {
	PlayerURL   string    `json:"player_url" doc:"The player page: POST it the token as form field token (an HTML form whose target is an iframe), so the token never appears in a URL."`
	Token       string    `json:"token" doc:"Tracking token, bound to tenant, user, topic and SCO; sent as X-Lms-Tracking-Token on the SCO's tracking routes, refused everywhere else."`
	TokenHeader string    `json:"token_header" doc:"The header the tracking routes read the token from."`
	ExpiresAt   time.Time `json:"expires_at"`
	TopicID     int64     `json:"topic_id"`
	SCO         SCO       `json:"sco"`
	Attempt     int       `json:"attempt"`
	Entry       string    `json:"entry" enum:"ab-initio,resume" doc:"resume when the SCO gets its stored data back (after exit=suspend, or an attempt left without a normal exit)."`
	Ended       bool      `json:"ended,omitempty" doc:"Navigation only: no SCO comes next (exit, or an exitAll rule, or flow past the end after a rule): the other fields are empty."`
	Rule        string    `json:"rule,omitempty" doc:"Navigation only: the SCORM 2004 exit or post-condition rule that decided (exit, exitParent, exitAll, retry, retryAll, continue, previous)."`
}

// Track is a learner's track of one SCO, as GET /api/courses/{course}/scorm lists it.
type Track struct {
	TopicID     int64      `json:"topic_id"`
	SCOID       int64      `json:"sco_id"`
	Identifier  string     `json:"identifier"`
	Title       string     `json:"title"`
	Attempt     int        `json:"attempt"`
	Status      string     `json:"status" doc:"passed, failed, completed, incomplete, browsed or not attempted (1.2 lesson_status; 2004 success_status when known, else completion_status)."`
	Completion  string     `json:"completion_status"`
	Success     string     `json:"success_status"`
	Score       Score      `json:"score"`
	Seconds     int64      `json:"seconds" doc:"Total time in the SCO, every session."`
	CompletedAt *time.Time `json:"completed_at"`
	LastAccess  time.Time  `json:"last_access"`
}

// Score is a track's score as the SCO reported it.
type Score struct {
	Raw    *float64 `json:"raw"`
	Min    *float64 `json:"min"`
	Max    *float64 `json:"max"`
	Scaled *float64 `json:"scaled"`
}

func (t Track) status() string {
	if t.Success == "passed" || t.Success == "failed" {
		return t.Success
	}
	return t.Completion
}

// Launch opens a session of a SCO of a SCORM topic for p: learners where
// they may record progress; the course's editors may always try it (their
// launch is a preview that records nothing in progress).
func (s *Service) Launch(ctx context.Context, t *platform.Tenant, p *access.Principal, scoID, topicID int64) (ScoLaunch, error) {
	topic, value, err := scormTopic(ctx, t, topicID)
	if err != nil {
		return ScoLaunch{}, err
	}
	preview := false
	if err := s.Progress.CanRecord(ctx, t, p, topicID); err != nil {
		course, cerr := courses.ByID(ctx, t.DB, topic.CourseID)
		if cerr != nil || !courses.CanEdit(p, course) {
			return ScoLaunch{}, err
		}
		preview = true
	}
	return s.open(ctx, t, p.UserID, topicID, value, scoID, preview)
}

func scormTopic(ctx context.Context, t *platform.Tenant, topicID int64) (topics.Topic, Value, error) {
	topic, err := topics.ByID(ctx, t.DB, topicID)
	if err != nil {
		return topic, Value{}, err
	}
	if topic.TopicableType != Class {
		return topic, Value{}, apperr.New(apperr.Invalid, "This topic is not a SCORM topic.")
	}
	v, err := Parse(topic.Content)
	return topic, v, err
}

// open starts a session of a SCO: it checks that the SCO belongs to the
// topic's package and that its 1.2 prerequisites and 2004 sequencing let
// the learner in, then resumes the attempt or starts a new one.
func (s *Service) open(ctx context.Context, t *platform.Tenant, userID, topicID int64, value Value, scoID int64,
	preview bool) (ScoLaunch, error) {
	pkg, err := loadPackage(ctx, t, value.PackageID)
	if err != nil {
		return ScoLaunch{}, err
	}
	sco, ok := pkg.sco(scoID)
	if !ok {
		return ScoLaunch{}, errSCOMissing
	}
	tracks, err := tracksOfTopic(ctx, t.DB, topicID, userID)
	if err != nil {
		return ScoLaunch{}, err
	}
	if !preview {
		state, globals, err := learnerState(ctx, t.DB, pkg, userID, topicID, scoID)
		if err != nil {
			return ScoLaunch{}, err
		}
		if err := newTree(pkg, state, globals).enter(sco.Item.Identifier); err != nil {
			return ScoLaunch{}, err
		}
	}
	now := s.Clock.Now().UTC()
	tr, ok := tracks[scoID]
	if !ok {
		tr = track{TopicID: topicID, SCOID: scoID, UserID: userID}
	}
	// A new attempt starts clean only after an attempt that ended with a
	// normal exit; a suspended attempt, or one left without a normal exit
	// (a closed tab), comes back whole.
	resume := tr.ID != 0 && len(tr.CMI) > 0
	newAttempt := resume && tr.Exit != "suspend" && ended(tr.Completion, tr.Success) || tr.ID != 0 && tr.Exit == exitRetry
	if newAttempt {
		resume = false
	}
	if err := startSession(ctx, t.DB, &tr, now, newAttempt); err != nil {
		return ScoLaunch{}, err
	}
	if sco.Item.ScormType == "asset" && !done(tr.Completion, tr.Success) {
		// Assets cannot talk to the runtime: launching one completes it,
		// as the commercial engines do.
		// The topic completes with settle below.
		if err := completeAsset(ctx, t, &tr, now); err != nil {
			return ScoLaunch{}, err
		}
	}
	k := ticket{UserID: userID, TopicID: topicID, SCOID: scoID, Session: tr.Session, Expires: now.Add(trackTokenTTL).Unix(),
		Preview: preview, Owns: scoID == value.SCOID}
	// A refused completion (the deadline passed since the session
	// began) does not keep the learner from the SCO.
	if err := s.settle(ctx, t, k, &tr); err != nil && !apperr.Is(err, apperr.Forbidden) {
		return ScoLaunch{}, err
	}
	entry := "ab-initio"
	if resume {
		entry = "resume"
	}
	return ScoLaunch{PlayerURL: "/api/scorm/player/" + strconv.FormatInt(scoID, 10), Token: k.sign(t), TokenHeader: TokenHeader,
		ExpiresAt: time.Unix(k.Expires, 0).UTC(), TopicID: topicID, SCO: sco.view(), Attempt: tr.Attempt, Entry: entry}, nil
}

func completeAsset(ctx context.Context, t *platform.Tenant, tr *track, now time.Time) error {
	tr.Completion, tr.CompletedAt = "completed", &now
	if _, err := commitTrack(ctx, t.DB, tr, tr.Session, 1, now); err != nil {
		return err
	}
	tr.Seq = 1
	return nil
}

// CommitInput is one commit of the runtime.
type CommitInput struct {
	Seq       int64          `json:"seq" minimum:"1" doc:"The commit's number in its session, from 1 up; a commit whose number is not above the stored one changes nothing (late or repeated)."`
	Terminate bool           `json:"terminate,omitempty" doc:"The session's last commit (LMSFinish / Terminate)."`
	CMI       map[string]any `json:"cmi" doc:"The whole CMI data model, flattened: {\"cmi.core.lesson_status\": \"incomplete\", \"cmi.suspend_data\": \"...\"}."`
}

// CommitResult answers a commit.
type CommitResult struct {
	Result  bool   `json:"result" doc:"true: the commit is stored or was already superseded."`
	Applied bool   `json:"applied" doc:"false for a late or repeated commit, which changed nothing."`
	Seq     int64  `json:"seq" doc:"The highest commit number stored for the session."`
	Status  string `json:"status"`
}

// Commit stores a commit of a session. Commits are ordered by (session,
// seq): one from an older session, or not newer than the stored one, is
// answered without changing anything, so retries and late arrivals are
// harmless. A SCO turning completed or passed completes its topic.
func (s *Service) Commit(ctx context.Context, t *platform.Tenant, k ticket, in CommitInput) (CommitResult, error) {
	if err := checkCMI(in.CMI); err != nil {
		return CommitResult{}, err
	}
	if !k.Preview {
		// Writes after the learner's deadline are refused as other
		// progress is.
		if err := s.Progress.CanRecord(ctx, t, &access.Principal{UserID: k.UserID}, k.TopicID); err != nil {
			return CommitResult{}, err
		}
	}
	tr, err := trackOf(ctx, t.DB, k.TopicID, k.SCOID, k.UserID)
	if err != nil {
		return CommitResult{}, err
	}
	if tr == nil {
		return CommitResult{}, errSCOMissing
	}
	stale := CommitResult{Result: true, Seq: tr.Seq, Status: Track{Completion: tr.Completion, Success: tr.Success}.status()}
	if k.Session != tr.Session || in.Seq <= tr.Seq {
		// A retried commit whose first try stored the track but failed
		// to complete the topic finishes the completion now.
		return stale, s.settle(ctx, t, k, tr)
	}
	pkgID, err := packageOfSCO(ctx, t.DB, k.SCOID)
	if err != nil {
		return CommitResult{}, err
	}
	pkg, err := loadPackage(ctx, t, pkgID)
	if err != nil {
		return CommitResult{}, err
	}
	sco, _ := pkg.sco(k.SCOID)
	now := s.Clock.Now().UTC()
	r := read(in.CMI, manifest.Is2004(pkg.Version), sco.Item)
	before := tr.SessionSeconds
	tr.CMI, tr.Completion, tr.Success, tr.Exit = in.CMI, r.Completion, r.Success, r.Exit
	tr.ScoreRaw, tr.ScoreMin, tr.ScoreMax, tr.ScoreScaled = r.Raw, r.Min, r.Max, r.Scaled
	// The SCO's session_time is its own claim: it counts at most the
	// wall-clock time since the session's launch.
	tr.SessionSeconds = max(clock.Spent(r.SessionSeconds, k.launchedAt(), now), tr.SessionSeconds)
	if done(r.Completion, r.Success) && tr.CompletedAt == nil {
		tr.CompletedAt = &now
	}
	var applied bool
	err = t.Tx(ctx, func(tx *sqldb.Tx) error {
		var err error
		if applied, err = commitTrack(ctx, tx, tr, k.Session, in.Seq, now); err != nil || !applied || k.Preview {
			return err
		}
		if err := writeGlobals(ctx, tx, pkg, sco, k, now); err != nil {
			return err
		}
		// The time lands with the commit that measured it: a commit
		// retried after a failure neither loses it nor counts it twice.
		return s.Progress.AddTopicTime(ctx, tx, k.UserID, k.TopicID, tr.SessionSeconds-before)
	})
	if err != nil {
		return CommitResult{}, err
	}
	if !applied {
		// A newer commit got there first, and settles the topic itself.
		return stale, nil
	}
	out := CommitResult{Result: true, Applied: true, Seq: in.Seq, Status: Track{Completion: tr.Completion, Success: tr.Success}.status()}
	if k.Preview {
		return out, nil
	}
	if err := s.settle(ctx, t, k, tr); err != nil {
		return CommitResult{}, err
	}
	return out, nil
}

// settle completes the topic of a session whose SCO is done when the
// topic is not complete yet, or passes on the track's score when it beats
// the one the topic keeps. The track's completion is stored first and
// the topic's in the learning package after it, so a request can fail
// between the two (a lost connection, the deadline passing): the topic's
// completion and score are derived from the track on every later commit,
// retry and launch instead of only on the commit that turned the track
// done.
func (s *Service) settle(ctx context.Context, t *platform.Tenant, k ticket, tr *track) error {
	if k.Preview || !k.Owns || tr == nil || tr.CompletedAt == nil {
		return nil
	}
	complete, kept, err := s.Progress.TopicResult(ctx, t, k.UserID, k.TopicID)
	score := tr.score()
	if err != nil || complete && !score.Beats(kept) {
		return err
	}
	return s.Progress.CompleteTopicScored(ctx, t, k.UserID, k.TopicID, score)
}

// score is the track's score as a topic's result: the 2004 scaled score,
// else raw of max, else a raw score alone out of 100 (SCORM 1.2 scores
// are on 0..100 unless the SCO says otherwise); nil when the SCO set none.
func (tr *track) score() *topics.TopicScore {
	switch {
	case tr.ScoreScaled != nil:
		return topics.Scaled(*tr.ScoreScaled)
	case tr.ScoreRaw != nil && tr.ScoreMax != nil:
		return &topics.TopicScore{Raw: *tr.ScoreRaw, Max: *tr.ScoreMax}
	case tr.ScoreRaw != nil:
		return &topics.TopicScore{Raw: *tr.ScoreRaw, Max: 100}
	}
	return nil
}

// Tracks lists a learner's tracks in a course: the caller's own, or
// another learner's for the course's editors (admins and its tutors).
func (s *Service) Tracks(ctx context.Context, t *platform.Tenant, p *access.Principal, courseID, userID int64) ([]Track, error) {
	course, err := courses.ByID(ctx, t.DB, courseID)
	if err != nil {
		return nil, err
	}
	if userID == 0 {
		userID = p.UserID
	}
	if userID != p.UserID && !courses.CanEdit(p, course) {
		return nil, errUnauthorized
	}
	all, err := userTracks(ctx, t.DB, userID)
	if err != nil {
		return nil, err
	}
	out := []Track{}
	inCourse := map[int64]bool{}
	for _, tr := range all {
		in, seen := inCourse[tr.TopicID]
		if !seen {
			c, err := topics.CourseOf(ctx, t.DB, tr.TopicID)
			if err != nil && !apperr.Is(err, apperr.NotFound) {
				return nil, err
			}
			in = err == nil && c == courseID
			inCourse[tr.TopicID] = in
		}
		if in {
			out = append(out, tr)
		}
	}
	return out, nil
}

// learnerName is the name the SCO shows: "Last, First" as SCORM asks.
func learnerName(ctx context.Context, t *platform.Tenant, userID int64) (string, error) {
	u, err := accounts.ByID(ctx, t.DB, userID)
	if err != nil {
		return "", fmt.Errorf("scorm: learner %d: %w", userID, err)
	}
	switch {
	case u.LastName != "" && u.FirstName != "":
		return u.LastName + ", " + u.FirstName, nil
	case u.LastName+u.FirstName != "":
		return u.LastName + u.FirstName, nil
	}
	return u.Email, nil
}
