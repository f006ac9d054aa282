package learning

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/lms-platform/lms/internal/access"
	"github.com/lms-platform/lms/internal/apperr"
	"github.com/lms-platform/lms/internal/content"
	"github.com/lms-platform/lms/internal/platform"
	"github.com/lms-platform/lms/internal/topics"
)

// H5PStatement is a stored xAPI statement of an H5P topic.
type H5PStatement struct {
	ID       int64    `json:"id"`
	TopicID  int64    `json:"topic_id"`
	Verb     string   `json:"verb" doc:"The statement's verb id."`
	Score    *float64 `json:"score" doc:"result.score.raw, when given."`
	MaxScore *float64 `json:"max_score" doc:"result.score.max, when given."`
	// Completed says the statement completed the topic.
	Completed bool `json:"completed" doc:"Whether the statement completed the topic."`
}

// Extensions H5P puts in xAPI statements.
const (
	h5pSubContentID   = "http://h5p.org/x-api/h5p-subContentId"
	h5pLocalContentID = "http://h5p.org/x-api/h5p-local-content-id"
)

// StatementOf returns the statement of a request body, which is either
// {"statement": {...}} or the statement itself.
func StatementOf(body map[string]any) map[string]any {
	if inner, ok := body["statement"].(map[string]any); ok {
		return inner
	}
	return body
}

// CompletesTopic reports whether an xAPI statement says its learner
// completed or passed the whole H5P content of a topic: the verb is
// "completed" or "passed" and the statement is about the top-level
// content, not one of its parts (parts carry a sub-content id and a parent
// activity). StoreStatement completes the topic when it says so and the
// statement names the topic's own content (see statementContentIDs).
func CompletesTopic(statement map[string]any) bool {
	verb := verbOf(statement)
	if !strings.HasSuffix(verb, "/completed") && !strings.HasSuffix(verb, "/passed") {
		return false
	}
	object, _ := statement["object"].(map[string]any)
	definition, _ := object["definition"].(map[string]any)
	extensions, _ := definition["extensions"].(map[string]any)
	if _, ok := extensions[h5pSubContentID]; ok {
		return false
	}
	ctx, _ := statement["context"].(map[string]any)
	activities, _ := ctx["contextActivities"].(map[string]any)
	if parents, _ := activities["parent"].([]any); len(parents) > 0 {
		return false
	}
	return true
}

func verbOf(statement map[string]any) string {
	verb, _ := statement["verb"].(map[string]any)
	id, _ := verb["id"].(string)
	return strings.TrimSpace(id)
}

// scoreOf returns result.score.raw and result.score.max when they are
// numbers.
func scoreOf(statement map[string]any) (raw, max *float64) {
	result, _ := statement["result"].(map[string]any)
	score, _ := result["score"].(map[string]any)
	if v, ok := score["raw"].(float64); ok {
		raw = &v
	}
	if v, ok := score["max"].(float64); ok {
		max = &v
	}
	return raw, max
}

// topicScore is the score a completing statement gives its topic:
// result.score's raw of max, else its scaled score; nil when it has
// neither.
func topicScore(statement map[string]any) *topics.TopicScore {
	if raw, outOf := scoreOf(statement); raw != nil && outOf != nil {
		return &topics.TopicScore{Raw: *raw, Max: *outOf}
	}
	result, _ := statement["result"].(map[string]any)
	score, _ := result["score"].(map[string]any)
	if scaled, ok := score["scaled"].(float64); ok {
		return topics.Scaled(scaled)
	}
	return nil
}

