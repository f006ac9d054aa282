package lti

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/lms-platform/lms/internal/apperr"
	"github.com/lms-platform/lms/internal/courses"
	"github.com/lms-platform/lms/internal/fetch"
	"github.com/lms-platform/lms/internal/sqldb"
)

// Registration is a platform allowed to launch us (tool role), one per
// (issuer, client_id).
type Registration struct {
	ID            int64     `json:"id"`
	Name          string    `json:"name"`
	Issuer        string    `json:"issuer"`
	ClientID      string    `json:"client_id"`
	AuthLoginURL  string    `json:"auth_login_url"`
	JWKSURL       string    `json:"jwks_url"`
	TokenURL      string    `json:"token_url"`
	DeploymentIDs []string  `json:"deployment_ids"`
	CourseID      *int64    `json:"course_id"`
	CourseIDs     []int64   `json:"course_ids" doc:"The courses this platform's launches may open; a launch naming another is refused (403 course_not_allowed)."`
	CreatedAt     time.Time `json:"created_at"`
	UpdatedAt     time.Time `json:"updated_at"`
}

// RegistrationInput is what an admin sends to register a platform.
type RegistrationInput struct {
	Name          string   `json:"name" minLength:"1" maxLength:"200" doc:"A name for admins, e.g. \"University Moodle\"."`
	Issuer        string   `json:"issuer" minLength:"1" maxLength:"500" doc:"The platform's issuer (iss of its id_tokens), e.g. https://moodle.example.edu."`
	ClientID      string   `json:"client_id" minLength:"1" maxLength:"200" doc:"The client id the platform gave this tool."`
	AuthLoginURL  string   `json:"auth_login_url" minLength:"1" maxLength:"1000" doc:"The platform's OIDC authentication request URL."`
	JWKSURL       string   `json:"jwks_url" minLength:"1" maxLength:"1000" doc:"The platform's public key set URL; fetched through the outbound-fetch guard."`
	TokenURL      string   `json:"token_url,omitempty" maxLength:"1000" doc:"The platform's OAuth 2 token URL, for sending grades back (AGS)."`
	DeploymentIDs []string `json:"deployment_ids" minItems:"1" maxItems:"50" doc:"Deployment ids accepted from this platform."`
	CourseID      *int64   `json:"course_id,omitempty" doc:"The course a launch lands in when its custom parameters name neither course_id nor topic_id."`
	CourseIDs     []int64  `json:"course_ids,omitempty" maxItems:"500" doc:"The courses this platform's launches may open (by custom topic_id or course_id, or course_id above); default: course_id alone. A launch naming any other course is refused."`
}

const registrationColumns = `id, name, issuer, client_id, auth_login_url, jwks_url, token_url, deployment_ids, course_id,
	course_ids, created_at, updated_at`

func scanRegistration(row interface{ Scan(...any) error }) (Registration, error) {
	var r Registration
	var deployments, allowed string
	var course sql.NullInt64
	err := row.Scan(&r.ID, &r.Name, &r.Issuer, &r.ClientID, &r.AuthLoginURL, &r.JWKSURL, &r.TokenURL, &deployments,
		&course, &allowed, &r.CreatedAt, &r.UpdatedAt)
	r.DeploymentIDs = strings.Fields(deployments)
	r.CourseIDs = []int64{}
	for _, f := range strings.Fields(allowed) {
		if id, err := strconv.ParseInt(f, 10, 64); err == nil {
			r.CourseIDs = append(r.CourseIDs, id)
		}
	}
	if course.Valid {
		r.CourseID = &course.Int64
	}
	return r, err
}

// allows reports whether a launch of the registration may open the
// course.
func (r Registration) allows(courseID int64) bool { return slices.Contains(r.CourseIDs, courseID) }

// courses is the list of courses the input allows: as given, or the
// default course alone.
func (in RegistrationInput) courses() []int64 {
	if in.CourseIDs != nil {
		return in.CourseIDs
	}
	if in.CourseID != nil {
		return []int64{*in.CourseID}
	}
	return []int64{}
}

// check validates an input: URLs absolute http(s), deployment ids
// without spaces, existing courses, the default course among the allowed.
func (in RegistrationInput) check(ctx context.Context, q sqldb.Querier) error {
	problems := map[string][]string{}
	for field, u := range map[string]string{"auth_login_url": in.AuthLoginURL, "jwks_url": in.JWKSURL, "token_url": in.TokenURL} {
		if u == "" && field == "token_url" {
			continue
		}
		if _, err := fetch.CheckURL(u); err != nil {
			problems[field] = append(problems[field], "The "+field+" must be an absolute http or https URL.")
		}
	}
	for i, d := range in.DeploymentIDs {
		if d == "" || len(d) > 255 || strings.ContainsAny(d, " \t\r\n") {
			problems[fmt.Sprintf("deployment_ids.%d", i)] = []string{"A deployment id is 1 to 255 characters without spaces."}
		}
	}
	if in.CourseID != nil {
		if _, err := courses.ByID(ctx, q, *in.CourseID); apperr.Is(err, apperr.NotFound) {
			problems["course_id"] = []string{"The course does not exist."}
		} else if err != nil {
			return err
		}
		if !slices.Contains(in.courses(), *in.CourseID) {
			problems["course_id"] = append(problems["course_id"], "The course must be one of course_ids.")
		}
	}
	for i, id := range in.CourseIDs {
		if _, err := courses.ByID(ctx, q, id); apperr.Is(err, apperr.NotFound) {
			problems[fmt.Sprintf("course_ids.%d", i)] = []string{"The course does not exist."}
		} else if err != nil {
			return err
		}
	}
	if len(problems) > 0 {
		return &apperr.Error{Kind: apperr.Invalid, Message: "The registration is not valid.", Fields: problems}
	}
	return nil
}

