package lti

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/lms-platform/lms/internal/access"
	"github.com/lms-platform/lms/internal/accounts"
	"github.com/lms-platform/lms/internal/apperr"
	"github.com/lms-platform/lms/internal/auth"
	"github.com/lms-platform/lms/internal/courses"
	"github.com/lms-platform/lms/internal/fetch"
	"github.com/lms-platform/lms/internal/platform"
	"github.com/lms-platform/lms/internal/sqldb"
	"github.com/lms-platform/lms/internal/topics"
)

// Deep Linking 2.0, platform role: an author asks a tool for content for
// a lesson; the tool answers signed content items, and each resource link
// among them becomes an lti topic of the lesson, made by the topics
// capability as if the author had added it.

// Claims and messages of Deep Linking.
const (
	ClaimDeepLinking       = "https://purl.imsglobal.org/spec/lti-dl/claim/deep_linking_settings"
	ClaimContentItems      = "https://purl.imsglobal.org/spec/lti-dl/claim/content_items"
	ClaimDeepLinkingData   = "https://purl.imsglobal.org/spec/lti-dl/claim/data"
	MessageDeepLinkingReq  = "LtiDeepLinkingRequest"
	MessageDeepLinkingResp = "LtiDeepLinkingResponse"
	// DeepLinkReturnPath is where tools post their content items.
	DeepLinkReturnPath = "/api/lti/deep-links/return"
	// deepLinkingHint is the lti_message_hint of a deep linking request.
	deepLinkingHint = "deep-linking"
	// linkDataLifetime is how long after our request the tool may answer:
	// the author picks content in the tool meanwhile.
	linkDataLifetime = time.Hour
	// maxContentItems bounds the topics one answer makes.
	maxContentItems = 20
)

// TopicMaker makes topics as the topics capability's own route does.
type TopicMaker interface {
	CreateJSON(ctx context.Context, t *platform.Tenant, p *access.Principal, body []byte) (topics.View, error)
}

// DeepLink starts a deep linking request of p for a lesson of a course p
// may edit: a login hint bound to p, the tool, the lesson and the browser
// that asked (the cookie, for the caller to set), and the tool's login
// URL carrying it.
func (s *Platform) DeepLink(ctx context.Context, t *platform.Tenant, origin string, p *access.Principal, lessonID, toolID int64) (ToolLaunch, HintCookie, error) {
	lesson, err := courses.LessonByID(ctx, t.DB, lessonID)
	if err != nil {
		return ToolLaunch{}, HintCookie{}, err
	}
	c, err := courses.ByID(ctx, t.DB, lesson.CourseID)
	if err != nil {
		return ToolLaunch{}, HintCookie{}, err
	}
	if !courses.CanEdit(p, c) {
		return ToolLaunch{}, HintCookie{}, apperr.New(apperr.Forbidden, "This action is unauthorized.")
	}
	tool, err := ToolByID(ctx, t.DB, toolID)
	if apperr.Is(err, apperr.NotFound) {
		return ToolLaunch{}, HintCookie{}, apperr.Field("tool", "The external tool does not exist.")
	}
	if err != nil {
		return ToolLaunch{}, HintCookie{}, err
	}
	hint := secret()
	cookie := newHintCookie(hint)
	now := s.Clock.Now()
	if _, err := t.DB.ExecContext(ctx, `DELETE FROM lti_link_requests WHERE expires_at < $1`, now.Add(-linkDataLifetime)); err != nil {
		return ToolLaunch{}, HintCookie{}, fmt.Errorf("lti: prune link requests: %w", err)
	}
	if _, err := t.DB.ExecContext(ctx, `INSERT INTO lti_link_requests (hint_hash, tool_id, user_id, lesson_id, expires_at, browser_hash)
		VALUES ($1, $2, $3, $4, $5, $6)`, hash(hint), tool.ID, p.UserID, lesson.ID, now.Add(HintLifetime), hash(cookie.Value)); err != nil {
		return ToolLaunch{}, HintCookie{}, fmt.Errorf("lti: record link request: %w", err)
	}
	return ToolLaunch{URL: withQuery(tool.LoginURL, url.Values{
		"iss": {origin}, "login_hint": {hint}, "target_link_uri": {tool.TargetLinkURI},
		"lti_message_hint": {deepLinkingHint}, "client_id": {tool.ClientID}, "lti_deployment_id": {tool.DeploymentID},
	})}, cookie, nil
}

