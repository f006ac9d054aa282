package lti

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/lms-platform/lms/internal/clock"
	"github.com/lms-platform/lms/internal/events"
	"github.com/lms-platform/lms/internal/fetch"
	"github.com/lms-platform/lms/internal/platform"
	"github.com/lms-platform/lms/internal/sqldb"
)

// Grades is the tool role's side of the Assignment and Grade Services: a
// learner who finishes what a platform launched (the topic of a launch
// that named one, else the course) gets a completed, fully graded score
// on the line item of the launch, posted to the platform with a service
// token got by a client assertion signed with the tenant's key. The score
// is the topic's own (quiz points, a SCORM or cmi5 score...) when its
// kind measured one, else 1 of 1, the completion; a course's is 1 of 1.
type Grades struct {
	Clock clock.Clock
	// Fetch reaches the platforms' token and score URLs through the
	// outbound-fetch guard.
	Fetch *fetch.Client
	// Kept, when set, reads the learner's kept (best) score of a topic
	// (ok false when it has none): a delivery replayed after a better
	// score sends that one, never the older lower one.
	Kept func(ctx context.Context, t *platform.Tenant, userID, topicID int64) (raw, max float64, ok bool, err error)
}

// gradeTarget is where one score goes: the line item of a launch at its
// platform, or, when the launch named none, the platform's line items
// container, where the line item of the launch's resource link is found
// or made.
type gradeTarget struct {
	clientID, tokenURL, sub  string
	lineItem, lineItems      string
	resourceLink, scopeAsked string
}

// GradeEvents are the events Grades.Listener posts a score on.
var GradeEvents = []string{events.TopicFinished, events.TopicScored, events.CourseFinished}

// Listener posts the scores of a TopicFinished, TopicScored (a better
// score in a finished topic) or CourseFinished event. Posting a score
// again is harmless (a platform keeps the latest), and a line item is
// looked for before one is made, so a redelivered event needs no record.
// The score sent is the topic's kept best one, stamped with the event's
// time: a replay of an older event sends nothing lower than what was
// sent, and platforms that keep the newest score by timestamp keep the
// later one. A platform that fails for now fails the delivery, retried
// later; one whose answer means never (a refused scope, an unknown user)
// fails it for good (events.Permanent) once every target was tried.
func (g *Grades) Listener(ctx context.Context, t *platform.Tenant, ev events.Stored) error {
	if (ev.Name != events.TopicFinished && ev.Name != events.TopicScored && ev.Name != events.CourseFinished) || ev.UserID == 0 {
		return nil
	}
	targets, err := gradeTargets(ctx, t.DB, ev)
	if err != nil {
		return err
	}
	given, maximum, err := g.scoreOf(ctx, t, ev)
	if err != nil {
		return err
	}
	var failed []error
	permanent := true
	for _, to := range targets {
		if err := g.post(ctx, t, to, given, maximum, ev.CreatedAt); err != nil {
			failed = append(failed, fmt.Errorf("lti: score to %s: %w", to.tokenURL, err))
			permanent = permanent && events.IsPermanent(err)
		}
	}
	if len(failed) == 0 {
		return nil
	}
	if permanent {
		return events.Permanent(errors.Join(failed...))
	}
	// A retry posts to every target again, which is harmless.
	return errors.Join(failed...)
}

// scoreOf is the score to send for ev: the event's own (scoreOf), or the
// topic's kept score when it is better.
func (g *Grades) scoreOf(ctx context.Context, t *platform.Tenant, ev events.Stored) (float64, float64, error) {
	given, maximum := scoreOf(ev)
	topic, ok := ev.Payload["topic_id"].(float64)
	if g.Kept == nil || ev.Name == events.CourseFinished || !ok {
		return given, maximum, nil
	}
	raw, max, ok, err := g.Kept(ctx, t, ev.UserID, int64(topic))
	if err != nil {
		return 0, 0, err
	}
	if ok && max > 0 && raw/max > given/maximum {
		return raw, max, nil
	}
	return given, maximum, nil
}

