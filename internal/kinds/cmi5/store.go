package cmi5

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/lms-platform/lms/internal/apperr"
	"github.com/lms-platform/lms/internal/sqldb"
)

var errPackageMissing = apperr.New(apperr.NotFound, "cmi5 package not found.")

func insertPackage(ctx context.Context, tx *sqldb.Tx, p *Cmi5Package, creator *int64) error {
	structure, err := structureJSON(p.Structure)
	if err != nil {
		return fmt.Errorf("cmi5: encode structure: %w", err)
	}
	err = tx.QueryRowContext(ctx, `INSERT INTO cmi5_packages (course_iri, title, structure, file_prefix, created_by, created_at)
VALUES ($1, $2, $3, $4, $5, $6) RETURNING id`, p.CourseIRI, p.Title, structure, p.filePrefix, creator, p.CreatedAt).Scan(&p.ID)
	if err != nil {
		return fmt.Errorf("cmi5: insert package: %w", err)
	}
	for i := range p.AUs {
		au := &p.AUs[i]
		blocks, _ := json.Marshal(au.Blocks)
		err := tx.QueryRowContext(ctx, `INSERT INTO cmi5_aus (package_id, position, iri, title, url, move_on, mastery_score, launch_method,
launch_parameters, entitlement_key, blocks) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) RETURNING id`,
			p.ID, i, au.IRI, au.Title, au.URL, au.MoveOn, au.MasteryScore, au.LaunchMethod, au.LaunchParameters, au.EntitlementKey,
			string(blocks)).Scan(&au.ID)
		if err != nil {
			return fmt.Errorf("cmi5: insert AU: %w", err)
		}
		au.packageID = p.ID
	}
	return nil
}

func packageByID(ctx context.Context, q sqldb.Querier, id int64) (Cmi5Package, error) {
	var p Cmi5Package
	var structure string
	err := q.QueryRowContext(ctx, `SELECT id, course_iri, title, structure, file_prefix, created_at FROM cmi5_packages WHERE id = $1`, id).
		Scan(&p.ID, &p.CourseIRI, &p.Title, &structure, &p.filePrefix, &p.CreatedAt)
	if errors.Is(err, sql.ErrNoRows) {
		return p, errPackageMissing
	}
	if err != nil {
		return p, fmt.Errorf("cmi5: load package: %w", err)
	}
	p.Structure = &Course{}
	if err := json.Unmarshal([]byte(structure), p.Structure); err != nil {
		return p, fmt.Errorf("cmi5: parse stored structure: %w", err)
	}
	p.AUs, err = ausOf(ctx, q, id)
	return p, err
}

const auColumns = `id, package_id, iri, title, url, move_on, mastery_score, launch_method, launch_parameters, entitlement_key, blocks`

func scanAU(row interface{ Scan(...any) error }) (AUInfo, error) {
	var au AUInfo
	var blocks string
	var mastery sql.NullFloat64
	err := row.Scan(&au.ID, &au.packageID, &au.IRI, &au.Title, &au.URL, &au.MoveOn, &mastery, &au.LaunchMethod, &au.LaunchParameters,
		&au.EntitlementKey, &blocks)
	if err != nil {
		return au, err
	}
	if mastery.Valid {
		au.MasteryScore = &mastery.Float64
	}
	json.Unmarshal([]byte(blocks), &au.Blocks)
	return au, nil
}

func ausOf(ctx context.Context, q sqldb.Querier, packageID int64) ([]AUInfo, error) {
	rows, err := q.QueryContext(ctx, `SELECT `+auColumns+` FROM cmi5_aus WHERE package_id = $1 ORDER BY position`, packageID)
	if err != nil {
		return nil, fmt.Errorf("cmi5: load AUs: %w", err)
	}
	defer rows.Close()
	var out []AUInfo
	for rows.Next() {
		au, err := scanAU(rows)
		if err != nil {
			return nil, fmt.Errorf("cmi5: read AU: %w", err)
		}
		out = append(out, au)
	}
	return out, rows.Err()
}

