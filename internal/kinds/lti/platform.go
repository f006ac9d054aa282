package lti

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"html/template"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/lms-platform/lms/internal/access"
	"github.com/lms-platform/lms/internal/accounts"
	"github.com/lms-platform/lms/internal/apperr"
	"github.com/lms-platform/lms/internal/clock"
	"github.com/lms-platform/lms/internal/courses"
	"github.com/lms-platform/lms/internal/kinds"
	"github.com/lms-platform/lms/internal/platform"
	"github.com/lms-platform/lms/internal/sqldb"
	"github.com/lms-platform/lms/internal/topics"
)

// Class is the topicable class of lti topics.
const Class = `Lms\TopicTypes\Models\TopicContent\LTI`

// Times of the platform role.
const (
	// HintLifetime is the spec's platform-side login hint: two minutes,
	// single use.
	HintLifetime = 2 * time.Minute
	// idTokenLifetime is how long a tool may take to accept our launch.
	idTokenLifetime = 5 * time.Minute
)

// Link is the value of an lti topic: the tool, the resource it opens
// (its target link, the tool's own by default) and custom parameters.
type Link struct {
	ToolID int64             `json:"tool_id"`
	URL    string            `json:"url,omitempty"`
	Custom map[string]string `json:"custom,omitempty"`
	// ScoreMaximum is the maximum of the line item of the resource link
	// (AGS), made on the first launch; 100 when it is 0.
	ScoreMaximum float64 `json:"score_maximum,omitempty"`
}

// ParseLink reads an lti topic's value.
func ParseLink(value json.RawMessage) (Link, error) {
	var l Link
	err := json.Unmarshal(value, &l)
	return l, err
}

// Gate says whether a learner may record progress in a topic now
// (learning).
type Gate = kinds.Gate

// Platform is the platform role: launches of lti topics and our OIDC
// authorization endpoint.
type Platform struct {
	Clock clock.Clock
	Gate  Gate
	// Keys fetches tools' key sets, for their client assertions.
	Keys *KeySets
	// Progress completes a topic when a tool posts a completed score.
	Progress topics.ScoredCompleter
	// Topics makes the topics of deep linking answers.
	Topics TopicMaker
}

// ToolLaunch is the answer of a launch: where to send the browser.
type ToolLaunch struct {
	URL string `json:"url" doc:"The tool's OIDC login initiation URL with iss, login_hint (two minutes, single use), target_link_uri, lti_message_hint, client_id and lti_deployment_id."`
}

// Launch starts a launch of an lti topic by p: a login hint bound to p
// and the topic, and the tool's login URL carrying it.
func (s *Platform) Launch(ctx context.Context, t *platform.Tenant, origin string, p *access.Principal, topicID int64) (ToolLaunch, error) {
	topic, link, err := ltiTopic(ctx, t.DB, topicID)
	if err != nil {
		return ToolLaunch{}, err
	}
	c, err := courses.ByID(ctx, t.DB, topic.CourseID)
	if err != nil {
		return ToolLaunch{}, err
	}
	if !courses.CanEdit(p, c) {
		if err := s.Gate.CanRecord(ctx, t, p, topicID); err != nil {
			return ToolLaunch{}, err
		}
	}
	tool, err := ToolByID(ctx, t.DB, link.ToolID)
	if apperr.Is(err, apperr.NotFound) {
		return ToolLaunch{}, apperr.New(apperr.Conflict, "The topic's tool was removed.")
	}
	if err != nil {
		return ToolLaunch{}, err
	}
	hint := secret()
	now := s.Clock.Now()
	if _, err := t.DB.ExecContext(ctx, `DELETE FROM lti_hints WHERE expires_at < $1`, now); err != nil {
		return ToolLaunch{}, fmt.Errorf("lti: prune hints: %w", err)
	}
	if _, err := t.DB.ExecContext(ctx, `INSERT INTO lti_hints (hint_hash, tool_id, user_id, topic_id, expires_at)
		VALUES ($1, $2, $3, $4, $5)`, hash(hint), tool.ID, p.UserID, topicID, now.Add(HintLifetime)); err != nil {
		return ToolLaunch{}, fmt.Errorf("lti: record hint: %w", err)
	}
	return ToolLaunch{URL: withQuery(tool.LoginURL, url.Values{
		"iss": {origin}, "login_hint": {hint}, "target_link_uri": {cmp.Or(link.URL, tool.TargetLinkURI)},
		"lti_message_hint": {strconv.FormatInt(topicID, 10)}, "client_id": {tool.ClientID},
		"lti_deployment_id": {tool.DeploymentID},
	})}, nil
}

