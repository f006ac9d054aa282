package cmi5

import (
	"context"
	"crypto/hmac"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/lms-platform/lms/internal/access"
	"github.com/lms-platform/lms/internal/apperr"
	"github.com/lms-platform/lms/internal/courses"
	"github.com/lms-platform/lms/internal/lrs"
	"github.com/lms-platform/lms/internal/platform"
	"github.com/lms-platform/lms/internal/topics"
)

// Verbs and identifiers of the cmi5 profile (cmi5 section 9).
const (
	VerbLaunched    = "http://adlnet.gov/expapi/verbs/launched"
	VerbInitialized = "http://adlnet.gov/expapi/verbs/initialized"
	VerbCompleted   = "http://adlnet.gov/expapi/verbs/completed"
	VerbPassed      = "http://adlnet.gov/expapi/verbs/passed"
	VerbFailed      = "http://adlnet.gov/expapi/verbs/failed"
	VerbAbandoned   = "https://w3id.org/xapi/adl/verbs/abandoned"
	VerbWaived      = "https://w3id.org/xapi/adl/verbs/waived"
	VerbTerminated  = "http://adlnet.gov/expapi/verbs/terminated"
	VerbSatisfied   = "https://w3id.org/xapi/adl/verbs/satisfied"

	CategoryCmi5   = "https://w3id.org/xapi/cmi5/context/categories/cmi5"
	CategoryMoveOn = "https://w3id.org/xapi/cmi5/context/categories/moveon"

	ExtSessionID    = "https://w3id.org/xapi/cmi5/context/extensions/sessionid"
	ExtMasteryScore = "https://w3id.org/xapi/cmi5/context/extensions/masteryscore"
	ExtLaunchMode   = "https://w3id.org/xapi/cmi5/context/extensions/launchmode"
	ExtLaunchURL    = "https://w3id.org/xapi/cmi5/context/extensions/launchurl"
	ExtMoveOn       = "https://w3id.org/xapi/cmi5/context/extensions/moveon"
	ExtLaunchParams = "https://w3id.org/xapi/cmi5/context/extensions/launchparameters"
	ExtPublisherID  = "https://w3id.org/xapi/cmi5/context/extensions/publisherid"
	ExtReason       = "https://w3id.org/xapi/cmi5/result/extensions/reason"

	// LaunchDataID and PreferencesID are the documents the LMS writes
	// before a launch.
	LaunchDataID  = "LMS.LaunchData"
	PreferencesID = "cmi5LearnerPreferences"
)

// The launch modes.
const (
	Normal = "Normal"
	Browse = "Browse"
	Review = "Review"
)

// TopicValue is what a cmi5 topic stores: the package and the AU it
// plays.
type TopicValue struct {
	PackageID    int64  `json:"package_id"`
	AUID         int64  `json:"au_id"`
	Title        string `json:"title"`
	LaunchMethod string `json:"launch_method"`
}

// ParseTopic reads a topic's value.
func ParseTopic(value json.RawMessage) (TopicValue, error) {
	var v TopicValue
	if err := json.Unmarshal(value, &v); err != nil || v.AUID == 0 {
		return v, fmt.Errorf("cmi5: parse topic value: %v", err)
	}
	return v, nil
}

// TopicClass is the topicable class of cmi5 topics.
const TopicClass = `Lms\TopicTypes\Models\TopicContent\Cmi5Au`

// LaunchInput is what a learner's launch asks for.
type LaunchInput struct {
	LaunchMode string `json:"launch_mode,omitempty" enum:"Normal,Browse,Review" doc:"Default Normal."`
	ReturnURL  string `json:"return_url,omitempty" maxLength:"2048" doc:"Where the AU sends the learner when it exits (LMS.LaunchData returnURL)."`
}

// AuLaunch is a started AU session.
type AuLaunch struct {
	URL          string `json:"url" doc:"The AU's launch URL with endpoint, fetch, actor, registration and activityId."`
	LaunchMethod string `json:"launch_method" doc:"AnyWindow (play in a frame) or OwnWindow (open a window)."`
	Registration string `json:"registration"`
	SessionID    string `json:"session_id"`
	LaunchMode   string `json:"launch_mode"`
	AUTitle      string `json:"au_title"`
}

// Actor is the xAPI agent of a learner in a tenant.
func Actor(t *platform.Tenant, userID int64) map[string]any {
	return map[string]any{"objectType": "Agent", "account": map[string]any{"homePage": "https://" + t.PrimaryHost(),
		"name": strconv.FormatInt(userID, 10)}}
}

