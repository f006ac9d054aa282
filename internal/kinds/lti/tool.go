package lti

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/lms-platform/lms/internal/accounts"
	"github.com/lms-platform/lms/internal/apperr"
	"github.com/lms-platform/lms/internal/auth"
	"github.com/lms-platform/lms/internal/clock"
	"github.com/lms-platform/lms/internal/courses"
	"github.com/lms-platform/lms/internal/platform"
	"github.com/lms-platform/lms/internal/sqldb"
	"github.com/lms-platform/lms/internal/topics"
)

// Times of the tool role.
const (
	// stateLifetime bounds the time between a login initiation and its
	// launch: the platform's own login page may sit between them.
	stateLifetime = 10 * time.Minute
	// CodeLifetime is how long the browser has to bring the one-time
	// code to the frontend.
	CodeLifetime = time.Minute
	// clockLeeway is the tolerance on exp and iat of a platform's token.
	clockLeeway = time.Minute
	// maxTokenAge refuses id_tokens issued long ago even when their exp
	// is far away.
	maxTokenAge = time.Hour
)

// Tool is the tool role: login initiation, launch and code exchange.
type Tool struct {
	Clock clock.Clock
	Keys  *KeySets
	// Issue gives a user a regular access token (auth).
	Issue func(ctx context.Context, t *platform.Tenant, userID int64) (auth.Issued, error)
}

// launchError is a refused step of the protocol: its code names the
// check that failed, never which secret was wrong.
func launchError(kind apperr.Kind, code, message string) *apperr.Error {
	e := apperr.New(kind, message)
	e.Code = code
	return e
}

// LoginRequest is an OIDC login initiation (third-party initiated login).
type LoginRequest struct {
	Issuer        string
	LoginHint     string
	TargetLinkURI string
	MessageHint   string
	DeploymentID  string
	ClientID      string
	LaunchURL     string // our launch endpoint, the redirect_uri
}

// Login checks an initiation and answers the platform's authentication
// URL with a fresh state and nonce, kept (the state by hash) until the
// launch comes back.
func (s *Tool) Login(ctx context.Context, t *platform.Tenant, in LoginRequest) (string, error) {
	if in.Issuer == "" || in.LoginHint == "" || in.TargetLinkURI == "" {
		return "", launchError(apperr.BadRequest, "invalid_login", "iss, login_hint and target_link_uri are required.")
	}
	reg, err := registrationFor(ctx, t.DB, in.Issuer, in.ClientID)
	if err != nil {
		return "", err
	}
	if in.DeploymentID != "" && !slices.Contains(reg.DeploymentIDs, in.DeploymentID) {
		return "", launchError(apperr.Forbidden, "unknown_deployment", "This deployment is not registered with this tool.")
	}
	state, nonce := secret(), secret()
	now := s.Clock.Now()
	if _, err := t.DB.ExecContext(ctx, `DELETE FROM lti_states WHERE expires_at < $1`, now); err != nil {
		return "", fmt.Errorf("lti: prune states: %w", err)
	}
	if _, err := t.DB.ExecContext(ctx, `INSERT INTO lti_states (state_hash, registration_id, nonce, expires_at) VALUES ($1, $2, $3, $4)`,
		hash(state), reg.ID, nonce, now.Add(stateLifetime)); err != nil {
		return "", fmt.Errorf("lti: record state: %w", err)
	}
	q := url.Values{
		"scope": {"openid"}, "response_type": {"id_token"}, "response_mode": {"form_post"}, "prompt": {"none"},
		"client_id": {reg.ClientID}, "redirect_uri": {in.LaunchURL}, "login_hint": {in.LoginHint},
		"state": {state}, "nonce": {nonce},
	}
	if in.MessageHint != "" {
		q.Set("lti_message_hint", in.MessageHint)
	}
	return withQuery(reg.AuthLoginURL, q), nil
}

// withQuery adds q to the query of a registered URL.
func withQuery(raw string, q url.Values) string {
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	all := u.Query()
	for k, v := range q {
		all[k] = v
	}
	u.RawQuery = all.Encode()
	return u.String()
}

