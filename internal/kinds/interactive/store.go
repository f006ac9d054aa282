package interactive

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/lms-platform/lms/internal/apperr"
	"github.com/lms-platform/lms/internal/platform"
	"github.com/lms-platform/lms/internal/sqldb"
)

type packageRow struct {
	id        int64
	title     string
	current   int
	createdBy *int64
}

func packageByID(ctx context.Context, q sqldb.Querier, id int64) (packageRow, error) {
	var r packageRow
	var by sql.NullInt64
	err := q.QueryRowContext(ctx, `SELECT id, title, current_version, created_by FROM interactive_packages WHERE id = $1`, id).
		Scan(&r.id, &r.title, &r.current, &by)
	if sqldb.NotFound(err) {
		return r, apperr.New(apperr.NotFound, "Package not found.")
	}
	if err != nil {
		return r, fmt.Errorf("interactive: load package %d: %w", id, err)
	}
	if by.Valid {
		r.createdBy = &by.Int64
	}
	return r, nil
}

func versionsOf(ctx context.Context, q sqldb.Querier, pkg int64) ([]VersionView, error) {
	rows, err := q.QueryContext(ctx, `SELECT version, files, size, created_at FROM interactive_versions
		WHERE package_id = $1 ORDER BY version`, pkg)
	if err != nil {
		return nil, fmt.Errorf("interactive: list versions of %d: %w", pkg, err)
	}
	defer rows.Close()
	out := []VersionView{}
	for rows.Next() {
		var v VersionView
		if err := rows.Scan(&v.Version, &v.Files, &v.Size, &v.CreatedAt); err != nil {
			return nil, err
		}
		v.CreatedAt = v.CreatedAt.UTC()
		out = append(out, v)
	}
	return out, rows.Err()
}

// record adds a package (pkg 0) or its next version. The version number
// is taken in the transaction that raises current_version, so two uploads
// at once get two numbers.
func record(ctx context.Context, t *platform.Tenant, now time.Time, pkg int64, uploader *int64, title, manifest, prefix string,
	files int, size int64) (Version, error) {
	v := Version{Package: pkg, Prefix: prefix}
	err := t.Tx(ctx, func(tx *sqldb.Tx) error {
		if pkg == 0 {
			v.Version = 1
			if err := tx.QueryRowContext(ctx, `INSERT INTO interactive_packages (title, current_version, created_by, created_at, updated_at)
				VALUES ($1, 1, $2, $3, $3) RETURNING id`, title, uploader, now).Scan(&v.Package); err != nil {
				return fmt.Errorf("interactive: insert package: %w", err)
			}
		} else {
			err := tx.QueryRowContext(ctx, `UPDATE interactive_packages SET current_version = current_version + 1, title = $2, updated_at = $3
				WHERE id = $1 RETURNING current_version`, pkg, title, now).Scan(&v.Version)
			if sqldb.NotFound(err) {
				return apperr.New(apperr.NotFound, "Package not found.")
			}
			if err != nil {
				return fmt.Errorf("interactive: next version of %d: %w", pkg, err)
			}
		}
		v.Current = v.Version
		_, err := tx.ExecContext(ctx, `INSERT INTO interactive_versions (package_id, version, manifest, prefix, files, size, created_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7)`, v.Package, v.Version, manifest, prefix, files, size, now)
		if sqldb.IsUniqueViolation(err) {
			return apperr.New(apperr.Conflict, "Another version of this package was uploaded at the same time; try again.")
		}
		return err
	})
	return v, err
}

// progress is a learner's activity in a topic as the app reported it.
type progress struct {
	Steps       []string
	AppComplete bool
	Score       *int
}

func loadProgress(ctx context.Context, q sqldb.Querier, topicID, userID int64) (progress, error) {
	var p progress
	var steps string
	var score sql.NullInt64
	err := q.QueryRowContext(ctx, `SELECT steps, app_complete, score FROM interactive_progress WHERE topic_id = $1 AND user_id = $2`,
		topicID, userID).Scan(&steps, &p.AppComplete, &score)
	if sqldb.NotFound(err) {
		return progress{Steps: []string{}}, nil
	}
	if err != nil {
		return p, fmt.Errorf("interactive: load progress: %w", err)
	}
	if err := json.Unmarshal([]byte(steps), &p.Steps); err != nil {
		return p, fmt.Errorf("interactive: parse progress steps: %w", err)
	}
	if score.Valid {
		n := int(score.Int64)
		p.Score = &n
	}
	return p, nil
}

func saveProgress(ctx context.Context, q sqldb.Querier, now time.Time, topicID, userID int64, p progress) error {
	steps, err := json.Marshal(p.Steps)
	if err != nil {
		return err
	}
	_, err = q.ExecContext(ctx, `INSERT INTO interactive_progress (topic_id, user_id, steps, app_complete, score, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6)
		ON CONFLICT (topic_id, user_id) DO UPDATE SET steps = excluded.steps, app_complete = excluded.app_complete,
			score = excluded.score, updated_at = excluded.updated_at`, topicID, userID, string(steps), p.AppComplete, p.Score, now)
	if err != nil {
		return fmt.Errorf("interactive: save progress: %w", err)
	}
	return nil
}

// maxReports is how many CSP reports a tenant keeps; older ones go.
const maxReports = 1000

func addReport(ctx context.Context, t *platform.Tenant, now time.Time, r CSPReport) error {
	return t.Tx(ctx, func(tx *sqldb.Tx) error {
		if _, err := tx.ExecContext(ctx, `INSERT INTO csp_reports (topic_id, document_uri, blocked_uri, directive, created_at)
			VALUES ($1, $2, $3, $4, $5)`, r.TopicID, r.DocumentURI, r.BlockedURI, r.Directive, now); err != nil {
			return fmt.Errorf("interactive: store csp report: %w", err)
		}
		_, err := tx.ExecContext(ctx, `DELETE FROM csp_reports WHERE id <= (SELECT id FROM csp_reports ORDER BY id DESC LIMIT 1 OFFSET $1)`, maxReports)
		return err
	})
}

func listReports(ctx context.Context, q sqldb.Querier, topicID int64, offset, limit int) ([]CSPReport, int64, error) {
	var total int64
	if err := q.QueryRowContext(ctx, `SELECT COUNT(*) FROM csp_reports WHERE topic_id = $1`, topicID).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("interactive: count csp reports: %w", err)
	}
	rows, err := q.QueryContext(ctx, `SELECT topic_id, document_uri, blocked_uri, directive, created_at FROM csp_reports
		WHERE topic_id = $1 ORDER BY id DESC LIMIT $2 OFFSET $3`, topicID, limit, offset)
	if err != nil {
		return nil, 0, fmt.Errorf("interactive: list csp reports: %w", err)
	}
	defer rows.Close()
	out := []CSPReport{}
	for rows.Next() {
		var r CSPReport
		var topic sql.NullInt64
		if err := rows.Scan(&topic, &r.DocumentURI, &r.BlockedURI, &r.Directive, &r.CreatedAt); err != nil {
			return nil, 0, err
		}
		if topic.Valid {
			r.TopicID = &topic.Int64
		}
		r.CreatedAt = r.CreatedAt.UTC()
		out = append(out, r)
	}
	return out, total, rows.Err()
}