func auByID(ctx context.Context, q sqldb.Querier, id int64) (AUInfo, error) {
	au, err := scanAU(q.QueryRowContext(ctx, `SELECT `+auColumns+` FROM cmi5_aus WHERE id = $1`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return au, apperr.New(apperr.NotFound, "AU not found.")
	}
	if err != nil {
		return au, fmt.Errorf("cmi5: load AU: %w", err)
	}
	return au, nil
}

// registration returns the learner's registration in a course (package),
// made on first use; created says whether it was.
func registration(ctx context.Context, db *sqldb.DB, packageID, userID int64, newID string, now time.Time) (string, bool, error) {
	var id string
	err := db.QueryRowContext(ctx, `SELECT id FROM cmi5_registrations WHERE package_id = $1 AND user_id = $2`, packageID, userID).Scan(&id)
	if err == nil {
		return id, false, nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return "", false, fmt.Errorf("cmi5: load registration: %w", err)
	}
	_, err = db.ExecContext(ctx, `INSERT INTO cmi5_registrations (id, package_id, user_id, created_at) VALUES ($1, $2, $3, $4)
ON CONFLICT (package_id, user_id) DO NOTHING`, newID, packageID, userID, now)
	if err != nil {
		return "", false, fmt.Errorf("cmi5: insert registration: %w", err)
	}
	err = db.QueryRowContext(ctx, `SELECT id FROM cmi5_registrations WHERE package_id = $1 AND user_id = $2`, packageID, userID).Scan(&id)
	if err != nil {
		return "", false, fmt.Errorf("cmi5: load registration: %w", err)
	}
	return id, id == newID, nil
}

// session is a launch of an AU.
type session struct {
	ID           string
	Registration string
	AUID         int64
	TopicID      int64
	UserID       int64
	LaunchMode   string
	LaunchedAt   time.Time
	Initialized  *time.Time
	Completed    bool
	Passed       bool
	Failed       bool
	Terminated   *time.Time
	Abandoned    *time.Time
	Seconds      int64
	// LastAt is the server's time of the session's last statement.
	LastAt *time.Time
	// PreferencesRead: the token has read the learner preferences.
	PreferencesRead bool
}

const sessionColumns = `id, registration, au_id, topic_id, user_id, launch_mode, launched_at, initialized_at, completed, passed, failed,
terminated_at, abandoned_at, seconds, last_at, preferences_read`

func scanSession(row interface{ Scan(...any) error }) (session, error) {
	var s session
	var init, term, aband, last sql.NullTime
	err := row.Scan(&s.ID, &s.Registration, &s.AUID, &s.TopicID, &s.UserID, &s.LaunchMode, &s.LaunchedAt, &init, &s.Completed, &s.Passed,
		&s.Failed, &term, &aband, &s.Seconds, &last, &s.PreferencesRead)
	s.Initialized, s.Terminated, s.Abandoned, s.LastAt = timeOrNil(init), timeOrNil(term), timeOrNil(aband), timeOrNil(last)
	return s, err
}

func sessionBy(ctx context.Context, q sqldb.Querier, column, value string) (session, error) {
	s, err := scanSession(q.QueryRowContext(ctx, `SELECT `+sessionColumns+` FROM cmi5_sessions WHERE `+column+` = $1`, value))
	if errors.Is(err, sql.ErrNoRows) {
		return s, apperr.New(apperr.NotFound, "Session not found.")
	}
	if err != nil {
		return s, fmt.Errorf("cmi5: load session: %w", err)
	}
	return s, nil
}

// openSessions are a registration's sessions of an AU that neither
// terminated nor were abandoned.
func openSessions(ctx context.Context, q sqldb.Querier, reg string, auID int64) ([]session, error) {
	rows, err := q.QueryContext(ctx, `SELECT `+sessionColumns+` FROM cmi5_sessions WHERE registration = $1 AND au_id = $2
AND terminated_at IS NULL AND abandoned_at IS NULL`, reg, auID)
	if err != nil {
		return nil, fmt.Errorf("cmi5: load open sessions: %w", err)
	}
	defer rows.Close()
	var out []session
	for rows.Next() {
		s, err := scanSession(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

// auStatus is what a registration achieved in an AU.
type auStatus struct {
	Completed, Passed, Satisfied bool
	Score                        *float64
}

func statusOf(ctx context.Context, q sqldb.Querier, reg string, auID int64) (auStatus, error) {
	var st auStatus
	var score sql.NullFloat64
	err := q.QueryRowContext(ctx, `SELECT completed, passed, satisfied, score FROM cmi5_au_status WHERE registration = $1 AND au_id = $2`,
		reg, auID).Scan(&st.Completed, &st.Passed, &st.Satisfied, &score)
	if errors.Is(err, sql.ErrNoRows) {
		return st, nil
	}
	if score.Valid {
		st.Score = &score.Float64
	}
	if err != nil {
		return st, fmt.Errorf("cmi5: load AU status: %w", err)
	}
	return st, nil
}

// recordState reads what the rules check a session's statements against,
// in one query as it runs in the writer's turn: the session, its AU (the
// columns the rules need) and the AU's status in the registration.
func recordState(ctx context.Context, q sqldb.Querier, sessionID string) (session, AUInfo, auStatus, error) {
	var au AUInfo
	var st auStatus
	var mastery, score sql.NullFloat64
	var completed, passed, satisfied sql.NullBool
	row := q.QueryRowContext(ctx, `SELECT `+prefixed("s.", sessionColumns)+`, a.package_id, a.iri, a.move_on, a.mastery_score,
st.completed, st.passed, st.satisfied, st.score
FROM cmi5_sessions s JOIN cmi5_aus a ON a.id = s.au_id
LEFT JOIN cmi5_au_status st ON st.registration = s.registration AND st.au_id = s.au_id
WHERE s.id = $1`, sessionID)
	sess, err := scanSession(scanAlso{row, []any{&au.packageID, &au.IRI, &au.MoveOn, &mastery, &completed, &passed, &satisfied, &score}})
	if errors.Is(err, sql.ErrNoRows) {
		return sess, au, st, apperr.New(apperr.NotFound, "Session not found.")
	}
	if err != nil {
		return sess, au, st, fmt.Errorf("cmi5: load session: %w", err)
	}
	au.ID = sess.AUID
	if mastery.Valid {
		au.MasteryScore = &mastery.Float64
	}
	st.Completed, st.Passed, st.Satisfied = completed.Bool, passed.Bool, satisfied.Bool
	if score.Valid {
		st.Score = &score.Float64
	}
	return sess, au, st, nil
}

// scanAlso scans a row into a scan function's destinations and then more.
type scanAlso struct {
	row  *sql.Row
	more []any
}

func (s scanAlso) Scan(dest ...any) error { return s.row.Scan(append(dest, s.more...)...) }

// prefixed qualifies each of a list of columns with a table's alias.
func prefixed(alias, columns string) string {
	list := strings.Split(columns, ",")
	for i, c := range list {
		list[i] = alias + strings.TrimSpace(c)
	}
	return strings.Join(list, ", ")
}

func timeOrNil(t sql.NullTime) *time.Time {
	if !t.Valid {
		return nil
	}
	return &t.Time
}

func saveStatus(ctx context.Context, q sqldb.Querier, reg string, auID int64, st auStatus) error {
	_, err := q.ExecContext(ctx, `INSERT INTO cmi5_au_status (registration, au_id, completed, passed, satisfied, score) VALUES ($1, $2, $3, $4, $5, $6)
ON CONFLICT (registration, au_id) DO UPDATE SET completed = excluded.completed, passed = excluded.passed, satisfied = excluded.satisfied,
score = excluded.score`, reg, auID, st.Completed, st.Passed, st.Satisfied, st.Score)
	if err != nil {
		return fmt.Errorf("cmi5: save AU status: %w", err)
	}
	return nil
}

// satisfiedAUs are the ids of the AUs satisfied in a registration.
func satisfiedAUs(ctx context.Context, q sqldb.Querier, reg string) (map[int64]bool, error) {
	rows, err := q.QueryContext(ctx, `SELECT au_id FROM cmi5_au_status WHERE registration = $1 AND satisfied = TRUE`, reg)
	if err != nil {
		return nil, fmt.Errorf("cmi5: load satisfied AUs: %w", err)
	}
	defer rows.Close()
	out := map[int64]bool{}
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		out[id] = true
	}
	return out, rows.Err()
}

// markSatisfied records a block or course satisfied; it tells whether it
// was not already.
func markSatisfied(ctx context.Context, q sqldb.Querier, reg, iri string) (bool, error) {
	res, err := q.ExecContext(ctx, `INSERT INTO cmi5_satisfied (registration, iri) VALUES ($1, $2) ON CONFLICT DO NOTHING`, reg, iri)
	if err != nil {
		return false, fmt.Errorf("cmi5: mark satisfied: %w", err)
	}
	n, _ := res.RowsAffected()
	return n > 0, nil
}