// ltiTopic loads a topic that must be an lti topic.
func ltiTopic(ctx context.Context, q sqldb.Querier, topicID int64) (topics.Topic, Link, error) {
	topic, err := topics.ByID(ctx, q, topicID)
	if err != nil {
		return topic, Link{}, err
	}
	if topic.TopicableType != Class {
		return topic, Link{}, apperr.New(apperr.NotFound, "This topic launches no LTI tool.")
	}
	link, err := ParseLink(topic.Content)
	if err != nil {
		return topic, link, fmt.Errorf("lti: topic %d value: %w", topicID, err)
	}
	return topic, link, nil
}

// AuthRequest is the OIDC authentication request a tool sends the
// browser to after our login initiation.
type AuthRequest struct {
	Scope, ResponseType, ResponseMode, Prompt string
	ClientID, RedirectURI, LoginHint          string
	State, Nonce, MessageHint                 string
}

// Authorize checks a tool's authentication request (client, registered
// redirection URI, login hint: ours, unexpired, unused, for this tool)
// and answers the auto-submitting form that posts the signed id_token to
// the tool.
func (s *Platform) Authorize(ctx context.Context, t *platform.Tenant, origin string, in AuthRequest) ([]byte, error) {
	if !slices.Contains(strings.Fields(in.Scope), "openid") || in.ResponseType != "id_token" ||
		(in.ResponseMode != "" && in.ResponseMode != "form_post") || in.Nonce == "" || in.LoginHint == "" {
		return nil, launchError(apperr.BadRequest, "invalid_request",
			"scope openid, response_type id_token, response_mode form_post, nonce and login_hint are required.")
	}
	tool, err := toolByClientID(ctx, t.DB, in.ClientID)
	if err != nil {
		return nil, err
	}
	if !tool.allowsRedirect(in.RedirectURI) {
		return nil, launchError(apperr.BadRequest, "invalid_redirect_uri", "The redirect_uri is not registered for this tool.")
	}
	now := s.Clock.Now()
	if in.MessageHint == deepLinkingHint {
		return s.authorizeDeepLinking(ctx, t, origin, tool, in, now)
	}
	var userID, topicID int64
	err = t.DB.QueryRowContext(ctx, `UPDATE lti_hints SET used_at = $1 WHERE hint_hash = $2 AND tool_id = $3 AND used_at IS NULL
		AND expires_at > $1 RETURNING user_id, topic_id`, now, hash(in.LoginHint), tool.ID).Scan(&userID, &topicID)
	if sqldb.NotFound(err) {
		return nil, launchError(apperr.Unauthorized, "invalid_login_hint", "The login hint is unknown, used or expired.")
	}
	if err != nil {
		return nil, fmt.Errorf("lti: take hint: %w", err)
	}
	if in.MessageHint != "" && in.MessageHint != strconv.FormatInt(topicID, 10) {
		return nil, launchError(apperr.Unauthorized, "invalid_message_hint", "The message hint does not match the launch.")
	}
	idToken, err := s.idToken(ctx, t, origin, tool, userID, topicID, in.Nonce, now)
	if err != nil {
		return nil, err
	}
	return postPage(in.RedirectURI, idToken, in.State)
}

// postPage is the page that posts an id_token to the tool.
func postPage(action, idToken, state string) ([]byte, error) {
	var page bytes.Buffer
	err := autoPost.Execute(&page, map[string]string{"Action": action, "IDToken": idToken, "State": state})
	return page.Bytes(), err
}

// autoPost posts the id_token to the tool as soon as the page loads; the
// button is for browsers without scripts.
var autoPost = template.Must(template.New("post").Parse(`<!doctype html>
<html><head><meta charset="utf-8"><title>Launching…</title></head>
<body onload="document.forms[0].submit()">
<form method="post" action="{{.Action}}">
<input type="hidden" name="id_token" value="{{.IDToken}}">
<input type="hidden" name="state" value="{{.State}}">
<noscript><button type="submit">Continue</button></noscript>
</form>
</body></html>
`))