// idToken is what we read of a platform's id_token.
type idToken struct {
	jwt.RegisteredClaims
	Azp          string `json:"azp"`
	Nonce        string `json:"nonce"`
	Name         string `json:"name"`
	GivenName    string `json:"given_name"`
	FamilyName   string `json:"family_name"`
	MessageType  string `json:"https://purl.imsglobal.org/spec/lti/claim/message_type"`
	Version      string `json:"https://purl.imsglobal.org/spec/lti/claim/version"`
	DeploymentID string `json:"https://purl.imsglobal.org/spec/lti/claim/deployment_id"`
	TargetLink   string `json:"https://purl.imsglobal.org/spec/lti/claim/target_link_uri"`
	ResourceLink *struct {
		ID    string `json:"id"`
		Title string `json:"title"`
	} `json:"https://purl.imsglobal.org/spec/lti/claim/resource_link"`
	Roles   *[]string `json:"https://purl.imsglobal.org/spec/lti/claim/roles"`
	Context *struct {
		ID string `json:"id"`
	} `json:"https://purl.imsglobal.org/spec/lti/claim/context"`
	Custom map[string]any `json:"https://purl.imsglobal.org/spec/lti/claim/custom"`
	AGS    *struct {
		Scope     []string `json:"scope"`
		LineItem  string   `json:"lineitem"`
		LineItems string   `json:"lineitems"`
	} `json:"https://purl.imsglobal.org/spec/lti-ags/claim/endpoint"`
}

// Landing is where a successful launch sends the browser.
type Landing struct {
	Code     string
	CourseID int64
}

// Launch validates a launch in the order of the security framework and,
// only when every check passes, records it in one transaction: the
// nonce, the user (created on first launch), the course access and the
// one-time code. A refused launch writes nothing but the removal of the
// state it used up.
func (s *Tool) Launch(ctx context.Context, t *platform.Tenant, rawToken, state string) (Landing, error) {
	if rawToken == "" || state == "" {
		return Landing{}, launchError(apperr.BadRequest, "invalid_request", "id_token and state are required.")
	}
	now := s.Clock.Now()
	// 1. The state: ours, unexpired, used once.
	var regID int64
	var nonce string
	var expires time.Time
	err := t.DB.QueryRowContext(ctx, `DELETE FROM lti_states WHERE state_hash = $1 RETURNING registration_id, nonce, expires_at`,
		hash(state)).Scan(&regID, &nonce, &expires)
	if sqldb.NotFound(err) || (err == nil && !now.Before(expires)) {
		return Landing{}, launchError(apperr.Unauthorized, "invalid_state", "The launch state is unknown, used or expired.")
	}
	if err != nil {
		return Landing{}, fmt.Errorf("lti: take state: %w", err)
	}
	reg, err := registrationByID(ctx, t.DB, regID)
	if err != nil {
		return Landing{}, err
	}
	// 2. The signature: RS256 with a key of the platform's key set.
	claims, err := s.verify(ctx, t, reg, rawToken)
	if err != nil {
		return Landing{}, err
	}
	// 3. to 9.: issuer, audience, times, nonce, deployment, message.
	if err := checkClaims(claims, reg, nonce, now); err != nil {
		return Landing{}, err
	}
	courseID, topicID, err := target(ctx, t.DB, reg, claims.Custom)
	if err != nil {
		return Landing{}, err
	}
	code := secret()
	err = t.Tx(ctx, func(tx *sqldb.Tx) error {
		exp := claims.ExpiresAt.Time
		if _, err := tx.ExecContext(ctx, `DELETE FROM lti_nonces WHERE expires_at < $1`, now); err != nil {
			return fmt.Errorf("lti: prune nonces: %w", err)
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO lti_nonces (registration_id, nonce, expires_at) VALUES ($1, $2, $3)`,
			reg.ID, claims.Nonce, exp.Add(clockLeeway))
		if sqldb.IsUniqueViolation(err) {
			return launchError(apperr.Unauthorized, "replayed_nonce", "This launch was already used.")
		}
		if err != nil {
			return fmt.Errorf("lti: record nonce: %w", err)
		}
		userID, err := s.user(ctx, tx, now, reg, claims)
		if err != nil {
			return err
		}
		if courseID != 0 {
			if err := courses.GrantAccess(ctx, tx, now, courseID, userID); err != nil {
				return err
			}
		}
		launchID, err := recordLaunch(ctx, tx, now, reg, userID, courseID, topicID, claims)
		if err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO lti_codes (code_hash, user_id, launch_id, expires_at) VALUES ($1, $2, $3, $4)`,
			hash(code), userID, launchID, now.Add(CodeLifetime))
		return err
	})
	if err != nil {
		return Landing{}, err
	}
	return Landing{Code: code, CourseID: courseID}, nil
}

