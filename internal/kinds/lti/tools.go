package lti

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/lms-platform/lms/internal/apperr"
	"github.com/lms-platform/lms/internal/fetch"
	"github.com/lms-platform/lms/internal/platform"
	"github.com/lms-platform/lms/internal/sqldb"
)

// ExternalTool is a tool lti topics of the tenant launch (platform role).
type ExternalTool struct {
	ID            int64     `json:"id"`
	Name          string    `json:"name"`
	ClientID      string    `json:"client_id" doc:"The client id this platform gives the tool; generated."`
	LoginURL      string    `json:"login_url"`
	TargetLinkURI string    `json:"target_link_uri"`
	RedirectURIs  []string  `json:"redirect_uris"`
	JWKSURL       string    `json:"jwks_url"`
	PublicKey     string    `json:"public_key"`
	DeploymentID  string    `json:"deployment_id"`
	ShareName     bool      `json:"share_name"`
	ShareEmail    bool      `json:"share_email"`
	CreatedAt     time.Time `json:"created_at"`
	UpdatedAt     time.Time `json:"updated_at"`
}

// ToolInput is what an admin sends to add an external tool.
type ToolInput struct {
	Name          string   `json:"name" minLength:"1" maxLength:"200"`
	LoginURL      string   `json:"login_url" minLength:"1" maxLength:"1000" doc:"The tool's OIDC login initiation URL."`
	TargetLinkURI string   `json:"target_link_uri" minLength:"1" maxLength:"1000" doc:"The tool's launch URL, used when a topic names none."`
	RedirectURIs  []string `json:"redirect_uris" minItems:"1" maxItems:"20" doc:"The tool's redirection URIs; a launch is answered only to one of them."`
	JWKSURL       string   `json:"jwks_url,omitempty" maxLength:"1000" doc:"The tool's key set URL (for its client assertions); or give public_key."`
	PublicKey     string   `json:"public_key,omitempty" maxLength:"4000" doc:"The tool's RSA public key (PEM), instead of jwks_url."`
	DeploymentID  string   `json:"deployment_id,omitempty" maxLength:"255" doc:"The deployment id sent to the tool; default: generated."`
	ShareName     bool     `json:"share_name,omitempty" doc:"Send the learner's name in launches."`
	ShareEmail    bool     `json:"share_email,omitempty" doc:"Send the learner's e-mail in launches."`
}

const toolColumns = `id, name, client_id, login_url, target_link_uri, redirect_uris, jwks_url, public_key, deployment_id,
	share_name, share_email, created_at, updated_at`

func scanTool(row interface{ Scan(...any) error }) (ExternalTool, error) {
	var tl ExternalTool
	var redirects string
	err := row.Scan(&tl.ID, &tl.Name, &tl.ClientID, &tl.LoginURL, &tl.TargetLinkURI, &redirects, &tl.JWKSURL, &tl.PublicKey,
		&tl.DeploymentID, &tl.ShareName, &tl.ShareEmail, &tl.CreatedAt, &tl.UpdatedAt)
	tl.RedirectURIs = strings.Fields(redirects)
	return tl, err
}

func (in ToolInput) check() error {
	problems := map[string][]string{}
	urls := map[string]string{"login_url": in.LoginURL, "target_link_uri": in.TargetLinkURI, "jwks_url": in.JWKSURL}
	for i, u := range in.RedirectURIs {
		urls[fmt.Sprintf("redirect_uris.%d", i)] = u
	}
	for field, u := range urls {
		if u == "" && field == "jwks_url" {
			continue
		}
		if _, err := fetch.CheckURL(u); err != nil || strings.ContainsAny(u, " \t\r\n") {
			problems[field] = []string{"The " + field + " must be an absolute http or https URL."}
		}
	}
	if (in.JWKSURL == "") == (in.PublicKey == "") {
		problems["jwks_url"] = append(problems["jwks_url"], "Give either jwks_url or public_key.")
	}
	if in.PublicKey != "" {
		if _, err := platform.ParsePublicKey(in.PublicKey); err != nil {
			problems["public_key"] = []string{"The public_key must be an RSA public key in PEM."}
		}
	}
	if strings.ContainsAny(in.DeploymentID, " \t\r\n") {
		problems["deployment_id"] = []string{"The deployment_id may not contain spaces."}
	}
	if len(problems) > 0 {
		return &apperr.Error{Kind: apperr.Invalid, Message: "The tool is not valid.", Fields: problems}
	}
	return nil
}