// idToken is the signed LtiResourceLinkRequest of a launch: the tenant's
// key, the claims of the LTI core, name and e-mail only as the tool's
// privacy settings allow.
func (s *Platform) idToken(ctx context.Context, t *platform.Tenant, origin string, tool ExternalTool, userID, topicID int64,
	nonce string, now time.Time) (string, error) {
	topic, link, err := ltiTopic(ctx, t.DB, topicID)
	if err != nil {
		return "", err
	}
	c, err := courses.ByID(ctx, t.DB, topic.CourseID)
	if err != nil {
		return "", err
	}
	u, err := accounts.ByID(ctx, t.DB, userID)
	if err != nil {
		return "", err
	}
	role := RoleLearner
	if slices.Contains(u.Roles, access.Admin) || (slices.Contains(u.Roles, access.Tutor) && c.HasAuthor(userID)) {
		role = RoleInstructor
	}
	custom := map[string]string{}
	for k, v := range link.Custom {
		custom[k] = v
	}
	claims := baseClaims(t, origin, tool, u, c, MessageResourceReq, role, nonce, now)
	claims[ClaimTargetLink] = cmp.Or(link.URL, tool.TargetLinkURI)
	claims[ClaimResourceLink] = map[string]string{"id": strconv.FormatInt(topic.ID, 10), "title": topic.Title}
	claims[ClaimCustom] = custom
	item, err := claimedLineItem(ctx, t.DB, now, tool.ID, topic, link)
	if err != nil {
		return "", err
	}
	claims[ClaimAGSEndpoint] = map[string]any{
		"scope":     launchScopes,
		"lineitems": lineItemsURL(origin, topic.ID),
		"lineitem":  lineItemURL(origin, topic.ID, item),
	}
	return signClaims(t, claims)
}

// baseClaims are the claims of every message we send a tool: who, where
// from, for which deployment and course, with name and e-mail only as the
// tool's privacy settings allow.
func baseClaims(t *platform.Tenant, origin string, tool ExternalTool, u accounts.User, c courses.Course, messageType, role,
	nonce string, now time.Time) jwt.MapClaims {
	claims := jwt.MapClaims{
		"iss": origin, "aud": tool.ClientID, "azp": tool.ClientID, "sub": strconv.FormatInt(u.ID, 10),
		"iat": now.Unix(), "exp": now.Add(idTokenLifetime).Unix(), "nonce": nonce,
		ClaimMessageType:  messageType,
		ClaimVersion:      Version,
		ClaimDeploymentID: tool.DeploymentID,
		ClaimRoles:        []string{role},
		ClaimContext: map[string]any{"id": strconv.FormatInt(c.ID, 10), "title": c.Title,
			"type": []string{"http://purl.imsglobal.org/vocab/lis/v2/course#CourseOffering"}},
		ClaimPresentation: map[string]string{"document_target": "iframe", "locale": "en"},
		ClaimToolPlatform: map[string]string{"guid": t.Keys.ID, "name": t.Name, "product_family_code": "lms"},
	}
	if tool.ShareName {
		claims["name"] = strings.TrimSpace(u.FirstName + " " + u.LastName)
		claims["given_name"], claims["family_name"] = u.FirstName, u.LastName
	}
	if tool.ShareEmail {
		claims["email"] = u.Email
	}
	return claims
}

// signClaims signs a message with the tenant's key.
func signClaims(t *platform.Tenant, claims jwt.MapClaims) (string, error) {
	tok := jwt.NewWithClaims(jwt.SigningMethodRS256, claims)
	tok.Header["kid"] = t.Keys.ID
	return tok.SignedString(t.Keys.Private)
}

// Scopes of the Assignment and Grade Services.
const (
	ScopeLineItem     = "https://purl.imsglobal.org/spec/lti-ags/scope/lineitem"
	ScopeLineItemRead = "https://purl.imsglobal.org/spec/lti-ags/scope/lineitem.readonly"
	ScopeScore        = "https://purl.imsglobal.org/spec/lti-ags/scope/score"
	ScopeResultRead   = "https://purl.imsglobal.org/spec/lti-ags/scope/result.readonly"
)

// launchScopes are the AGS scopes our launches offer a tool.
var launchScopes = []string{ScopeLineItem, ScopeLineItemRead, ScopeScore, ScopeResultRead}