// verify checks the header and signature of the id_token and reads its
// claims; times and the rest are checked after.
func (s *Tool) verify(ctx context.Context, t *platform.Tenant, reg Registration, raw string) (*idToken, error) {
	unverified, _, err := jwt.NewParser().ParseUnverified(raw, &idToken{})
	if err != nil {
		return nil, launchError(apperr.Unauthorized, "invalid_token", "The id_token is not a JWT.")
	}
	if unverified.Method.Alg() != "RS256" {
		return nil, launchError(apperr.Unauthorized, "invalid_alg", "The id_token must be signed with RS256.")
	}
	kid, _ := unverified.Header["kid"].(string)
	iat, _ := unverified.Claims.GetIssuedAt()
	key, err := s.Keys.Key(ctx, t, reg.JWKSURL, kid, signedAt(iat))
	if err != nil {
		return nil, launchError(apperr.Unauthorized, "jwks_unavailable", "The platform's key set could not be read.")
	}
	if key == nil {
		return nil, launchError(apperr.Unauthorized, "unknown_key", "The id_token is signed with a key the platform does not publish.")
	}
	claims := &idToken{}
	_, err = jwt.ParseWithClaims(raw, claims, func(*jwt.Token) (any, error) { return key, nil },
		jwt.WithValidMethods([]string{"RS256"}), jwt.WithoutClaimsValidation())
	if err != nil {
		return nil, launchError(apperr.Unauthorized, "invalid_signature", "The id_token signature is not valid.")
	}
	return claims, nil
}

// checkClaims runs the claim checks of the security framework (5.1.3)
// and the LTI core, in that order.
func checkClaims(c *idToken, reg Registration, nonce string, now time.Time) error {
	if c.Issuer != reg.Issuer {
		return launchError(apperr.Unauthorized, "invalid_issuer", "The id_token comes from another issuer.")
	}
	if !slices.Contains(c.Audience, reg.ClientID) || (len(c.Audience) > 1 && c.Azp != reg.ClientID) ||
		(c.Azp != "" && c.Azp != reg.ClientID) {
		return launchError(apperr.Unauthorized, "invalid_audience", "The id_token is not meant for this tool.")
	}
	if c.ExpiresAt == nil || !now.Before(c.ExpiresAt.Add(clockLeeway)) {
		return launchError(apperr.Unauthorized, "expired", "The id_token has expired.")
	}
	if c.IssuedAt == nil || now.Add(clockLeeway).Before(c.IssuedAt.Time) || now.Sub(c.IssuedAt.Time) > maxTokenAge {
		return launchError(apperr.Unauthorized, "invalid_iat", "The id_token's issue time is not acceptable.")
	}
	if c.Nonce == "" || c.Nonce != nonce {
		return launchError(apperr.Unauthorized, "invalid_nonce", "The id_token's nonce does not match the login.")
	}
	if !slices.Contains(reg.DeploymentIDs, c.DeploymentID) {
		return launchError(apperr.Forbidden, "unknown_deployment", "This deployment is not registered with this tool.")
	}
	if c.MessageType != MessageResourceReq {
		return launchError(apperr.Invalid, "invalid_message_type", "This message type is not supported.")
	}
	if c.Version != Version {
		return launchError(apperr.Invalid, "invalid_version", "Only LTI 1.3.0 is supported.")
	}
	switch {
	case c.Subject == "" || len(c.Subject) > 255:
		return missing("sub")
	case c.Roles == nil:
		return missing("roles")
	case c.ResourceLink == nil || c.ResourceLink.ID == "" || len(c.ResourceLink.ID) > 255:
		return missing("resource_link.id")
	case c.TargetLink == "":
		return missing("target_link_uri")
	}
	return nil
}

func missing(claim string) error {
	return launchError(apperr.Invalid, "missing_claim", "The id_token lacks the required claim "+claim+".")
}

// target is the course (and topic) a launch lands in: the custom
// parameter topic_id or course_id, else the registration's course. The
// course must be one the registration may open: a platform's custom
// parameters are its own to write, and must not open the tenant's other
// courses.
func target(ctx context.Context, q sqldb.Querier, reg Registration, custom map[string]any) (courseID, topicID int64, err error) {
	courseID, topicID, err = named(ctx, q, reg, custom)
	if err == nil && courseID != 0 && !reg.allows(courseID) {
		return 0, 0, launchError(apperr.Forbidden, "course_not_allowed", "This platform may not open that course.")
	}
	return courseID, topicID, err
}

// named is the course (and topic) a launch names.
func named(ctx context.Context, q sqldb.Querier, reg Registration, custom map[string]any) (courseID, topicID int64, err error) {
	if id, ok := customID(custom, "topic_id"); ok {
		courseID, err = topics.CourseOf(ctx, q, id)
		if apperr.Is(err, apperr.NotFound) {
			return 0, 0, launchError(apperr.NotFound, "unknown_topic", "The launch names a topic that does not exist.")
		}
		return courseID, id, err
	}
	if id, ok := customID(custom, "course_id"); ok {
		courseID = id
	} else if reg.CourseID != nil {
		courseID = *reg.CourseID
	}
	if courseID != 0 {
		if _, err := courses.ByID(ctx, q, courseID); err != nil {
			if apperr.Is(err, apperr.NotFound) {
				return 0, 0, launchError(apperr.NotFound, "unknown_course", "The launch names a course that does not exist.")
			}
			return 0, 0, err
		}
	}
	return courseID, 0, nil
}