// scoreOf is the score an event's payload carries (learning's
// topics.TopicScore: raw points of max), or 1 of 1 when it carries none: the
// completion of a topic whose kind measures no score, or of a course.
func scoreOf(ev events.Stored) (given, maximum float64) {
	score, _ := ev.Payload["score"].(map[string]any)
	raw, okRaw := score["raw"].(float64)
	max, okMax := score["max"].(float64)
	if !okRaw || !okMax || max <= 0 {
		return 1, 1
	}
	return raw, max
}

// gradeTargets are the line items of the user's launches that the event
// finishes: launches of the finished topic, or launches of the finished
// course that named no topic; the latest launch per line item (or per
// resource link, where the line item is to be found), and only where the
// platform granted the scopes the post needs and has a token URL.
func gradeTargets(ctx context.Context, q sqldb.Querier, ev events.Stored) ([]gradeTarget, error) {
	key, query := "course_id", `l.topic_id IS NULL AND l.course_id = $2`
	if ev.Name != events.CourseFinished {
		key, query = "topic_id", `l.topic_id = $2`
	}
	id, ok := ev.Payload[key].(float64)
	if !ok {
		return nil, nil
	}
	rows, err := q.QueryContext(ctx, `SELECT r.client_id, r.token_url, u.sub, l.ags_lineitem, l.ags_lineitems, l.resource_link_id,
		l.ags_scopes FROM lti_launches l JOIN lti_registrations r ON r.id = l.registration_id
		JOIN lti_users u ON u.user_id = l.user_id AND u.issuer = r.issuer
		WHERE l.user_id = $1 AND `+query+` AND (l.ags_lineitem <> '' OR l.ags_lineitems <> '') AND r.token_url <> ''
		ORDER BY l.id DESC`, ev.UserID, int64(id))
	if err != nil {
		return nil, fmt.Errorf("lti: launches to grade: %w", err)
	}
	defer rows.Close()
	var out []gradeTarget
	for rows.Next() {
		var to gradeTarget
		var scopes string
		if err := rows.Scan(&to.clientID, &to.tokenURL, &to.sub, &to.lineItem, &to.lineItems, &to.resourceLink, &scopes); err != nil {
			return nil, err
		}
		granted := strings.Fields(scopes)
		to.scopeAsked = ScopeScore
		if to.lineItem == "" {
			to.scopeAsked = ScopeLineItem + " " + ScopeScore
			if !slices.Contains(granted, ScopeLineItem) {
				continue
			}
		}
		if !slices.Contains(granted, ScopeScore) || slices.ContainsFunc(out, to.same) {
			continue
		}
		out = append(out, to)
	}
	return out, rows.Err()
}

// same reports whether two targets end on the same line item.
func (to gradeTarget) same(o gradeTarget) bool {
	if to.lineItem != "" || o.lineItem != "" {
		return to.lineItem == o.lineItem
	}
	return to.lineItems == o.lineItems && to.resourceLink == o.resourceLink
}

// post gets a service token and posts the score, to the launch's line
// item or to the one found or made in the container.
func (g *Grades) post(ctx context.Context, t *platform.Tenant, to gradeTarget, given, maximum float64, at time.Time) error {
	token, err := g.token(ctx, t, to)
	if err != nil {
		return err
	}
	bearer := "Bearer " + token
	lineItem := to.lineItem
	if lineItem == "" {
		if lineItem, err = g.lineItem(ctx, to, bearer); err != nil {
			return err
		}
	}
	body, _ := json.Marshal(map[string]any{
		"userId": to.sub, "scoreGiven": given, "scoreMaximum": maximum,
		"activityProgress": "Completed", "gradingProgress": "FullyGraded",
		"timestamp": at.UTC().Format("2006-01-02T15:04:05.000Z07:00"),
	})
	res, err := g.Fetch.Send(ctx, http.MethodPost, serviceURL(lineItem, "/scores"), http.Header{
		"Content-Type":  {"application/vnd.ims.lis.v1.score+json"},
		"Authorization": {bearer},
	}, body)
	if err != nil {
		return err
	}
	if res.Status/100 != 2 {
		return answered("the score service", res.Status)
	}
	return nil
}