// checkScore refuses a result.score outside its bounds (xAPI's, with the
// non-negative scores H5P reports): every part a number, 0 ≤ min ≤ raw ≤
// max, max above 0 and scaled in [0, 1]. A learner's browser sends the
// statement, so a score of 1000 out of 1 is a forgery, not a result.
func checkScore(statement map[string]any) error {
	result, _ := statement["result"].(map[string]any)
	score, ok := result["score"].(map[string]any)
	if result["score"] == nil {
		return nil
	}
	if !ok {
		return scoreError("score", "The score must be an object.")
	}
	nums := map[string]float64{}
	for _, k := range []string{"raw", "min", "max", "scaled"} {
		switch v := score[k].(type) {
		case nil:
		case float64:
			nums[k] = v
		default:
			return scoreError(k, "The "+k+" score must be a number.")
		}
	}
	raw, hasRaw := nums["raw"]
	min, hasMin := nums["min"]
	max, hasMax := nums["max"]
	switch {
	case hasMax && max <= 0:
		return scoreError("max", "The maximum score must be above 0.")
	case hasMin && (min < 0 || hasMax && min > max):
		return scoreError("min", "The minimum score must be between 0 and the maximum score.")
	case hasRaw && (raw < 0 || hasMax && raw > max || hasMin && raw < min):
		return scoreError("raw", "The raw score must be between the minimum (at least 0) and the maximum score.")
	}
	if scaled, ok := nums["scaled"]; ok && (scaled < 0 || scaled > 1) {
		return scoreError("scaled", "The scaled score must be between 0 and 1.")
	}
	return nil
}

func scoreError(part, message string) error {
	return apperr.Field("statement.result.score."+part, message)
}

// StoreStatement keeps an xAPI statement the caller's H5P topic reported.
func (s *Service) StoreStatement(ctx context.Context, t *platform.Tenant, p *access.Principal, topicID int64,
	body map[string]any) (H5PStatement, error) {
	now := s.now()
	statement := StatementOf(body)
	verb := verbOf(statement)
	if verb == "" || len(verb) > 255 {
		return H5PStatement{}, &apperr.Error{Kind: apperr.Invalid, Message: "The given data was invalid.",
			Fields: map[string][]string{"statement.verb.id": {"The statement needs a verb id of at most 255 characters."}}}
	}
	c, _, err := s.learnerTopic(ctx, t, t.DB, now, p, topicID)
	if err != nil {
		return H5PStatement{}, err
	}
	if err := checkScore(statement); err != nil {
		return H5PStatement{}, err
	}
	contentID, err := s.h5pContent(ctx, t, topicID)
	if err != nil {
		return H5PStatement{}, err
	}
	cp, err := courseRow(ctx, t.DB, p.UserID, c.ID)
	if err != nil {
		return H5PStatement{}, err
	}
	if cp.missed(now) {
		return H5PStatement{}, errDeadline
	}
	raw, err := json.Marshal(statement)
	if err != nil {
		return H5PStatement{}, apperr.Wrap(apperr.Invalid, err, "The statement is not valid JSON.")
	}
	out := H5PStatement{TopicID: topicID, Verb: verb}
	out.Score, out.MaxScore = scoreOf(statement)
	if err := t.DB.QueryRowContext(ctx, `INSERT INTO topic_h5p_statements (user_id, topic_id, verb, score, max_score,
		statement, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id`,
		p.UserID, topicID, verb, out.Score, out.MaxScore, string(raw), now).Scan(&out.ID); err != nil {
		return H5PStatement{}, fmt.Errorf("learning: store statement: %w", err)
	}
	// A completing statement completes the topic when it is about the
	// topic's own content.
	if CompletesTopic(statement) && slices.Contains(statementContentIDs(statement), contentID) {
		if err := s.CompleteTopicScored(ctx, t, p.UserID, topicID, topicScore(statement)); err != nil {
			return H5PStatement{}, err
		}
		out.Completed = true
	}
	return out, nil
}

