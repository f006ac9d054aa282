package h5pstore

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/lms-platform/lms/internal/apperr"
	"github.com/lms-platform/lms/internal/platform"
	"github.com/lms-platform/lms/internal/sqldb"
)

// UserData is a state the H5P player saved for a content, a user, a data
// type, a sub-content (0: none) and a context ("": none).
type UserData struct {
	ContentID    int64
	UserID       int64
	DataType     string
	SubContentID int64
	ContextID    string
	State        string
	Preload      bool
	Invalidate   bool
	UpdatedAt    time.Time
}

// Result is the result a user reached in a content.
type Result struct {
	ContentID int64
	UserID    int64
	Score     int64
	MaxScore  int64
	// OpenedAt and FinishedAt are zero when unknown.
	OpenedAt       time.Time
	FinishedAt     time.Time
	CompletionTime int64
}

// UserDataKey names one state.
type UserDataKey struct {
	ContentID    int64
	UserID       int64
	DataType     string
	SubContentID int64
	ContextID    string
}

// UserState loads one state; found is false when none is saved.
func (s *Store) UserState(ctx context.Context, t *platform.Tenant, k UserDataKey) (UserData, bool, error) {
	d := UserData{ContentID: k.ContentID, UserID: k.UserID, DataType: k.DataType, SubContentID: k.SubContentID, ContextID: k.ContextID}
	err := t.DB.QueryRowContext(ctx, `SELECT user_state, preload, invalidate, updated_at FROM h5p_content_user_data
		WHERE content_id = $1 AND user_id = $2 AND data_type = $3 AND sub_content_id = $4 AND context_id = $5`,
		k.ContentID, k.UserID, k.DataType, k.SubContentID, k.ContextID).Scan(&d.State, &d.Preload, &d.Invalidate, &d.UpdatedAt)
	if sqldb.NotFound(err) {
		return UserData{}, false, nil
	}
	if err != nil {
		return UserData{}, false, fmt.Errorf("h5pstore: load user data: %w", err)
	}
	return d, true, nil
}

// StateTooLarge is the answer to a state over limit bytes.
func StateTooLarge(limit int64) error {
	return apperr.New(apperr.TooLarge, fmt.Sprintf("A saved state may be at most %d bytes.", limit))
}

// SaveUserState stores a state, replacing the one of the same key; a
// content that does not exist is a not-found error. A state over
// MaxStateSize is refused (TooLarge), and so is a new key once the user
// keeps MaxStates states in the content (Invalid): a player saves a few
// states per content, and without a cap a client changing the context id
// could fill the database.
func (s *Store) SaveUserState(ctx context.Context, t *platform.Tenant, d UserData) error {
	set := s.Settings()
	if int64(len(d.State)) > set.MaxStateSize {
		return StateTooLarge(set.MaxStateSize)
	}
	// Checked before the write, not within it: concurrent saves of new keys
	// by one user may pass the cap by a few, which bounds it all the same.
	var n, exists int
	err := t.DB.QueryRowContext(ctx, `SELECT COUNT(*), COUNT(CASE WHEN data_type = $3
		AND sub_content_id = $4 AND context_id = $5 THEN 1 END) FROM h5p_content_user_data
		WHERE content_id = $1 AND user_id = $2`, d.ContentID, d.UserID, d.DataType, d.SubContentID, d.ContextID).Scan(&n, &exists)
	if err != nil {
		return fmt.Errorf("h5pstore: count user data: %w", err)
	}
	if exists == 0 && n >= set.MaxStates {
		return apperr.New(apperr.Invalid, fmt.Sprintf("You keep %d saved states in this content, the most allowed; no new one is saved.", n))
	}
	d.UpdatedAt = s.now()
	return s.writeState(ctx, t, stateOp{data: d})
}

// DeleteUserState removes a state; removing an absent one is not an error.
func (s *Store) DeleteUserState(ctx context.Context, t *platform.Tenant, k UserDataKey) error {
	return s.writeState(ctx, t, stateOp{data: UserData{ContentID: k.ContentID, UserID: k.UserID,
		DataType: k.DataType, SubContentID: k.SubContentID, ContextID: k.ContextID}, delete: true})
}

// PreloadedStates lists the states of a user in a content and context
// that are marked for preloading, by sub-content and data type.
func (s *Store) PreloadedStates(ctx context.Context, t *platform.Tenant, contentID, userID int64, contextID string) ([]UserData, error) {
	rows, err := t.DB.QueryContext(ctx, `SELECT data_type, sub_content_id, user_state, invalidate, updated_at
		FROM h5p_content_user_data WHERE content_id = $1 AND user_id = $2 AND context_id = $3 AND preload = $4
		ORDER BY sub_content_id, data_type`, contentID, userID, contextID, true)
	if err != nil {
		return nil, fmt.Errorf("h5pstore: preloaded user data: %w", err)
	}
	defer rows.Close()
	var out []UserData
	for rows.Next() {
		d := UserData{ContentID: contentID, UserID: userID, ContextID: contextID, Preload: true}
		if err := rows.Scan(&d.DataType, &d.SubContentID, &d.State, &d.Invalidate, &d.UpdatedAt); err != nil {
			return nil, fmt.Errorf("h5pstore: preloaded user data: %w", err)
		}
		out = append(out, d)
	}
	return out, rows.Err()
}

// SaveResult stores the result of a user in a content, replacing the
// previous one; a content that does not exist is a not-found error.
func (s *Store) SaveResult(ctx context.Context, t *platform.Tenant, r Result) error {
	_, err := t.DB.ExecContext(ctx, `INSERT INTO h5p_results (content_id, user_id, score, max_score,
		opened_at, finished_at, completion_time) VALUES ($1, $2, $3, $4, $5, $6, $7)
		ON CONFLICT (content_id, user_id) DO UPDATE SET score = excluded.score,
		max_score = excluded.max_score, opened_at = excluded.opened_at,
		finished_at = excluded.finished_at, completion_time = excluded.completion_time`,
		r.ContentID, r.UserID, r.Score, r.MaxScore, nullTime(r.OpenedAt), nullTime(r.FinishedAt), r.CompletionTime)
	if sqldb.IsForeignKeyViolation(err) {
		return errContentNotFound
	}
	if err != nil {
		return fmt.Errorf("h5pstore: save result: %w", err)
	}
	return nil
}

// Result loads the result of a user in a content; found is false when
// there is none.
func (s *Store) Result(ctx context.Context, t *platform.Tenant, contentID, userID int64) (Result, bool, error) {
	r := Result{ContentID: contentID, UserID: userID}
	var opened, finished sql.NullTime
	err := t.DB.QueryRowContext(ctx, `SELECT score, max_score, opened_at, finished_at, completion_time
		FROM h5p_results WHERE content_id = $1 AND user_id = $2`, contentID, userID).
		Scan(&r.Score, &r.MaxScore, &opened, &finished, &r.CompletionTime)
	if sqldb.NotFound(err) {
		return Result{}, false, nil
	}
	if err != nil {
		return Result{}, false, fmt.Errorf("h5pstore: load result: %w", err)
	}
	if opened.Valid {
		r.OpenedAt = opened.Time.UTC()
	}
	if finished.Valid {
		r.FinishedAt = finished.Time.UTC()
	}
	return r, true, nil
}

func nullTime(v time.Time) sql.NullTime {
	if v.IsZero() {
		return sql.NullTime{}
	}
	return sql.NullTime{Time: v.UTC(), Valid: true}
}
