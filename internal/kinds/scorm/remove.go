package scorm

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/lms-platform/lms/internal/access"
	"github.com/lms-platform/lms/internal/apperr"
	"github.com/lms-platform/lms/internal/platform"
	"github.com/lms-platform/lms/internal/sqldb"
	"github.com/lms-platform/lms/internal/topics"
)

// DeletePackage removes an uploaded package that no topic plays: its
// files, its row, its SCOs, the tracks left on them and the learners'
// global objectives of it. Admins delete
// any package; tutors those they uploaded. While a topic plays it the
// answer is 409 with details.topics naming them.
func (s *Service) DeletePackage(ctx context.Context, t *platform.Tenant, p *access.Principal, id int64) error {
	if !CanUpload(p) {
		return errUnauthorized
	}
	err := t.Tx(ctx, func(tx *sqldb.Tx) error {
		var prefix string
		var by sql.NullInt64
		err := tx.QueryRowContext(ctx, `SELECT blob_prefix, created_by FROM scorm_packages WHERE id = $1`, id).Scan(&prefix, &by)
		if errors.Is(err, sql.ErrNoRows) {
			return errPackageMissing
		}
		if err != nil {
			return fmt.Errorf("scorm: load package %d: %w", id, err)
		}
		if !p.Has(access.CourseUpdate) && (!by.Valid || by.Int64 != p.UserID) {
			return errUnauthorized
		}
		users, err := topicsPlaying(ctx, tx, id)
		if err != nil {
			return err
		}
		if len(users) > 0 {
			return &apperr.Error{Kind: apperr.Conflict, Code: "package_in_use",
				Message: fmt.Sprintf("%d topic(s) play this package; delete them or give them another package first.", len(users)),
				Details: map[string]any{"topics": users}}
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM scorm_tracks WHERE sco_id IN (SELECT id FROM scorm_scos WHERE package_id = $1)`,
			id); err != nil {
			return fmt.Errorf("scorm: delete tracks of %d: %w", id, err)
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM scorm_objectives WHERE package_id = $1`, id); err != nil {
			return fmt.Errorf("scorm: delete global objectives of %d: %w", id, err)
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM scorm_scos WHERE package_id = $1`, id); err != nil {
			return fmt.Errorf("scorm: delete scos of %d: %w", id, err)
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM scorm_packages WHERE id = $1`, id); err != nil {
			return fmt.Errorf("scorm: delete package %d: %w", id, err)
		}
		// The files go inside the transaction: when they cannot, the
		// rows stay and the delete can be tried again; when the commit
		// fails after them, the package is left without files but
		// unused, and a new try removes it.
		if err := t.Blob.DeletePrefix(ctx, prefix); err != nil {
			return fmt.Errorf("scorm: delete files of %d: %w", id, err)
		}
		return nil
	})
	forget(t, id)
	return err
}

// topicsPlaying lists the ids of the topics whose value names the package.
func topicsPlaying(ctx context.Context, q sqldb.Querier, packageID int64) ([]int64, error) {
	all, err := topics.Contents(ctx, q, Class)
	if err != nil {
		return nil, err
	}
	out := []int64{}
	for id, doc := range all {
		var v Value
		if json.Unmarshal(doc, &v) == nil && v.PackageID == packageID {
			out = append(out, id)
		}
	}
	slices.Sort(out)
	return out, nil
}