// answered is the error of a platform's service answering status: for
// good when the answer means the request can never succeed (400, 404,
// 422: an unknown user or line item, a refused scope), else for now.
func answered(service string, status int) error {
	err := fmt.Errorf("%s answered %d", service, status)
	switch status {
	case http.StatusBadRequest, http.StatusNotFound, http.StatusUnprocessableEntity:
		return events.Permanent(err)
	}
	return err
}

// lineItem finds the line item of the launch's resource link in the
// platform's container, or makes it (maximum 1, the completion).
func (g *Grades) lineItem(ctx context.Context, to gradeTarget, bearer string) (string, error) {
	res, err := g.Fetch.Send(ctx, http.MethodGet, withQuery(to.lineItems, url.Values{"resource_link_id": {to.resourceLink}}),
		http.Header{"Accept": {"application/vnd.ims.lis.v2.lineitemcontainer+json"}, "Authorization": {bearer}}, nil)
	if err != nil {
		return "", err
	}
	var items []struct {
		ID             string `json:"id"`
		ResourceLinkID string `json:"resourceLinkId"`
	}
	if res.Status != http.StatusOK || json.Unmarshal(res.Body, &items) != nil {
		return "", fmt.Errorf("the line items service answered %d", res.Status)
	}
	for _, li := range items {
		if li.ResourceLinkID == to.resourceLink && li.ID != "" {
			return li.ID, nil
		}
	}
	body, _ := json.Marshal(map[string]any{"label": "Completion", "scoreMaximum": 1, "resourceLinkId": to.resourceLink})
	res, err = g.Fetch.Send(ctx, http.MethodPost, to.lineItems, http.Header{
		"Content-Type": {"application/vnd.ims.lis.v2.lineitem+json"}, "Authorization": {bearer}}, body)
	if err != nil {
		return "", err
	}
	var made struct {
		ID string `json:"id"`
	}
	if res.Status/100 != 2 || json.Unmarshal(res.Body, &made) != nil || made.ID == "" {
		return "", fmt.Errorf("the line items service answered %d to a new line item", res.Status)
	}
	return made.ID, nil
}

// serviceURL is an AGS URL below another (a line item's scores): the
// path extended, the query kept.
func serviceURL(base, sub string) string {
	u, err := url.Parse(base)
	if err != nil {
		return base + sub
	}
	u.Path = strings.TrimSuffix(u.Path, "/") + sub
	u.RawPath = ""
	return u.String()
}

// token asks the platform's token URL for a service token with a client
// assertion (RFC 7523) signed with the tenant's key, which the platform
// reads from our key set.
func (g *Grades) token(ctx context.Context, t *platform.Tenant, to gradeTarget) (string, error) {
	now := g.Clock.Now()
	assertion := jwt.NewWithClaims(jwt.SigningMethodRS256, jwt.MapClaims{
		"iss": to.clientID, "sub": to.clientID, "aud": to.tokenURL,
		"iat": now.Unix(), "exp": now.Add(5 * time.Minute).Unix(), "jti": secret(),
	})
	assertion.Header["kid"] = t.Keys.ID
	signed, err := assertion.SignedString(t.Keys.Private)
	if err != nil {
		return "", err
	}
	form := url.Values{"grant_type": {"client_credentials"}, "client_assertion_type": {assertionType},
		"client_assertion": {signed}, "scope": {to.scopeAsked}}
	res, err := g.Fetch.Send(ctx, http.MethodPost, to.tokenURL,
		http.Header{"Content-Type": {"application/x-www-form-urlencoded"}}, []byte(form.Encode()))
	if err != nil {
		return "", err
	}
	var tok ServiceToken
	if res.Status != http.StatusOK {
		return "", answered("the token service", res.Status)
	}
	if json.Unmarshal(res.Body, &tok) != nil || tok.AccessToken == "" {
		return "", fmt.Errorf("the token service answered %d without a token", res.Status)
	}
	return tok.AccessToken, nil
}