func actorKey(t *platform.Tenant, userID int64) string {
	return "account:https://" + t.PrimaryHost() + "|" + strconv.FormatInt(userID, 10)
}

// launchLockTTL bounds how long one launch may hold its registration's
// lock.
const launchLockTTL = 30 * time.Second

// launchLock orders the launches of one registration, across replicas, so
// two at once do not both abandon and start.
func (s *Service) launchLock(ctx context.Context, t *platform.Tenant, reg string) (func(), error) {
	unlock, err := s.Locker.Acquire(ctx, "cmi5-launch:"+strconv.FormatInt(t.ID, 10)+":"+reg, launchLockTTL)
	if err != nil {
		return nil, err
	}
	return func() { unlock(context.WithoutCancel(ctx)) }, nil
}

// Launch starts a session of a topic's AU for p (cmi5 section 8): the
// registration of the learner in the course (made once, reused), open
// sessions of the registration abandoned, LMS.LaunchData and the learner
// preferences written, the launched statement stored, and the launch URL
// with its one-time fetch URL returned. origin is the public origin of
// the API, for the URLs the AU calls.
func (s *Service) Launch(ctx context.Context, t *platform.Tenant, p *access.Principal, topicID int64, in LaunchInput, origin string) (AuLaunch, error) {
	editor, au, pkg, err := topicAU(ctx, t, p, topicID)
	if err != nil {
		return AuLaunch{}, err
	}
	if !editor {
		if err := s.Gate.CanRecord(ctx, t, p, topicID); err != nil {
			return AuLaunch{}, err
		}
	}
	mode := in.LaunchMode
	if mode == "" {
		mode = Normal
	}
	now := s.now()
	reg, created, err := registration(ctx, t.DB, pkg.ID, p.UserID, uuid.NewString(), now)
	if err != nil {
		return AuLaunch{}, err
	}
	release, err := s.launchLock(ctx, t, reg)
	if err != nil {
		return AuLaunch{}, err
	}
	defer release()
	actor := Actor(t, p.UserID)
	if created {
		// moveOn is evaluated at registration: NotApplicable AUs are
		// satisfied at once (cmi5 section 9.6.1).
		if err := s.registered(ctx, t, pkg, reg, p.UserID, topicID); err != nil {
			return AuLaunch{}, err
		}
	}
	if au.MoveOn == NotApplicable {
		// The AU was satisfied at registration, maybe through another
		// topic's launch: its topic completes when the learner opens it.
		if err := s.completeTopic(ctx, t, p.UserID, topicID, nil); err != nil {
			return AuLaunch{}, err
		}
	}
	if err := s.abandonOpen(ctx, t, pkg, reg, now); err != nil {
		return AuLaunch{}, err
	}
	sess := session{ID: uuid.NewString(), Registration: reg, AUID: au.ID, TopicID: topicID, UserID: p.UserID, LaunchMode: mode, LaunchedAt: now}
	code := randomHex(24)
	if err := insertSession(ctx, t.DB, sess, hashOf(code)); err != nil {
		return AuLaunch{}, err
	}
	auURL := s.auURL(t, pkg, au, origin, now)
	activityID := launchActivityID(t, pkg.ID, au.IRI, reg)
	template := contextTemplate(au, sess.ID)
	launchData := map[string]any{"contextTemplate": template, "launchMode": mode, "moveOn": au.MoveOn}
	if au.LaunchParameters != "" {
		launchData["launchParameters"] = au.LaunchParameters
	}
	if au.MasteryScore != nil {
		launchData["masteryScore"] = *au.MasteryScore
	}
	if in.ReturnURL != "" {
		launchData["returnURL"] = in.ReturnURL
	}
	if au.EntitlementKey != "" {
		launchData["entitlementKey"] = map[string]any{"courseStructure": au.EntitlementKey}
	}
	body, _ := json.Marshal(launchData)
	if err := s.LRS.WriteState(ctx, t, lrs.DocKey{ActivityID: activityID, AgentKey: actorKey(t, p.UserID), Registration: reg, ID: LaunchDataID}, body); err != nil {
		return AuLaunch{}, err
	}
	prefs, _ := json.Marshal(map[string]any{"languagePreference": "en-US", "audioPreference": "on"})
	if err := s.LRS.WriteAgentProfile(ctx, t, actorKey(t, p.UserID), PreferencesID, prefs); err != nil {
		return AuLaunch{}, err
	}
	ext := map[string]any{ExtSessionID: sess.ID, ExtPublisherID: au.IRI, ExtLaunchMode: mode, ExtLaunchURL: auURL, ExtMoveOn: au.MoveOn}
	if au.LaunchParameters != "" {
		ext[ExtLaunchParams] = au.LaunchParameters
	}
	if au.MasteryScore != nil {
		ext[ExtMasteryScore] = *au.MasteryScore
	}
	launched := map[string]any{"actor": actor, "verb": verb(VerbLaunched, "launched"),
		"object": activity(activityID), "timestamp": now.Format(time.RFC3339Nano),
		"context": map[string]any{"registration": reg, "extensions": ext,
			"contextActivities": map[string]any{"category": []any{activity(CategoryCmi5)}, "grouping": []any{activity(au.IRI)}}}}
	if err := s.issue(ctx, t, launched); err != nil {
		return AuLaunch{}, err
	}
	actorJSON, _ := json.Marshal(actor)
	q := url.Values{
		"endpoint":     {origin + lrs.Base},
		"fetch":        {origin + "/api/cmi5/fetch?code=" + code},
		"actor":        {string(actorJSON)},
		"registration": {reg},
		"activityId":   {activityID},
	}
	sep := "?"
	if strings.Contains(auURL, "?") {
		sep = "&"
	}
	return AuLaunch{URL: auURL + sep + q.Encode(), LaunchMethod: au.LaunchMethod, Registration: reg, SessionID: sess.ID, LaunchMode: mode,
		AUTitle: au.Title}, nil
}

