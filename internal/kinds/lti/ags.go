package lti

import (
	"cmp"
	"context"
	"crypto/rsa"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
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

// grantableScopes are the AGS scopes a tool gets a token for: every one
// its launches carry.
var grantableScopes = launchScopes

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
	iat, _ := unverified.Claims.GetIssuedAt()
	key, err := s.toolKey(ctx, t, tool, kid, signedAt(iat))
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
func (s *Platform) toolKey(ctx context.Context, t *platform.Tenant, tool ExternalTool, kid string, signed time.Time) (*rsa.PublicKey, error) {
	if tool.PublicKey != "" {
		return platform.ParsePublicKey(tool.PublicKey)
	}
	return s.Keys.Key(ctx, t, tool.JWKSURL, kid, signed)
}

// signedAt is a JWT's iat as a time; zero without one.
func signedAt(iat *jwt.NumericDate) time.Time {
	if iat == nil {
		return time.Time{}
	}
	return iat.Time
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

// Media types of the AGS services, their page size, the default maximum of
// a resource link's line item and the lengths of their texts.
const (
	mediaLineItem       = "application/vnd.ims.lis.v2.lineitem+json"
	mediaLineItems      = "application/vnd.ims.lis.v2.lineitemcontainer+json"
	mediaResults        = "application/vnd.ims.lis.v2.resultcontainer+json"
	mediaScore          = "application/vnd.ims.lis.v1.score+json"
	defaultPage         = 100
	defaultScoreMaximum = 100
	maxLineItemText     = 255
	maxComment          = 4000
)

// LineItem is an AGS line item. resourceLinkId is the topic's id when the
// line item is bound to the topic's resource link.
type LineItem struct {
	ID             string  `json:"id"`
	Label          string  `json:"label"`
	ScoreMaximum   float64 `json:"scoreMaximum"`
	ResourceID     string  `json:"resourceId,omitempty"`
	Tag            string  `json:"tag,omitempty"`
	ResourceLinkID string  `json:"resourceLinkId,omitempty"`
	// The optional fields, as the tool sent them.
	StartDateTime  *time.Time `json:"startDateTime,omitempty"`
	EndDateTime    *time.Time `json:"endDateTime,omitempty"`
	GradesReleased *bool      `json:"gradesReleased,omitempty"`
}

func lineItemsURL(origin string, topicID int64) string {
	return origin + "/api/lti/ags/" + strconv.FormatInt(topicID, 10) + "/lineitems"
}

func lineItemURL(origin string, topicID, id int64) string {
	return lineItemsURL(origin, topicID) + "/" + strconv.FormatInt(id, 10)
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

// agsCaller is the tool of a service token with one of scopes, checked to
// be the tool of the topic.
func (s *Platform) agsCaller(ctx context.Context, t *platform.Tenant, authorization string, topicID int64, scopes ...string) (int64, topics.Topic, error) {
	toolID, err := s.serviceCaller(ctx, t, authorization, scopes...)
	if err != nil {
		return 0, topics.Topic{}, err
	}
	topic, err := toolTopic(ctx, t.DB, toolID, topicID)
	return toolID, topic, err
}

const lineItemColumns = `id, label, score_maximum, resource_id, tag, resource_link, start_date_time, end_date_time,
	grades_released`

func scanLineItem(row interface{ Scan(...any) error }, origin string, topicID int64) (LineItem, int64, error) {
	var li LineItem
	var id int64
	var bound bool
	var start, end sql.NullTime
	var released sql.NullBool
	if err := row.Scan(&id, &li.Label, &li.ScoreMaximum, &li.ResourceID, &li.Tag, &bound, &start, &end,
		&released); err != nil {
		return li, 0, err
	}
	li.ID = lineItemURL(origin, topicID, id)
	if start.Valid {
		li.StartDateTime = new(start.Time.UTC())
	}
	if end.Valid {
		li.EndDateTime = new(end.Time.UTC())
	}
	if released.Valid {
		li.GradesReleased = &released.Bool
	}
	if bound {
		li.ResourceLinkID = strconv.FormatInt(topicID, 10)
	}
	return li, id, nil
}

// LineItemFilter is the query of the line items container: the filters of
// AGS, a page size and the id the page starts after.
type LineItemFilter struct {
	ResourceLinkID, ResourceID, Tag string
	Limit                           int
	After                           int64
}

// Page is a page of a container and the query of the next, if any.
type Page[T any] struct {
	Items []T
	Next  url.Values
}

// LineItems lists a page of the line items of the tool's topic, filtered.
func (s *Platform) LineItems(ctx context.Context, t *platform.Tenant, origin, authorization string, topicID int64, f LineItemFilter) (Page[LineItem], error) {
	toolID, _, err := s.agsCaller(ctx, t, authorization, topicID, ScopeLineItem, ScopeLineItemRead)
	if err != nil {
		return Page[LineItem]{}, err
	}
	query := `SELECT ` + lineItemColumns + ` FROM lti_line_items WHERE tool_id = $1 AND topic_id = $2`
	args := []any{toolID, topicID}
	if f.ResourceLinkID != "" {
		if f.ResourceLinkID != strconv.FormatInt(topicID, 10) {
			return Page[LineItem]{Items: []LineItem{}}, nil
		}
		query += ` AND resource_link`
	}
	if f.ResourceID != "" {
		args = append(args, f.ResourceID)
		query += ` AND resource_id = $` + strconv.Itoa(len(args))
	}
	if f.Tag != "" {
		args = append(args, f.Tag)
		query += ` AND tag = $` + strconv.Itoa(len(args))
	}
	page, err := containerPage(ctx, t.DB, query, args, "id", f.Limit, f.After,
		url.Values{"resource_link_id": {f.ResourceLinkID}, "resource_id": {f.ResourceID}, "tag": {f.Tag}},
		func(rows *sql.Rows) (LineItem, int64, error) { return scanLineItem(rows, origin, topicID) })
	if err != nil {
		return page, fmt.Errorf("lti: line items: %w", err)
	}
	return page, nil
}

// containerPage reads a page of an AGS container: the rows of query (a
// SELECT with its WHERE, args its parameters) whose key comes after
// after, in the key's order, limit of them (default 100). One row more
// than the page tells whether a next page exists; its query is the
// filters that are set, limit and the last key of this page.
func containerPage[T any](ctx context.Context, q sqldb.Querier, query string, args []any, key string, limit int, after int64,
	filters url.Values, scan func(*sql.Rows) (T, int64, error)) (Page[T], error) {
	limit = cmp.Or(limit, defaultPage)
	args = append(args, after, limit+1)
	query += ` AND ` + key + ` > $` + strconv.Itoa(len(args)-1) + ` ORDER BY ` + key + ` LIMIT $` + strconv.Itoa(len(args))
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return Page[T]{}, err
	}
	defer rows.Close()
	out := Page[T]{Items: []T{}}
	var last int64
	for rows.Next() {
		item, k, err := scan(rows)
		if err != nil {
			return out, err
		}
		if len(out.Items) == limit {
			out.Next = url.Values{"limit": {strconv.Itoa(limit)}, "after": {strconv.FormatInt(last, 10)}}
			for name, v := range filters {
				if v[0] != "" {
					out.Next[name] = v
				}
			}
			break
		}
		out.Items, last = append(out.Items, item), k
	}
	return out, rows.Err()
}

// lineItemBody is a line item a tool sends; scoreMaximum is required.
type lineItemBody struct {
	Label          string   `json:"label"`
	ScoreMaximum   *float64 `json:"scoreMaximum"`
	ResourceID     string   `json:"resourceId"`
	Tag            string   `json:"tag"`
	ResourceLinkID string   `json:"resourceLinkId"`
	StartDateTime  *string  `json:"startDateTime"`
	EndDateTime    *string  `json:"endDateTime"`
	GradesReleased *bool    `json:"gradesReleased"`
	// start and end are the dates read.
	start, end *time.Time
}

// readLineItem checks a line item of the topic a tool sends.
func readLineItem(body []byte, topicID int64) (lineItemBody, error) {
	var li lineItemBody
	if err := json.Unmarshal(body, &li); err != nil {
		return li, apperr.New(apperr.BadRequest, "The line item is not a JSON object.")
	}
	var err error
	if li.start, err = lineItemDate("startDateTime", li.StartDateTime); err != nil {
		return li, err
	}
	if li.end, err = lineItemDate("endDateTime", li.EndDateTime); err != nil {
		return li, err
	}
	switch {
	case li.start != nil && li.end != nil && li.end.Before(*li.start):
		return li, apperr.New(apperr.BadRequest, "A line item's endDateTime may not come before its startDateTime.")
	case li.Label == "" || len(li.Label) > maxLineItemText:
		return li, apperr.New(apperr.BadRequest, "A line item needs a label of at most 255 bytes.")
	case li.ScoreMaximum == nil || *li.ScoreMaximum <= 0:
		return li, apperr.New(apperr.BadRequest, "A line item needs a scoreMaximum greater than 0.")
	case len(li.ResourceID) > maxLineItemText || len(li.Tag) > maxLineItemText:
		return li, apperr.New(apperr.BadRequest, "A line item's resourceId and tag are at most 255 bytes.")
	case li.ResourceLinkID != "" && li.ResourceLinkID != strconv.FormatInt(topicID, 10):
		return li, apperr.New(apperr.BadRequest, "The resourceLinkId is not the resource link of this topic.")
	}
	return li, nil
}

// lineItemDate reads an optional date of a line item: ISO 8601 with a
// time zone, as AGS asks.
func lineItemDate(field string, v *string) (*time.Time, error) {
	if v == nil {
		return nil, nil
	}
	at, err := time.Parse(time.RFC3339Nano, *v)
	if err != nil {
		return nil, apperr.New(apperr.BadRequest, "The line item's "+field+
			" is not an ISO 8601 date and time with a time zone (e.g. 2026-12-06T10:00:00Z).")
	}
	return new(at.UTC()), nil
}

// AddLineItem creates a line item of the tool's topic, bound to the
// topic's resource link when it names it.
func (s *Platform) AddLineItem(ctx context.Context, t *platform.Tenant, origin, authorization string, topicID int64, body []byte) (LineItem, error) {
	toolID, _, err := s.agsCaller(ctx, t, authorization, topicID, ScopeLineItem)
	if err != nil {
		return LineItem{}, err
	}
	in, err := readLineItem(body, topicID)
	if err != nil {
		return LineItem{}, err
	}
	var id int64
	if err := t.DB.QueryRowContext(ctx, `INSERT INTO lti_line_items (tool_id, topic_id, label, score_maximum, resource_id, tag,
		resource_link, start_date_time, end_date_time, grades_released, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) RETURNING id`, toolID, topicID, in.Label,
		*in.ScoreMaximum, in.ResourceID, in.Tag, in.ResourceLinkID != "", in.start, in.end, in.GradesReleased,
		s.Clock.Now()).Scan(&id); err != nil {
		return LineItem{}, fmt.Errorf("lti: add line item: %w", err)
	}
	return s.lineItem(ctx, t.DB, origin, toolID, topicID, id)
}

// lineItem loads a line item of the tool's topic; NotFound otherwise.
func (s *Platform) lineItem(ctx context.Context, q sqldb.Querier, origin string, toolID, topicID, id int64) (LineItem, error) {
	li, _, err := scanLineItem(q.QueryRowContext(ctx, `SELECT `+lineItemColumns+` FROM lti_line_items
		WHERE id = $1 AND tool_id = $2 AND topic_id = $3`, id, toolID, topicID), origin, topicID)
	if sqldb.NotFound(err) {
		return li, apperr.New(apperr.NotFound, "Line item not found.")
	}
	return li, err
}

// LineItem is one line item of the tool's topic.
func (s *Platform) LineItem(ctx context.Context, t *platform.Tenant, origin, authorization string, topicID, id int64) (LineItem, error) {
	toolID, _, err := s.agsCaller(ctx, t, authorization, topicID, ScopeLineItem, ScopeLineItemRead)
	if err != nil {
		return LineItem{}, err
	}
	return s.lineItem(ctx, t.DB, origin, toolID, topicID, id)
}

// UpdateLineItem replaces a line item's label, maximum, resource id, tag
// and optional fields (a field left out is cleared, as a PUT replaces the
// item); its binding to the resource link stays.
func (s *Platform) UpdateLineItem(ctx context.Context, t *platform.Tenant, origin, authorization string, topicID, id int64, body []byte) (LineItem, error) {
	toolID, _, err := s.agsCaller(ctx, t, authorization, topicID, ScopeLineItem)
	if err != nil {
		return LineItem{}, err
	}
	in, err := readLineItem(body, topicID)
	if err != nil {
		return LineItem{}, err
	}
	res, err := t.DB.ExecContext(ctx, `UPDATE lti_line_items SET label = $1, score_maximum = $2, resource_id = $3, tag = $4,
		start_date_time = $5, end_date_time = $6, grades_released = $7 WHERE id = $8 AND tool_id = $9 AND topic_id = $10`,
		in.Label, *in.ScoreMaximum, in.ResourceID, in.Tag, in.start, in.end, in.GradesReleased, id, toolID, topicID)
	if err != nil {
		return LineItem{}, fmt.Errorf("lti: update line item: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return LineItem{}, apperr.New(apperr.NotFound, "Line item not found.")
	}
	return s.lineItem(ctx, t.DB, origin, toolID, topicID, id)
}

// DeleteLineItem removes a line item the tool made, with its scores. The
// line item of the topic's resource link is the platform's: it stays.
func (s *Platform) DeleteLineItem(ctx context.Context, t *platform.Tenant, authorization string, topicID, id int64) error {
	toolID, _, err := s.agsCaller(ctx, t, authorization, topicID, ScopeLineItem)
	if err != nil {
		return err
	}
	var claimed bool
	err = t.DB.QueryRowContext(ctx, `SELECT claimed FROM lti_line_items WHERE id = $1 AND tool_id = $2 AND topic_id = $3`,
		id, toolID, topicID).Scan(&claimed)
	if sqldb.NotFound(err) {
		return apperr.New(apperr.NotFound, "Line item not found.")
	}
	if err != nil {
		return fmt.Errorf("lti: line item: %w", err)
	}
	if claimed {
		return apperr.New(apperr.Forbidden, "The line item of the topic's resource link belongs to the platform and cannot be deleted.")
	}
	if _, err := t.DB.ExecContext(ctx, `DELETE FROM lti_line_items WHERE id = $1`, id); err != nil {
		return fmt.Errorf("lti: delete line item: %w", err)
	}
	return nil
}

// claimedLineItem is the line item of an lti topic's resource link, made
// on first need with the topic's title and maximum (100 by default).
func claimedLineItem(ctx context.Context, q sqldb.Querier, now time.Time, toolID int64, topic topics.Topic, link Link) (int64, error) {
	var id int64
	err := q.QueryRowContext(ctx, `SELECT id FROM lti_line_items WHERE tool_id = $1 AND topic_id = $2 AND claimed`,
		toolID, topic.ID).Scan(&id)
	if !sqldb.NotFound(err) {
		return id, err
	}
	if err := claimLineItem(ctx, q, now, toolID, topic.ID, LineItem{Label: cmp.Or(clip(topic.Title, maxLineItemText), "Activity"),
		ScoreMaximum: cmp.Or(link.ScoreMaximum, defaultScoreMaximum)}); err != nil {
		return 0, err
	}
	err = q.QueryRowContext(ctx, `SELECT id FROM lti_line_items WHERE tool_id = $1 AND topic_id = $2 AND claimed`,
		toolID, topic.ID).Scan(&id)
	return id, err
}

// claimLineItem makes the line item of a topic's resource link unless it
// exists: of two first launches at once, the unique index keeps the first.
func claimLineItem(ctx context.Context, q sqldb.Querier, now time.Time, toolID, topicID int64, li LineItem) error {
	if _, err := q.ExecContext(ctx, `INSERT INTO lti_line_items (tool_id, topic_id, label, score_maximum, resource_id, tag,
		resource_link, claimed, created_at) VALUES ($1, $2, $3, $4, $5, $6, TRUE, TRUE, $7)
		ON CONFLICT (tool_id, topic_id) WHERE claimed DO NOTHING`,
		toolID, topicID, li.Label, li.ScoreMaximum, li.ResourceID, li.Tag, now); err != nil {
		return fmt.Errorf("lti: make the resource link's line item: %w", err)
	}
	return nil
}

// Score is an AGS score a tool posts.
type Score struct {
	UserID           string   `json:"userId"`
	ScoreGiven       *float64 `json:"scoreGiven"`
	ScoreMaximum     *float64 `json:"scoreMaximum"`
	Comment          string   `json:"comment"`
	ActivityProgress string   `json:"activityProgress"`
	GradingProgress  string   `json:"gradingProgress"`
	Timestamp        string   `json:"timestamp"`
}

// The values of a score's progress fields (AGS 2.0, Score service).
var (
	activityProgress = []string{"Initialized", "Started", "InProgress", "Submitted", "Completed"}
	gradingProgress  = []string{"FullyGraded", "Pending", "PendingManual", "Failed", "NotReady"}
	// isoTimestamp is ISO 8601 with a sub-second part and a zone, as the
	// Score service requires.
	isoTimestamp = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{1,9}(Z|[+-]\d{2}:\d{2})$`)
)

// readScore checks a score by the rules of the Score service and returns
// its timestamp; each refusal says which rule.
func readScore(body []byte) (Score, time.Time, error) {
	var sc Score
	bad := func(msg string) (Score, time.Time, error) { return sc, time.Time{}, apperr.New(apperr.BadRequest, msg) }
	if err := json.Unmarshal(body, &sc); err != nil {
		return bad("The score is not a JSON object of the Score service.")
	}
	if sc.UserID == "" {
		return bad("The score needs a userId.")
	}
	if sc.Timestamp == "" {
		return bad("The score needs a timestamp.")
	}
	at, err := time.Parse(time.RFC3339Nano, sc.Timestamp)
	if err != nil || !isoTimestamp.MatchString(sc.Timestamp) {
		return bad("The timestamp must be ISO 8601 with sub-second precision and a zone, e.g. 2026-01-02T10:00:00.000Z.")
	}
	if !slices.Contains(activityProgress, sc.ActivityProgress) {
		return bad("The activityProgress must be one of " + strings.Join(activityProgress, ", ") + ".")
	}
	if !slices.Contains(gradingProgress, sc.GradingProgress) {
		return bad("The gradingProgress must be one of " + strings.Join(gradingProgress, ", ") + ".")
	}
	if sc.ScoreGiven != nil && sc.ScoreMaximum == nil {
		return bad("A scoreGiven needs a scoreMaximum.")
	}
	if sc.ScoreGiven != nil && *sc.ScoreGiven < 0 {
		return bad("The scoreGiven must be 0 or more.")
	}
	if sc.ScoreMaximum != nil && *sc.ScoreMaximum <= 0 {
		return bad("The scoreMaximum must be greater than 0.")
	}
	if len(sc.Comment) > maxComment {
		return bad("The comment is at most 4000 bytes.")
	}
	return sc, at, nil
}

// PostScore records a learner's score on a line item of the tool's topic;
// a completed activity, or a fully graded one, completes the topic. A
// score whose timestamp is not after the one kept for the learner and the
// line item is ignored.
func (s *Platform) PostScore(ctx context.Context, t *platform.Tenant, authorization string, topicID, lineItemID int64, body []byte) error {
	toolID, topic, err := s.agsCaller(ctx, t, authorization, topicID, ScopeScore)
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
	sc, at, err := readScore(body)
	if err != nil {
		return err
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
	res, err := t.DB.ExecContext(ctx, `INSERT INTO lti_scores (line_item_id, user_id, score_given, score_maximum, activity_progress,
		grading_progress, comment, timestamp_ns, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
		ON CONFLICT (line_item_id, user_id) DO UPDATE SET score_given = excluded.score_given, score_maximum = excluded.score_maximum,
		activity_progress = excluded.activity_progress, grading_progress = excluded.grading_progress, comment = excluded.comment,
		timestamp_ns = excluded.timestamp_ns, updated_at = excluded.updated_at WHERE lti_scores.timestamp_ns < excluded.timestamp_ns`,
		lineItemID, userID, sc.ScoreGiven, sc.ScoreMaximum, sc.ActivityProgress, sc.GradingProgress, sc.Comment, at.UnixNano(), now)
	if err != nil {
		return fmt.Errorf("lti: record score: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return err
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

// Result is an AGS result: a learner's kept score on a line item.
type Result struct {
	ID            string   `json:"id"`
	ScoreOf       string   `json:"scoreOf"`
	UserID        string   `json:"userId"`
	ResultScore   *float64 `json:"resultScore,omitempty"`
	ResultMaximum *float64 `json:"resultMaximum,omitempty"`
	Comment       string   `json:"comment,omitempty"`
}

// Results lists a page of the results of a line item of the tool's
// topic, by learner id; userID ("" for all) keeps one learner's.
func (s *Platform) Results(ctx context.Context, t *platform.Tenant, origin, authorization string, topicID, lineItemID int64,
	userID string, limit int, after int64) (Page[Result], error) {
	toolID, _, err := s.agsCaller(ctx, t, authorization, topicID, ScopeResultRead)
	if err != nil {
		return Page[Result]{}, err
	}
	item, err := s.lineItem(ctx, t.DB, origin, toolID, topicID, lineItemID)
	if err != nil {
		return Page[Result]{}, err
	}
	query := `SELECT user_id, score_given, score_maximum, comment FROM lti_scores WHERE line_item_id = $1`
	args := []any{lineItemID}
	if userID != "" {
		uid, err := strconv.ParseInt(userID, 10, 64)
		if err != nil {
			return Page[Result]{Items: []Result{}}, nil
		}
		args = append(args, uid)
		query += ` AND user_id = $2`
	}
	page, err := containerPage(ctx, t.DB, query, args, "user_id", limit, after, url.Values{"user_id": {userID}},
		func(rows *sql.Rows) (Result, int64, error) {
			var r Result
			var uid int64
			err := rows.Scan(&uid, &r.ResultScore, &r.ResultMaximum, &r.Comment)
			r.UserID = strconv.FormatInt(uid, 10)
			r.ScoreOf = item.ID
			r.ID = item.ID + "/results/" + r.UserID
			return r, uid, err
		})
	if err != nil {
		return page, fmt.Errorf("lti: results: %w", err)
	}
	return page, nil
}
