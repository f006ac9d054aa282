package lti

import (
	"context"
	"crypto/rsa"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/lms-platform/lms/internal/apperr"
	"github.com/lms-platform/lms/internal/courses"
	"github.com/lms-platform/lms/internal/platform"
	"github.com/lms-platform/lms/internal/sqldb"
	"github.com/lms-platform/lms/internal/topics"
)

// Assignment and Grade Services, platform role: tools get an access token
// with a client assertion (RFC 7523) signed by their own key, then read
// and create line items of their lti topics and post scores; a completed
// score completes the topic for the learner.

const (
	// TokenPath is our OAuth 2 token endpoint for tools.
	TokenPath          = "/api/lti/token"
	serviceTokenTTL    = time.Hour
	assertionType      = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
	maxAssertionLength = 5 * time.Minute
)

var grantableScopes = []string{ScopeLineItem, ScopeScore, ScopeResultRead}

// ServiceToken is the OAuth 2 token answer (not in the envelope).
type ServiceToken struct {
	AccessToken string `json:"access_token"`
	TokenType   string `json:"token_type"`
	ExpiresIn   int    `json:"expires_in"`
	Scope       string `json:"scope"`
}

// Token checks a tool's client assertion and grants the AGS scopes it
// asks for.
func (s *Platform) Token(ctx context.Context, t *platform.Tenant, origin string, form map[string]string) (ServiceToken, error) {
	if form["grant_type"] != "client_credentials" || form["client_assertion_type"] != assertionType || form["client_assertion"] == "" {
		return ServiceToken{}, launchError(apperr.BadRequest, "invalid_request",
			"grant_type client_credentials with a jwt-bearer client_assertion is required.")
	}
	invalid := launchError(apperr.Unauthorized, "invalid_client", "The client assertion is not valid.")
	raw := form["client_assertion"]
	unverified, _, err := jwt.NewParser().ParseUnverified(raw, &jwt.RegisteredClaims{})
	if err != nil || unverified.Method.Alg() != "RS256" {
		return ServiceToken{}, invalid
	}
	sub, _ := unverified.Claims.GetSubject()
	tool, err := toolByClientID(ctx, t.DB, sub)
	if err != nil {
		return ServiceToken{}, invalid
	}
	kid, _ := unverified.Header["kid"].(string)
	key, err := s.toolKey(ctx, t, tool, kid)
	if err != nil || key == nil {
		return ServiceToken{}, invalid
	}
	now := s.Clock.Now()
	claims := &jwt.RegisteredClaims{}
	_, err = jwt.ParseWithClaims(raw, claims, func(*jwt.Token) (any, error) { return key, nil },
		jwt.WithValidMethods([]string{"RS256"}), jwt.WithTimeFunc(func() time.Time { return now }), jwt.WithLeeway(clockLeeway),
		jwt.WithIssuer(tool.ClientID), jwt.WithSubject(tool.ClientID), jwt.WithExpirationRequired())
	if err != nil || !(slices.Contains(claims.Audience, origin+TokenPath) || slices.Contains(claims.Audience, origin)) ||
		claims.ExpiresAt.Sub(now) > maxAssertionLength+clockLeeway || claims.ID == "" || len(claims.ID) > 255 {
		return ServiceToken{}, invalid
	}
	var granted []string
	for _, sc := range strings.Fields(form["scope"]) {
		if slices.Contains(grantableScopes, sc) && !slices.Contains(granted, sc) {
			granted = append(granted, sc)
		}
	}
	if len(granted) == 0 {
		return ServiceToken{}, launchError(apperr.BadRequest, "invalid_scope", "None of the scopes asked for is offered.")
	}
	// The assertion's jti is kept until the assertion expires, and the
	// token recorded with it: a replay is refused, and a refusal leaves
	// nothing behind.
	token := secret()
	err = t.Tx(ctx, func(tx *sqldb.Tx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM lti_assertion_jtis WHERE expires_at < $1`, now); err != nil {
			return fmt.Errorf("lti: prune assertion ids: %w", err)
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO lti_assertion_jtis (tool_id, jti, expires_at) VALUES ($1, $2, $3)`,
			tool.ID, claims.ID, claims.ExpiresAt.Add(clockLeeway))
		if sqldb.IsUniqueViolation(err) {
			return launchError(apperr.Unauthorized, "invalid_client", "This client assertion was already used (jti).")
		}
		if err != nil {
			return fmt.Errorf("lti: record assertion id: %w", err)
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM lti_service_tokens WHERE expires_at < $1`, now); err != nil {
			return fmt.Errorf("lti: prune service tokens: %w", err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO lti_service_tokens (token_hash, tool_id, scopes, expires_at) VALUES ($1, $2, $3, $4)`,
			hash(token), tool.ID, strings.Join(granted, " "), now.Add(serviceTokenTTL)); err != nil {
			return fmt.Errorf("lti: record service token: %w", err)
		}
		return nil
	})
	if err != nil {
		return ServiceToken{}, err
	}
	return ServiceToken{AccessToken: token, TokenType: "Bearer", ExpiresIn: int(serviceTokenTTL / time.Second),
		Scope: strings.Join(granted, " ")}, nil
}