// authorizeDeepLinking answers the tool's authentication request of a
// deep linking request: the hint is taken, and the message carries fresh
// data the tool must send back, once.
func (s *Platform) authorizeDeepLinking(ctx context.Context, t *platform.Tenant, origin string, tool ExternalTool, in AuthRequest,
	userID, lessonID int64, now time.Time) ([]byte, error) {
	data := secret()
	if err := linkHints.take(ctx, t.DB, in.LoginHint, now, ", data_hash = $3", hash(data)); err != nil {
		return nil, err
	}
	lesson, err := courses.LessonByID(ctx, t.DB, lessonID)
	if err != nil {
		return nil, err
	}
	c, err := courses.ByID(ctx, t.DB, lesson.CourseID)
	if err != nil {
		return nil, err
	}
	u, err := accounts.ByID(ctx, t.DB, userID)
	if err != nil {
		return nil, err
	}
	claims := baseClaims(t, origin, tool, u, c, MessageDeepLinkingReq, RoleInstructor, in.Nonce, now)
	claims[ClaimTargetLink] = tool.TargetLinkURI
	claims[ClaimDeepLinking] = map[string]any{
		"deep_link_return_url":                 origin + DeepLinkReturnPath,
		"accept_types":                         []string{"ltiResourceLink"},
		"accept_presentation_document_targets": []string{"iframe", "window"},
		"accept_multiple":                      true,
		"accept_lineitem":                      true,
		"auto_create":                          true,
		"title":                                lesson.Title,
		"data":                                 data,
	}
	idToken, err := signClaims(t, claims)
	if err != nil {
		return nil, err
	}
	return postPage(in.RedirectURI, "id_token", idToken, "state", in.State)
}

// linkResponse is what we read of a tool's LtiDeepLinkingResponse.
type linkResponse struct {
	jwt.RegisteredClaims
	MessageType  string        `json:"https://purl.imsglobal.org/spec/lti/claim/message_type"`
	Version      string        `json:"https://purl.imsglobal.org/spec/lti/claim/version"`
	DeploymentID string        `json:"https://purl.imsglobal.org/spec/lti/claim/deployment_id"`
	Data         string        `json:"https://purl.imsglobal.org/spec/lti-dl/claim/data"`
	Items        []contentItem `json:"https://purl.imsglobal.org/spec/lti-dl/claim/content_items"`
}

// contentItem is one content item; only resource links become topics.
type contentItem struct {
	Type   string         `json:"type"`
	Title  string         `json:"title"`
	URL    string         `json:"url"`
	Custom map[string]any `json:"custom"`
	// LineItem asks for the line item of the topic's resource link.
	LineItem *struct {
		Label        string   `json:"label"`
		ScoreMaximum *float64 `json:"scoreMaximum"`
		ResourceID   string   `json:"resourceId"`
		Tag          string   `json:"tag"`
	} `json:"lineItem"`
}

// LinkedTopic is a topic made from a content item.
type LinkedTopic struct {
	ID    int64  `json:"id"`
	Title string `json:"title"`
}

