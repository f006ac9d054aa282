package h5pstore

import (
	"archive/zip"
	"context"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/lms-platform/lms/internal/blob"
	"github.com/lms-platform/lms/internal/platform"
)

// Package writes the content as an .h5p archive: h5p.json (the metadata),
// content/content.json, the content files, and every library the content
// uses with its files. Uploading it again gives the same content.
func (s *Store) Package(ctx context.Context, t *platform.Tenant, id int64, w io.Writer) error {
	c, err := s.Content(ctx, t, id)
	if err != nil {
		return err
	}
	libs, err := contentLibraries(ctx, t, id)
	if err != nil {
		return err
	}
	zw := zip.NewWriter(w)
	if err := writeEntry(zw, "h5p.json", strings.NewReader(string(c.Metadata))); err != nil {
		return err
	}
	if err := writeEntry(zw, "content/content.json", strings.NewReader(c.Parameters)); err != nil {
		return err
	}
	if err := copyPrefix(ctx, t, zw, contentPrefix(id), "content/"); err != nil {
		return err
	}
	for _, ref := range libs {
		if err := copyPrefix(ctx, t, zw, ref.FilesPrefix(), ref.Dir()+"/"); err != nil {
			return err
		}
	}
	if err := zw.Close(); err != nil {
		return fmt.Errorf("h5pstore: package content %d: %w", id, err)
	}
	return nil
}

// contentLibraries lists the installed versions of the libraries a content
// uses, with everything they depend on now (a library may have gained a
// dependency in a patch update since the content was saved), by folder.
func contentLibraries(ctx context.Context, t *platform.Tenant, id int64) ([]LibraryRef, error) {
	rows, err := t.DB.QueryContext(ctx, `SELECT library_id, dependency_type FROM h5p_content_libraries
		WHERE content_id = $1`, id)
	if err != nil {
		return nil, fmt.Errorf("h5pstore: content libraries: %w", err)
	}
	types := map[int64]string{}
	var queue []int64
	for rows.Next() {
		var lid int64
		var typ string
		if err := rows.Scan(&lid, &typ); err != nil {
			rows.Close()
			return nil, fmt.Errorf("h5pstore: content libraries: %w", err)
		}
		types[lid] = typ
		queue = append(queue, lid)
	}
	rows.Close()
	if err := closure(ctx, t.DB, queue, types); err != nil {
		return nil, err
	}
	var refs []LibraryRef
	for lid := range types {
		var r LibraryRef
		if err := t.DB.QueryRowContext(ctx, `SELECT machine_name, major_version, minor_version, patch_version
			FROM h5p_libraries WHERE id = $1`, lid).Scan(&r.MachineName, &r.Major, &r.Minor, &r.Patch); err != nil {
			return nil, fmt.Errorf("h5pstore: content library %d: %w", lid, err)
		}
		refs = append(refs, r)
	}
	sort.Slice(refs, func(i, j int) bool { return refs[i].Dir() < refs[j].Dir() })
	return refs, nil
}

func writeEntry(zw *zip.Writer, name string, r io.Reader) error {
	fw, err := zw.Create(name)
	if err != nil {
		return fmt.Errorf("h5pstore: package %s: %w", name, err)
	}
	if _, err := io.Copy(fw, r); err != nil {
		return fmt.Errorf("h5pstore: package %s: %w", name, err)
	}
	return nil
}

// copyPrefix writes every object under prefix into the archive, renamed
// from prefix to dir.
func copyPrefix(ctx context.Context, t *platform.Tenant, zw *zip.Writer, prefix, dir string) error {
	var keys []string
	if err := t.Blob.List(ctx, prefix, func(i blob.Info) error {
		keys = append(keys, i.Key)
		return nil
	}); err != nil {
		return fmt.Errorf("h5pstore: list %s: %w", prefix, err)
	}
	sort.Strings(keys)
	for _, k := range keys {
		r, _, err := t.Blob.Get(ctx, k)
		if err != nil {
			return fmt.Errorf("h5pstore: read %s: %w", k, err)
		}
		err = writeEntry(zw, dir+strings.TrimPrefix(k, prefix), r)
		r.Close()
		if err != nil {
			return err
		}
	}
	return nil
}