// toolKey is the tool's key: its PEM, or kid of its key set.
func (s *Platform) toolKey(ctx context.Context, t *platform.Tenant, tool ExternalTool, kid string) (*rsa.PublicKey, error) {
	if tool.PublicKey != "" {
		return platform.ParsePublicKey(tool.PublicKey)
	}
	return s.Keys.Key(ctx, t, tool.JWKSURL, kid)
}

// serviceCaller checks a service token for scope (any of them) and
// returns its tool.
func (s *Platform) serviceCaller(ctx context.Context, t *platform.Tenant, authorization string, scopes ...string) (int64, error) {
	token, ok := strings.CutPrefix(authorization, "Bearer ")
	var toolID int64
	var granted string
	err := t.DB.QueryRowContext(ctx, `SELECT tool_id, scopes FROM lti_service_tokens WHERE token_hash = $1 AND expires_at > $2`,
		hash(strings.TrimSpace(token)), s.Clock.Now()).Scan(&toolID, &granted)
	if !ok || sqldb.NotFound(err) {
		return 0, apperr.New(apperr.Unauthorized, "A valid service token is required.")
	}
	if err != nil {
		return 0, fmt.Errorf("lti: service token: %w", err)
	}
	for _, sc := range scopes {
		if slices.Contains(strings.Fields(granted), sc) {
			return toolID, nil
		}
	}
	return 0, apperr.New(apperr.Forbidden, "The service token lacks the scope.")
}

// LineItem is an AGS line item.
type LineItem struct {
	ID             string  `json:"id"`
	Label          string  `json:"label"`
	ScoreMaximum   float64 `json:"scoreMaximum"`
	ResourceID     string  `json:"resourceId,omitempty"`
	Tag            string  `json:"tag,omitempty"`
	ResourceLinkID string  `json:"resourceLinkId"`
}

func lineItemsURL(origin string, topicID int64) string {
	return origin + "/api/lti/ags/" + strconv.FormatInt(topicID, 10) + "/lineitems"
}

// toolTopic checks that the topic is an lti topic of the tool.
func toolTopic(ctx context.Context, q sqldb.Querier, toolID, topicID int64) (topics.Topic, error) {
	topic, link, err := ltiTopic(ctx, q, topicID)
	if err != nil {
		return topic, err
	}
	if link.ToolID != toolID {
		return topic, apperr.New(apperr.NotFound, "This topic launches another tool.")
	}
	return topic, nil
}

// LineItems lists the line items of the tool's topic.
func (s *Platform) LineItems(ctx context.Context, t *platform.Tenant, origin, authorization string, topicID int64) ([]LineItem, error) {
	toolID, err := s.serviceCaller(ctx, t, authorization, ScopeLineItem, ScopeLineItem+".readonly")
	if err != nil {
		return nil, err
	}
	if _, err := toolTopic(ctx, t.DB, toolID, topicID); err != nil {
		return nil, err
	}
	rows, err := t.DB.QueryContext(ctx, `SELECT id, label, score_maximum, resource_id, tag FROM lti_line_items
		WHERE tool_id = $1 AND topic_id = $2 ORDER BY id`, toolID, topicID)
	if err != nil {
		return nil, fmt.Errorf("lti: line items: %w", err)
	}
	defer rows.Close()
	out := []LineItem{}
	for rows.Next() {
		var li LineItem
		var id int64
		if err := rows.Scan(&id, &li.Label, &li.ScoreMaximum, &li.ResourceID, &li.Tag); err != nil {
			return nil, err
		}
		li.ID = lineItemsURL(origin, topicID) + "/" + strconv.FormatInt(id, 10)
		li.ResourceLinkID = strconv.FormatInt(topicID, 10)
		out = append(out, li)
	}
	return out, rows.Err()
}