// DeepLinkReturn checks a tool's signed answer (its key, issuer, audience
// us, times, message, deployment, and the data of our request, once) and
// makes an lti topic in the request's lesson of each resource link, on
// behalf of the author who asked. A refused answer makes nothing and
// leaves the request unused.
func (s *Platform) DeepLinkReturn(ctx context.Context, t *platform.Tenant, origin, raw string) ([]LinkedTopic, error) {
	unverified, _, err := jwt.NewParser().ParseUnverified(raw, &linkResponse{})
	if err != nil {
		return nil, launchError(apperr.Unauthorized, "invalid_token", "The JWT is not a JWT.")
	}
	if unverified.Method.Alg() != "RS256" {
		return nil, launchError(apperr.Unauthorized, "invalid_alg", "The JWT must be signed with RS256.")
	}
	iss, _ := unverified.Claims.GetIssuer()
	tool, err := toolByClientID(ctx, t.DB, iss)
	if err != nil {
		return nil, launchError(apperr.Unauthorized, "invalid_issuer", "The JWT comes from no registered tool.")
	}
	kid, _ := unverified.Header["kid"].(string)
	iat, _ := unverified.Claims.GetIssuedAt()
	key, err := s.toolKey(ctx, t, tool, kid, signedAt(iat))
	if err != nil {
		return nil, launchError(apperr.Unauthorized, "jwks_unavailable", "The tool's key could not be read.")
	}
	if key == nil {
		return nil, launchError(apperr.Unauthorized, "unknown_key", "The JWT is signed with a key the tool does not publish.")
	}
	now := s.Clock.Now()
	claims := &linkResponse{}
	_, err = jwt.ParseWithClaims(raw, claims, func(*jwt.Token) (any, error) { return key, nil },
		jwt.WithValidMethods([]string{"RS256"}), jwt.WithTimeFunc(func() time.Time { return now }), jwt.WithLeeway(clockLeeway),
		jwt.WithAudience(origin), jwt.WithExpirationRequired(), jwt.WithIssuedAt())
	switch {
	case errors.Is(err, jwt.ErrTokenSignatureInvalid):
		return nil, launchError(apperr.Unauthorized, "invalid_signature", "The JWT signature is not valid.")
	case errors.Is(err, jwt.ErrTokenInvalidAudience):
		return nil, launchError(apperr.Unauthorized, "invalid_audience", "The JWT is not meant for this platform.")
	case errors.Is(err, jwt.ErrTokenExpired), errors.Is(err, jwt.ErrTokenRequiredClaimMissing):
		return nil, launchError(apperr.Unauthorized, "expired", "The JWT has expired.")
	case errors.Is(err, jwt.ErrTokenUsedBeforeIssued):
		return nil, launchError(apperr.Unauthorized, "invalid_iat", "The JWT's issue time is not acceptable.")
	case err != nil:
		return nil, launchError(apperr.Unauthorized, "invalid_token", "The JWT is not valid.")
	case claims.MessageType != MessageDeepLinkingResp:
		return nil, launchError(apperr.Invalid, "invalid_message_type", "This message type is not a deep linking response.")
	case claims.Version != Version:
		return nil, launchError(apperr.Invalid, "invalid_version", "Only LTI 1.3.0 is supported.")
	case claims.DeploymentID != tool.DeploymentID:
		return nil, launchError(apperr.Forbidden, "unknown_deployment", "This deployment is not the tool's.")
	case claims.Data == "":
		return nil, launchError(apperr.Unauthorized, "invalid_data", "The answer's data is of no request of ours, used or expired.")
	}
	var links []contentItem
	for _, it := range claims.Items {
		if it.Type != "ltiResourceLink" {
			continue
		}
		if _, err := fetch.CheckURL(it.URL); it.URL != "" && (err != nil || len(it.URL) > 1000) {
			return nil, apperr.New(apperr.Invalid, "A content item's url must be an absolute http or https URL.")
		}
		if li := it.LineItem; li != nil && (li.ScoreMaximum == nil || *li.ScoreMaximum <= 0 || *li.ScoreMaximum > 1e9 ||
			len(li.Label) > maxLineItemText || len(li.ResourceID) > maxLineItemText || len(li.Tag) > maxLineItemText) {
			return nil, apperr.New(apperr.Invalid, "A content item's lineItem needs a scoreMaximum greater than 0; its label, "+
				"resourceId and tag are at most 255 bytes.")
		}
		links = append(links, it)
	}
	if len(links) > maxContentItems {
		return nil, apperr.New(apperr.Invalid, fmt.Sprintf("At most %d content items are taken at once.", maxContentItems))
	}
	// The data is taken before the topics are made, so that two posts of
	// one answer make them once; it is given back if they cannot be made.
	var userID, lessonID int64
	err = t.DB.QueryRowContext(ctx, `UPDATE lti_link_requests SET returned_at = $1 WHERE data_hash = $2 AND tool_id = $3
		AND returned_at IS NULL AND hint_used_at > $4 RETURNING user_id, lesson_id`,
		now, hash(claims.Data), tool.ID, now.Add(-linkDataLifetime)).Scan(&userID, &lessonID)
	if sqldb.NotFound(err) {
		return nil, launchError(apperr.Unauthorized, "invalid_data", "The answer's data is of no request of ours, used or expired.")
	}
	if err != nil {
		return nil, fmt.Errorf("lti: take link request: %w", err)
	}
	made, err := s.makeTopics(ctx, t, userID, lessonID, tool.ID, links)
	if err != nil {
		if _, undo := t.DB.ExecContext(ctx, `UPDATE lti_link_requests SET returned_at = NULL WHERE data_hash = $1`,
			hash(claims.Data)); undo != nil {
			return nil, errors.Join(err, undo)
		}
		return nil, err
	}
	return made, nil
}

// makeTopics makes an lti topic of each resource link, as the author.
func (s *Platform) makeTopics(ctx context.Context, t *platform.Tenant, userID, lessonID, toolID int64, links []contentItem) ([]LinkedTopic, error) {
	u, err := accounts.ByID(ctx, t.DB, userID)
	if err != nil {
		return nil, err
	}
	p, err := auth.UserPrincipal(t, u)
	if err != nil {
		return nil, err
	}
	made := []LinkedTopic{}
	for _, it := range links {
		body := map[string]any{"lesson": lessonID, "title": cmp.Or(clip(it.Title, 255), "External tool"),
			"topicable": Class, "tool": toolID}
		if it.URL != "" {
			body["url"] = it.URL
		}
		if len(it.Custom) > 0 {
			custom := map[string]string{}
			for k, v := range it.Custom {
				if str, ok := v.(string); ok {
					custom[k] = str
				} else {
					b, _ := json.Marshal(v)
					custom[k] = string(b)
				}
			}
			body["custom"] = custom
		}
		if it.LineItem != nil {
			body["score_maximum"] = *it.LineItem.ScoreMaximum
		}
		b, _ := json.Marshal(body)
		v, err := s.Topics.CreateJSON(ctx, t, p, b)
		if err != nil {
			return made, err
		}
		if li := it.LineItem; li != nil {
			if err := claimLineItem(ctx, t.DB, s.Clock.Now(), toolID, v.ID, LineItem{Label: cmp.Or(li.Label, clip(v.Title, maxLineItemText)),
				ScoreMaximum: *li.ScoreMaximum, ResourceID: li.ResourceID, Tag: li.Tag}); err != nil {
				return made, err
			}
		}
		made = append(made, LinkedTopic{ID: v.ID, Title: v.Title})
	}
	return made, nil
}

// linkedPage is the page the browser lands on after the tool's answer.
func linkedPage(made []LinkedTopic) []byte {
	page := "<!doctype html><html><head><meta charset=\"utf-8\"><title>Content added</title></head><body><p>" +
		strconv.Itoa(len(made)) + " topic(s) added to the lesson.</p></body></html>\n"
	return []byte(page)
}
