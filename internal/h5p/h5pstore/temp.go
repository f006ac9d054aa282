package h5pstore

import (
	"bytes"
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
	"github.com/lms-platform/lms/internal/h5p/h5ppackage"
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

// Promotion moves the temporary files that content parameters name (a
// "path" ending in "#tmp") into the content's folder, in steps a save can
// undo: PrepareTempFiles checks every file before anything changes, Apply
// copies them into the content and rewrites the paths, and only once the
// content is saved does Commit forget the temporary files; Abort removes
// the copies of a save that failed.
type Promotion struct {
	t      *platform.Tenant
	params any
	// temps are the temporary files named, by path below TempPrefix.
	temps map[string]int64
	// copied are the content keys Apply wrote.
	copied []string
}

// PrepareTempFiles finds the temporary files params names and checks that
// each exists and was uploaded by userID; the error names the first path
// that is not. Parameters that are not a JSON object are refused.
func (s *Store) PrepareTempFiles(ctx context.Context, t *platform.Tenant, userID int64, params json.RawMessage) (*Promotion, error) {
	pr := &Promotion{t: t, temps: map[string]int64{}}
	if !bytes.Contains(params, []byte(TempSuffix)) {
		// Nothing to move: the parameters, which may be megabytes, are not
		// decoded; saving them checks they are an object.
		return pr, nil
	}
	if err := json.Unmarshal(params, &pr.params); err != nil {
		return nil, apperr.Field("params", "Must be a JSON object.")
	}
	var paths []string
	walkTempPaths(pr.params, func(_ map[string]any, p string) {
		if _, seen := pr.temps[p]; !seen {
			pr.temps[p] = 0
			paths = append(paths, p)
		}
	})
	for _, p := range paths {
		var id, owner int64
		err := t.DB.QueryRowContext(ctx, `SELECT id, user_id FROM h5p_temp_files WHERE path = $1`, p).Scan(&id, &owner)
		if sqldb.NotFound(err) {
			return nil, errTempMissing(p)
		}
		if err != nil {
			return nil, fmt.Errorf("h5pstore: load temporary file: %w", err)
		}
		if owner != userID {
			// Said apart from a missing file, yet without telling whose it is.
			return nil, apperr.Field("params", fmt.Sprintf("The temporary file %q was not uploaded by you; upload it again.", p))
		}
		pr.temps[p] = id
	}
	return pr, nil
}

func errTempMissing(p string) error {
	return apperr.Field("params", fmt.Sprintf("The temporary file %q does not exist (any more); upload it again.", p))
}

// walkTempPaths calls fn for each object of v whose "path" names a
// temporary file, with the path below TempPrefix.
func walkTempPaths(v any, fn func(obj map[string]any, p string)) {
	walkPaths(v, func(obj map[string]any, p string) {
		if strings.HasSuffix(p, TempSuffix) {
			fn(obj, strings.TrimSuffix(p, TempSuffix))
		}
	})
}

// walkPaths calls fn for each object of v that has a string "path".
func walkPaths(v any, fn func(obj map[string]any, p string)) {
	switch x := v.(type) {
	case map[string]any:
		if p, ok := x["path"].(string); ok {
			fn(x, p)
		}
		for _, c := range x {
			walkPaths(c, fn)
		}
	case []any:
		for _, c := range x {
			walkPaths(c, fn)
		}
	}
}

// SavePackageTempFiles stores the content files of a validated package as
// temporary files of userID, as if the editor had uploaded them, and
// returns the package's content parameters with every "path" that names
// one of them rewritten to its temporary path (with TempSuffix), so that
// saving the parameters moves the files into the content. On failure the
// files stored so far are removed.
func (s *Store) SavePackageTempFiles(ctx context.Context, t *platform.Tenant, userID int64, p *h5ppackage.Package) (json.RawMessage, error) {
	if len(p.ContentFiles) == 0 {
		// No path to rewrite: the parameters, which may be megabytes, are
		// not decoded.
		return p.Content, nil
	}
	var params any
	if err := json.Unmarshal(p.Content, &params); err != nil {
		return nil, fmt.Errorf("h5pstore: content.json: %w", err)
	}
	temps := map[string]string{}
	var saved []string
	for _, f := range p.ContentFiles {
		tp, err := s.savePackageTempFile(ctx, t, userID, p, f)
		if err != nil {
			s.deleteTempFiles(background(ctx), t, saved)
			return nil, err
		}
		temps[f] = tp
		saved = append(saved, tp)
	}
	walkPaths(params, func(obj map[string]any, f string) {
		if tp, ok := temps[f]; ok {
			obj["path"] = tp + TempSuffix
		}
	})
	out, err := json.Marshal(params)
	if err != nil {
		s.deleteTempFiles(background(ctx), t, saved)
		return nil, fmt.Errorf("h5pstore: encode parameters: %w", err)
	}
	return out, nil
}

// savePackageTempFile stores the content file f (relative to content/) of
// p as a temporary file and returns its path below TempPrefix.
func (s *Store) savePackageTempFile(ctx context.Context, t *platform.Tenant, userID int64, p *h5ppackage.Package, f string) (string, error) {
	name := "content/" + f
	var temp string
	err := p.Store(name, func(r io.Reader, size int64) error {
		var err error
		temp, err = s.SaveTempFile(ctx, t, userID, path.Base(f), r, size, contentType(f))
		return err
	})
	if err != nil {
		if temp != "" {
			s.deleteTempFiles(background(ctx), t, []string{temp})
		}
		return "", err
	}
	return temp, nil
}

// deleteTempFiles removes temporary files (blobs and rows) by path below
// TempPrefix; what it cannot remove is left to the sweep.
func (s *Store) deleteTempFiles(ctx context.Context, t *platform.Tenant, paths []string) {
	for _, p := range paths {
		if t.Blob.Delete(ctx, TempPrefix+p) == nil {
			_, _ = t.DB.ExecContext(ctx, `DELETE FROM h5p_temp_files WHERE path = $1`, p)
		}
	}
}

// Changed reports whether the parameters name any temporary file.
func (pr *Promotion) Changed() bool { return len(pr.temps) > 0 }

// Apply copies the temporary files into the folder of content contentID
// (h5p/content/<id>/<kind>/<random>-<name>) and returns the parameters with
// the content-relative paths. On failure it removes what it copied.
func (pr *Promotion) Apply(ctx context.Context, contentID int64) (json.RawMessage, error) {
	moved := map[string]string{}
	for p := range pr.temps {
		dir, name := path.Split(p)
		np := tempKind(name) + "/" + strings.TrimSuffix(dir, "/") + "-" + name
		key := contentPrefix(contentID) + np
		if err := copyBlob(ctx, pr.t, TempPrefix+p, key); err != nil {
			pr.Abort(background(ctx))
			if errors.Is(err, blob.ErrNotFound) {
				return nil, errTempMissing(p)
			}
			return nil, fmt.Errorf("h5pstore: copy temporary file %s: %w", p, err)
		}
		pr.copied = append(pr.copied, key)
		moved[p] = np
	}
	walkTempPaths(pr.params, func(obj map[string]any, p string) { obj["path"] = moved[p] })
	out, err := json.Marshal(pr.params)
	if err != nil {
		pr.Abort(background(ctx))
		return nil, fmt.Errorf("h5pstore: encode parameters: %w", err)
	}
	return out, nil
}

// Abort removes the copies Apply made, for a save that failed.
func (pr *Promotion) Abort(ctx context.Context) {
	for _, k := range pr.copied {
		_ = pr.t.Blob.Delete(ctx, k)
	}
	pr.copied = nil
}

// Commit forgets the temporary files once the content that took them is
// saved. A file it cannot delete is left to the sweep.
func (pr *Promotion) Commit(ctx context.Context) error {
	var first error
	for p, id := range pr.temps {
		if err := pr.t.Blob.Delete(ctx, TempPrefix+p); err != nil && first == nil {
			first = fmt.Errorf("h5pstore: delete temporary file %s: %w", p, err)
			continue
		}
		if _, err := pr.t.DB.ExecContext(ctx, `DELETE FROM h5p_temp_files WHERE id = $1`, id); err != nil && first == nil {
			first = fmt.Errorf("h5pstore: delete temporary file %s: %w", p, err)
		}
	}
	return first
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