// AddLineItem creates a line item of the tool's topic.
func (s *Platform) AddLineItem(ctx context.Context, t *platform.Tenant, origin, authorization string, topicID int64, body []byte) (LineItem, error) {
	toolID, err := s.serviceCaller(ctx, t, authorization, ScopeLineItem)
	if err != nil {
		return LineItem{}, err
	}
	if _, err := toolTopic(ctx, t.DB, toolID, topicID); err != nil {
		return LineItem{}, err
	}
	var li LineItem
	if err := json.Unmarshal(body, &li); err != nil || li.ScoreMaximum <= 0 || li.Label == "" || len(li.Label) > 255 ||
		len(li.ResourceID) > 255 || len(li.Tag) > 255 {
		return LineItem{}, apperr.New(apperr.Invalid, "A line item needs a label and a positive scoreMaximum.")
	}
	var id int64
	if err := t.DB.QueryRowContext(ctx, `INSERT INTO lti_line_items (tool_id, topic_id, label, score_maximum, resource_id, tag, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id`, toolID, topicID, li.Label, li.ScoreMaximum, li.ResourceID, li.Tag,
		s.Clock.Now()).Scan(&id); err != nil {
		return LineItem{}, fmt.Errorf("lti: add line item: %w", err)
	}
	li.ID = lineItemsURL(origin, topicID) + "/" + strconv.FormatInt(id, 10)
	li.ResourceLinkID = strconv.FormatInt(topicID, 10)
	return li, nil
}

// Score is an AGS score a tool posts.
type Score struct {
	UserID           string   `json:"userId"`
	ScoreGiven       *float64 `json:"scoreGiven"`
	ScoreMaximum     *float64 `json:"scoreMaximum"`
	ActivityProgress string   `json:"activityProgress"`
	GradingProgress  string   `json:"gradingProgress"`
	Timestamp        string   `json:"timestamp"`
}

// PostScore records a learner's score on a line item of the tool's topic;
// a completed activity, or a fully graded one, completes the topic.
func (s *Platform) PostScore(ctx context.Context, t *platform.Tenant, authorization string, topicID, lineItemID int64, body []byte) error {
	toolID, err := s.serviceCaller(ctx, t, authorization, ScopeScore)
	if err != nil {
		return err
	}
	topic, err := toolTopic(ctx, t.DB, toolID, topicID)
	if err != nil {
		return err
	}
	var exists bool
	if err := t.DB.QueryRowContext(ctx, `SELECT EXISTS(SELECT 1 FROM lti_line_items WHERE id = $1 AND topic_id = $2 AND tool_id = $3)`,
		lineItemID, topicID, toolID).Scan(&exists); err != nil {
		return fmt.Errorf("lti: line item: %w", err)
	}
	if !exists {
		return apperr.New(apperr.NotFound, "Line item not found.")
	}
	var sc Score
	if err := json.Unmarshal(body, &sc); err != nil || sc.ActivityProgress == "" || sc.GradingProgress == "" {
		return apperr.New(apperr.Invalid, "A score needs userId, activityProgress and gradingProgress.")
	}
	userID, err := strconv.ParseInt(sc.UserID, 10, 64)
	now := s.Clock.Now()
	if err == nil {
		var ok bool
		ok, err = courses.Assigned(ctx, t.DB, now, userID, topic.CourseID)
		if err == nil && !ok {
			err = apperr.New(apperr.NotFound, "")
		}
	}
	if err != nil {
		return apperr.New(apperr.Invalid, "The userId is not a learner of this topic.")
	}
	if _, err := t.DB.ExecContext(ctx, `INSERT INTO lti_scores (line_item_id, user_id, score_given, score_maximum, activity_progress,
		grading_progress, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (line_item_id, user_id) DO UPDATE SET
		score_given = excluded.score_given, score_maximum = excluded.score_maximum, activity_progress = excluded.activity_progress,
		grading_progress = excluded.grading_progress, updated_at = excluded.updated_at`,
		lineItemID, userID, sc.ScoreGiven, sc.ScoreMaximum, sc.ActivityProgress, sc.GradingProgress, now); err != nil {
		return fmt.Errorf("lti: record score: %w", err)
	}
	if sc.ActivityProgress == "Completed" || sc.GradingProgress == "FullyGraded" {
		var score *topics.TopicScore
		if sc.ScoreGiven != nil && sc.ScoreMaximum != nil {
			// A score outside 0..scoreMaximum (AGS allows extra credit)
			// is kept here, not by the topic.
			score = &topics.TopicScore{Raw: *sc.ScoreGiven, Max: *sc.ScoreMaximum}
		}
		return s.Progress.CompleteTopicScored(ctx, t, userID, topicID, score)
	}
	return nil
}