// topicAU loads a cmi5 topic's AU and package, and tells whether p may
// edit the topic's course.
func topicAU(ctx context.Context, t *platform.Tenant, p *access.Principal, topicID int64) (bool, AUInfo, Cmi5Package, error) {
	topic, err := topics.ByID(ctx, t.DB, topicID)
	if err != nil {
		return false, AUInfo{}, Cmi5Package{}, err
	}
	if topic.TopicableType != TopicClass {
		return false, AUInfo{}, Cmi5Package{}, apperr.Field("topic", "This topic is not a cmi5 topic.")
	}
	course, err := courses.ByID(ctx, t.DB, topic.CourseID)
	if err != nil {
		return false, AUInfo{}, Cmi5Package{}, err
	}
	v, err := ParseTopic(topic.Content)
	if err != nil {
		return false, AUInfo{}, Cmi5Package{}, err
	}
	au, err := auByID(ctx, t.DB, v.AUID)
	if err != nil {
		return false, AUInfo{}, Cmi5Package{}, err
	}
	pkg, err := packageByID(ctx, t.DB, au.packageID)
	return courses.CanEdit(p, course), au, pkg, err
}

func verb(id, display string) map[string]any {
	return map[string]any{"id": id, "display": map[string]any{"en-US": display}}
}

func activity(id string) map[string]any { return map[string]any{"objectType": "Activity", "id": id} }

// contextTemplate is the context every statement of the session carries:
// the session id, and the AU's publisher id in grouping (cmi5 section
// 9.6.2.3) and in the publisherid extension; with the AU's mastery score,
// the masteryscore extension passed and failed must carry (9.6.3.2).
func contextTemplate(au AUInfo, sessionID string) map[string]any {
	ext := map[string]any{ExtSessionID: sessionID, ExtPublisherID: au.IRI}
	if au.MasteryScore != nil {
		ext[ExtMasteryScore] = *au.MasteryScore
	}
	return map[string]any{
		"contextActivities": map[string]any{"grouping": []any{activity(au.IRI)}},
		"extensions":        ext,
	}
}

func hashOf(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(sum[:])
}

// issue stores a statement the LMS makes.
func (s *Service) issue(ctx context.Context, t *platform.Tenant, stmt map[string]any) error {
	raw, err := json.Marshal(stmt)
	if err != nil {
		return err
	}
	st, err := lrs.ParseStatement(raw)
	if err != nil {
		return fmt.Errorf("cmi5: LMS statement invalid: %w", err)
	}
	_, err = s.LRS.Store(ctx, t, lrs.Scope{Admin: true}, []*lrs.Statement{st}, nil)
	return err
}

// contentTTL is how long the signed link of a launch's package files
// stays valid.
const contentTTL = 12 * time.Hour

// auURL is where the AU is played: its absolute URL, or the package file
// through a signed link on the API's origin.
func (s *Service) auURL(t *platform.Tenant, pkg Cmi5Package, au AUInfo, origin string, now time.Time) string {
	if pkg.filePrefix == "" {
		return au.URL
	}
	expires := now.Add(contentTTL).Unix()
	return fmt.Sprintf("%s/api/cmi5/content/%d/%d.%s/%s", origin, pkg.ID, expires, contentSignature(t, pkg.ID, expires), au.URL)
}

