package lti

import (
	"bytes"
	"cmp"
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
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

// HintCookie binds a login hint to the browser that asked for it: the
// launch's answer sets it (httpOnly, for our authorization endpoint only,
// as long as the hint lives), and our authorization endpoint answers the
// hint only to a request that carries it. Its name comes from the hint, so
// launches under way in several tabs do not overwrite each other's.
type HintCookie struct {
	Name, Value string
}

// newHintCookie is a fresh cookie for hint; the hint's row keeps the
// hash of its value.
func newHintCookie(hint string) HintCookie {
	return HintCookie{Name: hintCookieName(hint), Value: secret()}
}

func hintCookieName(hint string) string { return "lms_lti_" + hash(hint)[:16] }

// Launch starts a launch of an lti topic by p: a login hint bound to p,
// the topic and the browser that asked (the cookie, for the caller to
// set), and the tool's login URL carrying it.
func (s *Platform) Launch(ctx context.Context, t *platform.Tenant, origin string, p *access.Principal, topicID int64) (ToolLaunch, HintCookie, error) {
	topic, link, err := ltiTopic(ctx, t.DB, topicID)
	if err != nil {
		return ToolLaunch{}, HintCookie{}, err
	}
	c, err := courses.ByID(ctx, t.DB, topic.CourseID)
	if err != nil {
		return ToolLaunch{}, HintCookie{}, err
	}
	if !courses.CanEdit(p, c) {
		if err := s.Gate.CanRecord(ctx, t, p, topicID); err != nil {
			return ToolLaunch{}, HintCookie{}, err
		}
	}
	tool, err := ToolByID(ctx, t.DB, link.ToolID)
	if apperr.Is(err, apperr.NotFound) {
		return ToolLaunch{}, HintCookie{}, apperr.New(apperr.Conflict, "The topic's tool was removed.")
	}
	if err != nil {
		return ToolLaunch{}, HintCookie{}, err
	}
	hint := secret()
	cookie := newHintCookie(hint)
	now := s.Clock.Now()
	if _, err := t.DB.ExecContext(ctx, `DELETE FROM lti_hints WHERE expires_at < $1`, now); err != nil {
		return ToolLaunch{}, HintCookie{}, fmt.Errorf("lti: prune hints: %w", err)
	}
	if _, err := t.DB.ExecContext(ctx, `INSERT INTO lti_hints (hint_hash, tool_id, user_id, topic_id, expires_at, browser_hash)
		VALUES ($1, $2, $3, $4, $5, $6)`, hash(hint), tool.ID, p.UserID, topicID, now.Add(HintLifetime), hash(cookie.Value)); err != nil {
		return ToolLaunch{}, HintCookie{}, fmt.Errorf("lti: record hint: %w", err)
	}
	return ToolLaunch{URL: withQuery(tool.LoginURL, url.Values{
		"iss": {origin}, "login_hint": {hint}, "target_link_uri": {cmp.Or(link.URL, tool.TargetLinkURI)},
		"lti_message_hint": {strconv.FormatInt(topicID, 10)}, "client_id": {tool.ClientID},
		"lti_deployment_id": {tool.DeploymentID},
	})}, cookie, nil
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
// browser to after our login initiation, with the browser's cookies.
type AuthRequest struct {
	Scope, ResponseType, ResponseMode, Prompt string
	ClientID, RedirectURI, LoginHint          string
	State, Nonce, MessageHint                 string
	Cookies                                   map[string]string
}

// Authorized is our answer to an authentication request: the page that
// posts the launch, or the OAuth error, to the tool's redirect URI.
type Authorized struct {
	Page []byte
	// UsedCookie names the hint's cookie when the hint was taken: the
	// browser may drop it.
	UsedCookie string
}

// Authorize checks a tool's authentication request and answers the
// auto-submitting form that posts the signed id_token to the tool. A
// request that names no registered tool and redirect URI is an error;
// once the redirect URI is known to be the tool's, every refusal is an
// OAuth error posted there (OIDC Core 3.1.2.6, in the form_post mode LTI
// uses). The login hint must be ours, unexpired, unused, for this tool,
// and come with its cookie; a refused request leaves it unused.
func (s *Platform) Authorize(ctx context.Context, t *platform.Tenant, origin string, in AuthRequest) (Authorized, error) {
	tool, err := toolByClientID(ctx, t.DB, in.ClientID)
	if err != nil {
		return Authorized{}, err
	}
	if !tool.allowsRedirect(in.RedirectURI) {
		return Authorized{}, launchError(apperr.BadRequest, "invalid_redirect_uri", "The redirect_uri is not registered for this tool.")
	}
	refuse := func(code, description string) (Authorized, error) {
		page, err := postPage(in.RedirectURI, "error", code, "error_description", description, "state", in.State)
		return Authorized{Page: page}, err
	}
	switch {
	case !slices.Contains(strings.Fields(in.Scope), "openid"):
		return refuse("invalid_scope", "The scope must include openid.")
	case in.ResponseType != "id_token":
		return refuse("unsupported_response_type", "The response_type must be id_token.")
	case in.ResponseMode != "" && in.ResponseMode != "form_post",
		in.Nonce == "", in.LoginHint == "":
		return refuse("invalid_request", "response_mode form_post, nonce and login_hint are required.")
	}
	now := s.Clock.Now()
	kind := launchHints
	if in.MessageHint == deepLinkingHint {
		kind = linkHints
	}
	userID, subject, refusal, err := kind.pending(ctx, t.DB, tool.ID, in, now)
	if err != nil {
		return Authorized{}, err
	}
	if refusal != "" {
		return refuse("login_required", refusal)
	}
	var page []byte
	if kind == linkHints {
		page, err = s.authorizeDeepLinking(ctx, t, origin, tool, in, userID, subject, now)
	} else {
		if in.MessageHint != "" && in.MessageHint != strconv.FormatInt(subject, 10) {
			return refuse("invalid_request", "The lti_message_hint does not match the launch.")
		}
		page, err = s.authorizeLaunch(ctx, t, origin, tool, in, userID, subject, now)
	}
	if errors.Is(err, errHintTaken) {
		return refuse("login_required", "The login hint was used meanwhile.")
	}
	if err != nil {
		return Authorized{}, err
	}
	return Authorized{Page: page, UsedCookie: hintCookieName(in.LoginHint)}, nil
}

// hintKind is a table of login hints: those of launches (a topic) and
// those of deep linking requests (a lesson).
type hintKind struct {
	table, used, subject string
}

var (
	launchHints = &hintKind{table: "lti_hints", used: "used_at", subject: "topic_id"}
	linkHints   = &hintKind{table: "lti_link_requests", used: "hint_used_at", subject: "lesson_id"}
)

// errHintTaken is a hint another request took between our read and our
// take.
var errHintTaken = errors.New("lti: login hint taken meanwhile")

// pending reads the request's hint, unused and unexpired, for this tool,
// and checks the browser's cookie; refusal says why it is refused ("" if
// it is not). Nothing is written: a refused request leaves the hint.
func (k *hintKind) pending(ctx context.Context, q sqldb.Querier, toolID int64, in AuthRequest, now time.Time) (userID, subject int64,
	refusal string, err error) {
	var browser string
	err = q.QueryRowContext(ctx, `SELECT user_id, `+k.subject+`, browser_hash FROM `+k.table+` WHERE hint_hash = $1
		AND tool_id = $2 AND `+k.used+` IS NULL AND expires_at > $3`, hash(in.LoginHint), toolID, now).Scan(&userID, &subject, &browser)
	if sqldb.NotFound(err) {
		return 0, 0, "The login hint is unknown, used or expired.", nil
	}
	if err != nil {
		return 0, 0, "", fmt.Errorf("lti: read hint: %w", err)
	}
	value, ok := in.Cookies[hintCookieName(in.LoginHint)]
	if !ok || browser == "" || subtle.ConstantTimeCompare([]byte(hash(value)), []byte(browser)) != 1 {
		return 0, 0, "This browser did not ask for the launch of this login hint.", nil
	}
	return userID, subject, "", nil
}

// take marks the hint used, with set's other columns ($3 on); it is
// errHintTaken when another request took it first.
func (k *hintKind) take(ctx context.Context, q sqldb.Querier, hint string, now time.Time, set string, args ...any) error {
	res, err := q.ExecContext(ctx, `UPDATE `+k.table+` SET `+k.used+` = $1`+set+` WHERE hint_hash = $2 AND `+k.used+` IS NULL`,
		append([]any{now, hash(hint)}, args...)...)
	if err != nil {
		return fmt.Errorf("lti: take hint: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		return cmp.Or(err, errHintTaken)
	}
	return nil
}

// authorizeLaunch takes the hint of a resource link launch and answers the
// page posting its id_token.
func (s *Platform) authorizeLaunch(ctx context.Context, t *platform.Tenant, origin string, tool ExternalTool, in AuthRequest,
	userID, topicID int64, now time.Time) ([]byte, error) {
	if err := launchHints.take(ctx, t.DB, in.LoginHint, now, ""); err != nil {
		return nil, err
	}
	idToken, err := s.idToken(ctx, t, origin, tool, userID, topicID, in.Nonce, now)
	if err != nil {
		return nil, err
	}
	return postPage(in.RedirectURI, "id_token", idToken, "state", in.State)
}

// postPage is the page that posts fields (name, value, name, value...)
// to the tool.
func postPage(action string, fields ...string) ([]byte, error) {
	var inputs [][2]string
	for i := 0; i+1 < len(fields); i += 2 {
		inputs = append(inputs, [2]string{fields[i], fields[i+1]})
	}
	var page bytes.Buffer
	err := autoPost.Execute(&page, map[string]any{"Action": action, "Fields": inputs})
	return page.Bytes(), err
}

// autoPost posts the fields to the tool as soon as the page loads; the
// button is for browsers without scripts.
var autoPost = template.Must(template.New("post").Parse(`<!doctype html>
<html><head><meta charset="utf-8"><title>Launching…</title></head>
<body onload="document.forms[0].submit()">
<form method="post" action="{{.Action}}">
{{range .Fields}}<input type="hidden" name="{{index . 0}}" value="{{index . 1}}">
{{end}}<noscript><button type="submit">Continue</button></noscript>
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
	// OIDC claims without a value are left out, not sent empty.
	setNonEmpty := func(name, value string) {
		if value != "" {
			claims[name] = value
		}
	}
	if tool.ShareName {
		setNonEmpty("name", strings.TrimSpace(u.FirstName+" "+u.LastName))
		setNonEmpty("given_name", u.FirstName)
		setNonEmpty("family_name", u.LastName)
	}
	if tool.ShareEmail {
		setNonEmpty("email", u.Email)
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