// Registrations lists the tenant's registrations.
func Registrations(ctx context.Context, q sqldb.Querier) ([]Registration, error) {
	rows, err := q.QueryContext(ctx, `SELECT `+registrationColumns+` FROM lti_registrations ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("lti: list registrations: %w", err)
	}
	defer rows.Close()
	out := []Registration{}
	for rows.Next() {
		r, err := scanRegistration(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

func registrationByID(ctx context.Context, q sqldb.Querier, id int64) (Registration, error) {
	r, err := scanRegistration(q.QueryRowContext(ctx, `SELECT `+registrationColumns+` FROM lti_registrations WHERE id = $1`, id))
	if sqldb.NotFound(err) {
		return r, apperr.New(apperr.NotFound, "Registration not found.")
	}
	return r, err
}

// registrationFor finds the registration of a login initiation: by
// issuer, and by client id when the platform sends one (it must when it
// registered this tool more than once).
func registrationFor(ctx context.Context, q sqldb.Querier, issuer, clientID string) (Registration, error) {
	query, args := `SELECT `+registrationColumns+` FROM lti_registrations WHERE issuer = $1 ORDER BY id LIMIT 2`, []any{issuer}
	if clientID != "" {
		query, args = `SELECT `+registrationColumns+` FROM lti_registrations WHERE issuer = $1 AND client_id = $2`, []any{issuer, clientID}
	}
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return Registration{}, fmt.Errorf("lti: find registration: %w", err)
	}
	defer rows.Close()
	var found []Registration
	for rows.Next() {
		r, err := scanRegistration(rows)
		if err != nil {
			return r, err
		}
		found = append(found, r)
	}
	if err := rows.Err(); err != nil {
		return Registration{}, err
	}
	switch len(found) {
	case 0:
		return Registration{}, launchError(apperr.BadRequest, "unknown_platform", "This platform is not registered with this tool.")
	case 1:
		return found[0], nil
	}
	return Registration{}, launchError(apperr.BadRequest, "client_id_required",
		"This platform has several registrations: the login must name its client_id.")
}

// SaveRegistration creates (id 0) or replaces a registration.
func SaveRegistration(ctx context.Context, q sqldb.Querier, now time.Time, id int64, in RegistrationInput) (Registration, error) {
	if err := in.check(ctx, q); err != nil {
		return Registration{}, err
	}
	deployments := strings.Join(in.DeploymentIDs, " ")
	var allowed []string
	for _, id := range in.courses() {
		if f := strconv.FormatInt(id, 10); !slices.Contains(allowed, f) {
			allowed = append(allowed, f)
		}
	}
	courseIDs := strings.Join(allowed, " ")
	var err error
	if id == 0 {
		err = q.QueryRowContext(ctx, `INSERT INTO lti_registrations (name, issuer, client_id, auth_login_url, jwks_url, token_url,
			deployment_ids, course_id, course_ids, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $10)
			RETURNING id`,
			in.Name, in.Issuer, in.ClientID, in.AuthLoginURL, in.JWKSURL, in.TokenURL, deployments, in.CourseID, courseIDs, now).Scan(&id)
	} else {
		var res sql.Result
		res, err = q.ExecContext(ctx, `UPDATE lti_registrations SET name = $1, issuer = $2, client_id = $3, auth_login_url = $4,
			jwks_url = $5, token_url = $6, deployment_ids = $7, course_id = $8, course_ids = $9, updated_at = $10 WHERE id = $11`,
			in.Name, in.Issuer, in.ClientID, in.AuthLoginURL, in.JWKSURL, in.TokenURL, deployments, in.CourseID, courseIDs, now, id)
		if err == nil {
			if n, _ := res.RowsAffected(); n == 0 {
				return Registration{}, apperr.New(apperr.NotFound, "Registration not found.")
			}
		}
	}
	if sqldb.IsUniqueViolation(err) {
		return Registration{}, apperr.Field("client_id", "This issuer and client id are already registered.")
	}
	if err != nil {
		return Registration{}, fmt.Errorf("lti: save registration: %w", err)
	}
	return registrationByID(ctx, q, id)
}

// DeleteRegistration removes a registration with its states, nonces and
// launches; users it created stay.
func DeleteRegistration(ctx context.Context, q sqldb.Querier, id int64) error {
	res, err := q.ExecContext(ctx, `DELETE FROM lti_registrations WHERE id = $1`, id)
	if err != nil {
		return fmt.Errorf("lti: delete registration: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return apperr.New(apperr.NotFound, "Registration not found.")
	}
	return nil
}