// h5pContent returns the H5P content id of an H5P topic, and refuses
// other topics: only H5P content reports statements.
func (s *Service) h5pContent(ctx context.Context, t *platform.Tenant, topicID int64) (string, error) {
	topic, err := topics.ByID(ctx, t.DB, topicID)
	if err != nil {
		return "", err
	}
	if s.H5PContentID != nil {
		if id, ok := s.H5PContentID(topic.TopicableType, topic.Content); ok {
			return id, nil
		}
	}
	return "", apperr.Field("topic_id", "Only H5P topics take xAPI statements.")
}

// statementContentIDs are the H5P content ids a statement's object names:
// the local content id extension and the last numeric segment of the
// object id (".../h5p/embed/play/7", ".../h5p/contents/7/play"), or its
// contentId query parameter.
func statementContentIDs(statement map[string]any) []string {
	var out []string
	object, _ := statement["object"].(map[string]any)
	definition, _ := object["definition"].(map[string]any)
	extensions, _ := definition["extensions"].(map[string]any)
	switch v := extensions[h5pLocalContentID].(type) {
	case float64:
		out = append(out, strconv.FormatInt(int64(v), 10))
	case string:
		out = append(out, strings.TrimSpace(v))
	}
	id, _ := object["id"].(string)
	if u, err := url.Parse(strings.TrimSpace(id)); err == nil && id != "" {
		if c := u.Query().Get("contentId"); c != "" {
			out = append(out, c)
		}
		segments := strings.Split(strings.Trim(u.Path, "/"), "/")
		for i := len(segments) - 1; i >= 0; i-- {
			if n, err := strconv.ParseInt(segments[i], 10, 64); err == nil && n > 0 {
				out = append(out, segments[i])
				break
			}
		}
	}
	return out
}

// H5PPlayGrant is the play grant of an H5P topic's content for the
// caller (content.H5PGrant): the embed page on the content origin calls
// the H5P service with it instead of the learner's session.
type H5PPlayGrant struct {
	Grant     string    `json:"grant" doc:"The grant: send it as 'Authorization: Bearer <grant>' to the H5P play routes of the content."`
	ContentID string    `json:"content_id" doc:"The H5P content the grant plays."`
	TopicID   int64     `json:"topic_id"`
	ExpiresAt time.Time `json:"expires_at"`
}

// h5pGrantTTL is how long a play grant lasts: a sitting, not a session.
const h5pGrantTTL = 2 * time.Hour

// H5PGrant issues the caller's play grant of H5P content in a topic they
// may record progress in: the H5P topic's content when contentID is
// empty, else content the topic plays (an H5PFrame of a layout).
func (s *Service) H5PGrant(ctx context.Context, t *platform.Tenant, p *access.Principal, topicID int64, contentID string) (H5PPlayGrant, error) {
	now := s.now()
	if _, _, err := s.learnerTopic(ctx, t, t.DB, now, p, topicID); err != nil {
		return H5PPlayGrant{}, err
	}
	if contentID == "" {
		var err error
		if contentID, err = s.h5pContent(ctx, t, topicID); err != nil {
			return H5PPlayGrant{}, err
		}
	} else if err := s.playsH5P(ctx, t, topicID, contentID); err != nil {
		return H5PPlayGrant{}, err
	}
	g := content.H5PGrant{UserID: p.UserID, ContentID: contentID, TopicID: topicID, Expires: now.Add(h5pGrantTTL).Unix()}
	return H5PPlayGrant{Grant: content.SignH5PGrant(t.URLKey, g), ContentID: contentID, TopicID: topicID,
		ExpiresAt: time.Unix(g.Expires, 0).UTC()}, nil
}

// playsH5P checks that the topic plays H5P content contentID.
func (s *Service) playsH5P(ctx context.Context, t *platform.Tenant, topicID int64, contentID string) error {
	topic, err := topics.ByID(ctx, t.DB, topicID)
	if err != nil {
		return err
	}
	if s.H5PPlayed != nil && slices.Contains(s.H5PPlayed(topic.TopicableType, topic.Content), contentID) {
		return nil
	}
	return apperr.Field("content_id", "The topic does not play this H5P content.")
}
