package h5pstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path"
	"strings"
	"time"

	"github.com/lms-platform/lms/internal/apperr"
	"github.com/lms-platform/lms/internal/blob"
	"github.com/lms-platform/lms/internal/platform"
	"github.com/lms-platform/lms/internal/sqldb"
)

// TempPrefix is the blob prefix of the editor's temporary uploads:
// h5p/temp/<random>/<name>. Their rows in h5p_temp_files hold the path
// below the prefix.
const TempPrefix = "h5p/temp/"

// TempSuffix marks a parameter path that names a temporary file.
const TempSuffix = "#tmp"

// SaveTempFile stores an editor upload for userID and records it; path is
// "<random>/<name>", relative to TempPrefix.
func (s *Store) SaveTempFile(ctx context.Context, t *platform.Tenant, userID int64, name string, r io.Reader, size int64, ct string) (string, error) {
	p := randomSuffix() + "/" + name
	if err := t.Blob.Put(ctx, TempPrefix+p, r, size, ct); err != nil {
		if errors.Is(err, blob.ErrInvalidKey) {
			return "", apperr.Field("file", "The file name is not allowed.")
		}
		return "", fmt.Errorf("h5pstore: store temporary file: %w", err)
	}
	if _, err := t.DB.ExecContext(ctx, `INSERT INTO h5p_temp_files (path, user_id, created_at) VALUES ($1, $2, $3)`,
		p, userID, s.now()); err != nil {
		_ = t.Blob.Delete(background(ctx), TempPrefix+p)
		return "", fmt.Errorf("h5pstore: record temporary file: %w", err)
	}
	return p, nil
}

// TempFileOwner returns the uploader of a temporary file; found is false
// when there is none at path.
func (s *Store) TempFileOwner(ctx context.Context, t *platform.Tenant, p string) (userID int64, found bool, err error) {
	err = t.DB.QueryRowContext(ctx, `SELECT user_id FROM h5p_temp_files WHERE path = $1`, p).Scan(&userID)
	if sqldb.NotFound(err) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, fmt.Errorf("h5pstore: load temporary file: %w", err)
	}
	return userID, true, nil
}

// SweepTempFiles deletes the temporary files (blobs and rows) created
// before cutoff and returns how many it deleted.
func (s *Store) SweepTempFiles(ctx context.Context, t *platform.Tenant, cutoff time.Time) (int, error) {
	rows, err := t.DB.QueryContext(ctx, `SELECT id, path FROM h5p_temp_files WHERE created_at < $1`, cutoff.UTC())
	if err != nil {
		return 0, fmt.Errorf("h5pstore: list temporary files: %w", err)
	}
	type temp struct {
		id int64
		p  string
	}
	var list []temp
	for rows.Next() {
		var x temp
		if err := rows.Scan(&x.id, &x.p); err != nil {
			rows.Close()
			return 0, fmt.Errorf("h5pstore: list temporary files: %w", err)
		}
		list = append(list, x)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, fmt.Errorf("h5pstore: list temporary files: %w", err)
	}
	n := 0
	for _, x := range list {
		if err := t.Blob.Delete(ctx, TempPrefix+x.p); err != nil {
			return n, fmt.Errorf("h5pstore: delete temporary file %s: %w", x.p, err)
		}
		if _, err := t.DB.ExecContext(ctx, `DELETE FROM h5p_temp_files WHERE id = $1`, x.id); err != nil {
			return n, fmt.Errorf("h5pstore: delete temporary file %s: %w", x.p, err)
		}
		n++
	}
	return n, nil
}

// PromoteTempFiles moves every temporary file the parameters name (a
// "path" ending in "#tmp") into the content's folder, rewrites the path to
// the content-relative one and forgets the temporary file. The parameters
// come back unchanged when they name no temporary file.
func PromoteTempFiles(ctx context.Context, t *platform.Tenant, contentID int64, params json.RawMessage) (json.RawMessage, error) {
	var v any
	if err := json.Unmarshal(params, &v); err != nil {
		return nil, apperr.Field("params", "Must be a JSON object.")
	}
	moved := map[string]string{}
	var walk func(v any) error
	walk = func(v any) error {
		switch x := v.(type) {
		case map[string]any:
			if p, ok := x["path"].(string); ok && strings.HasSuffix(p, TempSuffix) {
				np, err := promoteOne(ctx, t, contentID, strings.TrimSuffix(p, TempSuffix), moved)
				if err != nil {
					return err
				}
				x["path"] = np
			}
			for _, c := range x {
				if err := walk(c); err != nil {
					return err
				}
			}
		case []any:
			for _, c := range x {
				if err := walk(c); err != nil {
					return err
				}
			}
		}
		return nil
	}
	if err := walk(v); err != nil {
		return nil, err
	}
	if len(moved) == 0 {
		return params, nil
	}
	out, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("h5pstore: encode parameters: %w", err)
	}
	return out, nil
}

// promoteOne moves the temporary file at p (relative to TempPrefix) to
// h5p/content/<id>/<kind>/<random>-<name> and returns the new path.
func promoteOne(ctx context.Context, t *platform.Tenant, contentID int64, p string, moved map[string]string) (string, error) {
	if np, ok := moved[p]; ok {
		return np, nil
	}
	var id int64
	err := t.DB.QueryRowContext(ctx, `SELECT id FROM h5p_temp_files WHERE path = $1`, p).Scan(&id)
	if sqldb.NotFound(err) {
		return "", apperr.Field("params", fmt.Sprintf("The temporary file %q does not exist (any more); upload it again.", p))
	}
	if err != nil {
		return "", fmt.Errorf("h5pstore: load temporary file: %w", err)
	}
	dir, name := path.Split(p)
	np := tempKind(name) + "/" + strings.TrimSuffix(dir, "/") + "-" + name
	if err := copyBlob(ctx, t, TempPrefix+p, contentPrefix(contentID)+np); err != nil {
		return "", err
	}
	if err := t.Blob.Delete(ctx, TempPrefix+p); err != nil {
		return "", fmt.Errorf("h5pstore: delete temporary file %s: %w", p, err)
	}
	if _, err := t.DB.ExecContext(ctx, `DELETE FROM h5p_temp_files WHERE id = $1`, id); err != nil {
		return "", fmt.Errorf("h5pstore: delete temporary file %s: %w", p, err)
	}
	moved[p] = np
	return np, nil
}

// tempKind is the content folder of a file, as H5P names them.
func tempKind(name string) string {
	ct := contentType(name)
	switch {
	case strings.HasPrefix(ct, "image/"):
		return "images"
	case strings.HasPrefix(ct, "video/"):
		return "videos"
	case strings.HasPrefix(ct, "audio/"):
		return "audios"
	}
	return "files"
}