// customID reads a custom parameter holding an id, as platforms send
// them: strings, sometimes numbers.
func customID(custom map[string]any, key string) (int64, bool) {
	switch v := custom[key].(type) {
	case string:
		id, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		return id, err == nil && id > 0
	case float64:
		return int64(v), v > 0 && v == float64(int64(v))
	}
	return 0, false
}

// user finds the user of (issuer, sub) or creates one, and sets its role
// from the launch. The e-mail of the claims is never used to match: a
// platform could claim anyone's address.
func (s *Tool) user(ctx context.Context, tx *sqldb.Tx, now time.Time, reg Registration, c *idToken) (int64, error) {
	role := MapRoles(*c.Roles)
	var userID int64
	err := tx.QueryRowContext(ctx, `SELECT user_id FROM lti_users WHERE issuer = $1 AND sub = $2`, reg.Issuer, c.Subject).Scan(&userID)
	if err == nil {
		return userID, accounts.SetRoles(ctx, tx, userID, []string{role})
	}
	if !sqldb.NotFound(err) {
		return 0, fmt.Errorf("lti: find user: %w", err)
	}
	first, last := c.GivenName, c.FamilyName
	if first == "" && last == "" {
		first = c.Name
	}
	if first == "" {
		first = "LTI"
	}
	if last == "" {
		last = "User"
	}
	sum := sha256.Sum256([]byte(reg.Issuer + "\x00" + c.Subject))
	u, err := accounts.Create(ctx, tx, now, accounts.NewUser{
		// An address of the reserved .invalid domain: the account is
		// reached only through launches, and never collides with a real one.
		Email:     "lti-" + hex.EncodeToString(sum[:12]) + "@lti.invalid",
		FirstName: clip(first, 100), LastName: clip(last, 100),
		Roles: []string{role}, IsActive: true, Verified: true,
	})
	if err != nil {
		return 0, err
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO lti_users (issuer, sub, user_id, created_at) VALUES ($1, $2, $3, $4)`,
		reg.Issuer, c.Subject, u.ID, now); err != nil {
		return 0, fmt.Errorf("lti: record user: %w", err)
	}
	return u.ID, nil
}

func clip(s string, n int) string {
	r := []rune(strings.TrimSpace(s))
	if len(r) > n {
		r = r[:n]
	}
	return string(r)
}

func recordLaunch(ctx context.Context, tx *sqldb.Tx, now time.Time, reg Registration, userID, courseID, topicID int64, c *idToken) (int64, error) {
	var lineItem, lineItems, scopes, contextID string
	if c.AGS != nil {
		lineItem, lineItems, scopes = clip(c.AGS.LineItem, 2000), clip(c.AGS.LineItems, 2000), strings.Join(c.AGS.Scope, " ")
	}
	if c.Context != nil {
		contextID = c.Context.ID
	}
	roles, _ := json.Marshal(*c.Roles)
	var id int64
	err := tx.QueryRowContext(ctx, `INSERT INTO lti_launches (registration_id, user_id, deployment_id, resource_link_id, context_id,
		course_id, topic_id, launch_roles, ags_lineitem, ags_lineitems, ags_scopes, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) RETURNING id`, reg.ID, userID, c.DeploymentID, c.ResourceLink.ID,
		clip(contextID, 255), nullID(courseID), nullID(topicID), string(roles), lineItem, lineItems, scopes, now).Scan(&id)
	if err != nil {
		return 0, fmt.Errorf("lti: record launch: %w", err)
	}
	return id, nil
}

func nullID(id int64) any {
	if id == 0 {
		return nil
	}
	return id
}

// Exchange turns a one-time code into an access token, once.
func (s *Tool) Exchange(ctx context.Context, t *platform.Tenant, code string) (auth.Issued, error) {
	invalid := launchError(apperr.Unauthorized, "invalid_code", "The launch code is invalid or has expired.")
	if code == "" {
		return auth.Issued{}, invalid
	}
	now := s.Clock.Now()
	// Codes a day past their time are of no use, not even to tell a
	// replay from a typo.
	if _, err := t.DB.ExecContext(ctx, `DELETE FROM lti_codes WHERE expires_at < $1`, now.Add(-24*time.Hour)); err != nil {
		return auth.Issued{}, fmt.Errorf("lti: prune codes: %w", err)
	}
	var userID int64
	err := t.DB.QueryRowContext(ctx, `UPDATE lti_codes SET used_at = $1 WHERE code_hash = $2 AND used_at IS NULL AND expires_at > $1
		RETURNING user_id`, now, hash(code)).Scan(&userID)
	if sqldb.NotFound(err) {
		return auth.Issued{}, invalid
	}
	if err != nil {
		return auth.Issued{}, fmt.Errorf("lti: take code: %w", err)
	}
	return s.Issue(ctx, t, userID)
}