// ToolChoice is an external tool as authors choose it.
type ToolChoice struct {
	ID   int64  `json:"id"`
	Name string `json:"name"`
}

// Tools lists the tenant's external tools.
func Tools(ctx context.Context, q sqldb.Querier) ([]ExternalTool, error) {
	rows, err := q.QueryContext(ctx, `SELECT `+toolColumns+` FROM lti_tools ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("lti: list tools: %w", err)
	}
	defer rows.Close()
	out := []ExternalTool{}
	for rows.Next() {
		tl, err := scanTool(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, tl)
	}
	return out, rows.Err()
}

// ToolByID loads an external tool; NotFound when absent.
func ToolByID(ctx context.Context, q sqldb.Querier, id int64) (ExternalTool, error) {
	tl, err := scanTool(q.QueryRowContext(ctx, `SELECT `+toolColumns+` FROM lti_tools WHERE id = $1`, id))
	if sqldb.NotFound(err) {
		return tl, apperr.New(apperr.NotFound, "Tool not found.")
	}
	return tl, err
}

func toolByClientID(ctx context.Context, q sqldb.Querier, clientID string) (ExternalTool, error) {
	tl, err := scanTool(q.QueryRowContext(ctx, `SELECT `+toolColumns+` FROM lti_tools WHERE client_id = $1`, clientID))
	if sqldb.NotFound(err) {
		return tl, launchError(apperr.BadRequest, "unauthorized_client", "Unknown client_id.")
	}
	return tl, err
}

// SaveTool creates (id 0) or replaces an external tool. The client id is
// ours to give, once.
func SaveTool(ctx context.Context, q sqldb.Querier, now time.Time, id int64, in ToolInput) (ExternalTool, error) {
	if err := in.check(); err != nil {
		return ExternalTool{}, err
	}
	redirects := strings.Join(in.RedirectURIs, " ")
	if id == 0 {
		deployment := in.DeploymentID
		if deployment == "" {
			deployment = secret()[:16]
		}
		err := q.QueryRowContext(ctx, `INSERT INTO lti_tools (name, client_id, login_url, target_link_uri, redirect_uris, jwks_url,
			public_key, deployment_id, share_name, share_email, created_at, updated_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $11) RETURNING id`,
			in.Name, secret()[:24], in.LoginURL, in.TargetLinkURI, redirects, in.JWKSURL, in.PublicKey, deployment,
			in.ShareName, in.ShareEmail, now).Scan(&id)
		if err != nil {
			return ExternalTool{}, fmt.Errorf("lti: add tool: %w", err)
		}
		return ToolByID(ctx, q, id)
	}
	old, err := ToolByID(ctx, q, id)
	if err != nil {
		return old, err
	}
	deployment := cmp.Or(in.DeploymentID, old.DeploymentID)
	var res sql.Result
	res, err = q.ExecContext(ctx, `UPDATE lti_tools SET name = $1, login_url = $2, target_link_uri = $3, redirect_uris = $4,
		jwks_url = $5, public_key = $6, deployment_id = $7, share_name = $8, share_email = $9, updated_at = $10 WHERE id = $11`,
		in.Name, in.LoginURL, in.TargetLinkURI, redirects, in.JWKSURL, in.PublicKey, deployment, in.ShareName, in.ShareEmail, now, id)
	if err != nil {
		return ExternalTool{}, fmt.Errorf("lti: save tool: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return ExternalTool{}, apperr.New(apperr.NotFound, "Tool not found.")
	}
	return ToolByID(ctx, q, id)
}

// DeleteTool removes an external tool; its topics stay and refuse to
// launch.
func DeleteTool(ctx context.Context, q sqldb.Querier, id int64) error {
	res, err := q.ExecContext(ctx, `DELETE FROM lti_tools WHERE id = $1`, id)
	if err != nil {
		return fmt.Errorf("lti: delete tool: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return apperr.New(apperr.NotFound, "Tool not found.")
	}
	return nil
}

// allowsRedirect reports whether uri is one of the tool's registered
// redirection URIs, compared exactly.
func (tl ExternalTool) allowsRedirect(uri string) bool { return slices.Contains(tl.RedirectURIs, uri) }