func contentSignature(t *platform.Tenant, packageID, expires int64) string {
	mac := hmac.New(sha256.New, t.URLKey)
	fmt.Fprintf(mac, "cmi5-content\n%d\n%d", packageID, expires)
	return hex.EncodeToString(mac.Sum(nil))
}

// FetchAnswer is the fetch URL's answer: the auth token once, the spec's
// error after (cmi5 section 8.2).
type FetchAnswer struct {
	AuthToken string `json:"auth-token,omitempty"`
	ErrorCode string `json:"error-code,omitempty"`
	ErrorText string `json:"error-text,omitempty"`
}

// Fetch answers the auth token of the session whose fetch code this is,
// once; later calls, and unknown codes, answer the error object of cmi5
// section 8.2.3 (with the status 200 section 8.2.1 asks for). The token
// is Basic credentials (user cmi5) the LRS knows.
func (s *Service) Fetch(ctx context.Context, t *platform.Tenant, code string) FetchAnswer {
	if code == "" {
		return FetchAnswer{ErrorCode: "2", ErrorText: "The fetch URL is not valid."}
	}
	secret := randomHex(32)
	used, found, err := claimFetch(ctx, t.DB, hashOf(code), hashOf(secret))
	switch {
	case err != nil:
		return FetchAnswer{ErrorCode: "3", ErrorText: "The auth token cannot be issued now."}
	case !found:
		return FetchAnswer{ErrorCode: "2", ErrorText: "The fetch URL is not valid."}
	case used:
		return FetchAnswer{ErrorCode: "1", ErrorText: "The authorization token has already been returned."}
	}
	token := base64.StdEncoding.EncodeToString([]byte(lrs.LaunchUser + ":" + secret))
	return FetchAnswer{AuthToken: token}
}

// LaunchScope is the LRS scope of a launch's auth token: its session,
// registration and learner, while the session is not abandoned.
func (s *Service) LaunchScope(ctx context.Context, t *platform.Tenant, token string) (lrs.Scope, error) {
	sess, err := sessionBy(ctx, t.DB, "token_hash", hashOf(token))
	if err != nil {
		return lrs.Scope{}, apperr.New(apperr.Unauthorized, "The auth token is not valid.")
	}
	if sess.Abandoned == nil && s.idle(sess, s.now()) {
		abandoned, err := s.abandonIdle(ctx, t, sess, s.now())
		if err != nil {
			return lrs.Scope{}, err
		}
		if abandoned {
			sess.Abandoned = &sess.LaunchedAt
		}
	}
	if sess.Abandoned != nil {
		return lrs.Scope{}, apperr.New(apperr.Unauthorized, "The session of this auth token was abandoned.")
	}
	// The token lasts as long as its session (cmi5 section 8.2.1): the
	// LMS waits no time after terminated (section 9.3.8).
	if sess.Terminated != nil {
		return lrs.Scope{}, apperr.New(apperr.Unauthorized, "The session of this auth token has terminated.")
	}
	au, err := auByID(ctx, t.DB, sess.AUID)
	if err != nil {
		return lrs.Scope{}, err
	}
	// The AU reaches the state of its own activity (the launch's
	// activityId) and registration, and reads LMS.LaunchData without
	// changing it (cmi5 section 10.2.1).
	return lrs.Scope{UserID: sess.UserID, Session: sess.ID, Registration: sess.Registration, ActorKey: actorKey(t, sess.UserID),
		ActivityID: launchActivityID(t, au.packageID, au.IRI, sess.Registration), ReadOnlyStates: []string{LaunchDataID}}, nil
}

// launchActivityID is the activityId of an AU's launches in a
// registration (cmi5 section 8.1.5): the LMS's own, never the publisher's
// id, the same for every launch of the registration.
func launchActivityID(t *platform.Tenant, packageID int64, auIRI, reg string) string {
	return lmsActivityID(t, packageID, "au", auIRI) + "/" + reg
}

// lmsActivityID is the LMS's own id of an AU, block or course of a
// package, distinct from the publisher's id (cmi5 section 9.4).
func lmsActivityID(t *platform.Tenant, packageID int64, kind, iri string) string {
	sum := sha1.Sum([]byte(iri))
	return fmt.Sprintf("https://%s/cmi5/%d/%s/%s", t.PrimaryHost(), packageID, kind, hex.EncodeToString(sum[:8]))
}
