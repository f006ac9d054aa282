package h5pstore

import (
	"context"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"

	"github.com/lms-platform/lms/internal/apperr"
	"github.com/lms-platform/lms/internal/blob"
	"github.com/lms-platform/lms/internal/h5p/h5ppackage"
	"github.com/lms-platform/lms/internal/platform"
	"github.com/lms-platform/lms/internal/sqldb"
)

const libraryColumns = `id, machine_name, major_version, minor_version, patch_version, title,
	runnable, restricted, library_json, created_at, updated_at`

func scanLibrary(row interface{ Scan(...any) error }) (Library, error) {
	var l Library
	var raw string
	err := row.Scan(&l.ID, &l.MachineName, &l.Major, &l.Minor, &l.Patch, &l.Title,
		&l.Runnable, &l.Restricted, &raw, &l.CreatedAt, &l.UpdatedAt)
	l.JSON = []byte(raw)
	return l, err
}

// findLibrary loads a library; found is false when it is not installed.
func findLibrary(ctx context.Context, q sqldb.Querier, machine string, major, minor int) (Library, bool, error) {
	l, err := scanLibrary(q.QueryRowContext(ctx, `SELECT `+libraryColumns+` FROM h5p_libraries
		WHERE machine_name = $1 AND major_version = $2 AND minor_version = $3`, machine, major, minor))
	if sqldb.NotFound(err) {
		return Library{}, false, nil
	}
	if err != nil {
		return Library{}, false, fmt.Errorf("h5pstore: load library %s: %w", libDir(machine, major, minor), err)
	}
	return l, true, nil
}

// Install installs or updates the libraries of a validated package. A
// library not installed yet is installed; one installed with a lower patch
// version is updated; the others are left alone. installed lists the
// libraries installed or updated.
//
// Without mayInstall nothing is installed: every library the content needs
// must already be installed, and an error names those that are not.
//
// Readers never see a library half written: each library's files go to the
// folder of its new patch version, which no row names yet; then one
// transaction inserts or switches the rows and records the dependencies;
// only then are the folders of the replaced patch versions deleted. The
// libraries' locks are held throughout, taken in folder-name order so that
// two installers never wait on each other.
func (s *Store) Install(ctx context.Context, t *platform.Tenant, p *h5ppackage.Package, mayInstall bool) (installed []LibraryRef, err error) {
	if !mayInstall {
		return nil, s.checkInstalled(ctx, t, p)
	}
	libs := slices.Clone(p.Libraries)
	slices.SortFunc(libs, func(a, b h5ppackage.Library) int { return strings.Compare(a.JSON.Dir(), b.JSON.Dir()) })
	for _, lib := range libs {
		dir := lib.JSON.Dir()
		unlock, err := s.Locker.Acquire(ctx, lockName(t, dir), lockTTL)
		if err != nil {
			return nil, fmt.Errorf("h5pstore: lock library %s: %w", dir, err)
		}
		defer unlock(background(ctx))
	}

	var plans []libraryPlan
	// Until the rows name them, the written folders are garbage on failure.
	committed := false
	defer func() {
		if committed {
			return
		}
		for _, pl := range plans {
			_ = t.Blob.DeletePrefix(background(ctx), pl.ref().FilesPrefix())
		}
	}()
	// The files are made durable together, once, before any row names them.
	wctx, batch := blob.WithBatch(ctx)
	for _, lib := range libs {
		pl, ok, err := s.stageLibrary(wctx, t, p, lib)
		if err != nil {
			return nil, err
		}
		if ok {
			plans = append(plans, pl)
		}
	}
	if len(plans) == 0 {
		return nil, nil
	}
	if err := batch.Flush(); err != nil {
		return nil, fmt.Errorf("h5pstore: write libraries: %w", err)
	}

	err = t.DB.Tx(ctx, func(tx *sqldb.Tx) error {
		for i := range plans {
			if err := s.switchLibrary(ctx, tx, &plans[i]); err != nil {
				return err
			}
		}
		// Dependencies are recorded once every row exists, since libraries
		// of a package may depend on each other in any order.
		for _, pl := range plans {
			if pl.skip {
				continue
			}
			if err := recordDependencies(ctx, tx, pl.json); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	committed = true
	if err := s.librariesChanged(ctx, t.ID); err != nil {
		return nil, err
	}
	for _, pl := range plans {
		switch {
		case pl.skip:
			// Another writer won. Our copy is named by no row unless the
			// winner installed this very patch version into the same folder.
			if pl.winner != pl.json.PatchVersion {
				_ = t.Blob.DeletePrefix(background(ctx), pl.ref().FilesPrefix())
			}
		default:
			installed = append(installed, pl.ref())
			if pl.found {
				// Readers that resolved the old row a moment ago may miss
				// a file now; none sees a mixture of the two versions.
				if err := t.Blob.DeletePrefix(background(ctx), pl.old.Ref().FilesPrefix()); err != nil {
					return installed, fmt.Errorf("h5pstore: delete old files of %s: %w", pl.json.Dir(), err)
				}
			}
		}
	}
	return installed, nil
}

// libraryPlan is one library an install writes: its library.json, the row
// it replaces (found) and whether the transaction found it already
// installed by someone else (skip, with the patch version it installed).
type libraryPlan struct {
	json    h5ppackage.LibraryJSON
	rawJSON string
	old     Library
	found   bool
	skip    bool
	winner  int
}

func (pl libraryPlan) ref() LibraryRef {
	j := pl.json
	return LibraryRef{MachineName: j.MachineName, Major: j.MajorVersion, Minor: j.MinorVersion, Patch: j.PatchVersion}
}

// stageLibrary writes the files of lib to the folder of its patch version
// when the library is missing or installed with a lower patch version; ok
// is false when there is nothing to do. On failure the folder is removed.
func (s *Store) stageLibrary(ctx context.Context, t *platform.Tenant, p *h5ppackage.Package, lib h5ppackage.Library) (pl libraryPlan, ok bool, err error) {
	j := lib.JSON
	dir := j.Dir()
	old, found, err := findLibrary(ctx, t.DB, j.MachineName, j.MajorVersion, j.MinorVersion)
	if err != nil {
		return libraryPlan{}, false, err
	}
	if found && old.Patch >= j.PatchVersion {
		return libraryPlan{}, false, nil
	}
	raw, err := compactJSON(lib.Raw, "library.json")
	if err != nil {
		return libraryPlan{}, false, fmt.Errorf("h5pstore: library %s: library.json: %w", dir, err)
	}
	pl = libraryPlan{json: j, rawJSON: raw, old: old, found: found}
	prefix := pl.ref().FilesPrefix()
	// No row names this folder (its patch version is newer than the
	// installed one), so whatever is there was left by a failed install.
	if err := t.Blob.DeletePrefix(ctx, prefix); err != nil {
		return libraryPlan{}, false, fmt.Errorf("h5pstore: clear library %s: %w", dir, err)
	}
	for _, f := range lib.Files {
		if err := putFromPackage(ctx, t, p, lib.Dir+"/"+f, prefix+f); err != nil {
			_ = t.Blob.DeletePrefix(background(ctx), prefix)
			return libraryPlan{}, false, fmt.Errorf("h5pstore: write library %s: %w", dir, err)
		}
	}
	return pl, true, nil
}

// switchLibrary makes the staged patch version of pl the installed one:
// it inserts the row, or moves the existing row to the new patch version.
func (s *Store) switchLibrary(ctx context.Context, tx *sqldb.Tx, pl *libraryPlan) error {
	j := pl.json
	cur, found, err := findLibrary(ctx, tx, j.MachineName, j.MajorVersion, j.MinorVersion)
	if err != nil {
		return err
	}
	if found && (!pl.found || cur.ID != pl.old.ID || cur.Patch >= j.PatchVersion) {
		// Changed since we looked, by a writer that did not hold our lock.
		pl.skip, pl.winner = true, cur.Patch
		return nil
	}
	if !found && pl.found {
		pl.found = false
	}
	now := s.now()
	if found {
		_, err = tx.ExecContext(ctx, `UPDATE h5p_libraries SET patch_version = $1, title = $2,
			runnable = $3, library_json = $4, updated_at = $5 WHERE id = $6`,
			j.PatchVersion, j.Title, bool(j.Runnable), pl.rawJSON, now, cur.ID)
	} else {
		_, err = tx.ExecContext(ctx, `INSERT INTO h5p_libraries (machine_name, major_version,
			minor_version, patch_version, title, runnable, restricted, library_json, created_at, updated_at)
			VALUES ($1, $2, $3, $4, $5, $6, FALSE, $7, $8, $8)`,
			j.MachineName, j.MajorVersion, j.MinorVersion, j.PatchVersion, j.Title, bool(j.Runnable), pl.rawJSON, now)
	}
	if err != nil {
		return fmt.Errorf("h5pstore: save library %s: %w", j.Dir(), err)
	}
	return nil
}

// checkInstalled reports the libraries the content of p needs (its
// h5p.json dependencies and their closure as the package describes it) that
// are not installed.
func (s *Store) checkInstalled(ctx context.Context, t *platform.Tenant, p *h5ppackage.Package) error {
	inPackage := map[string]h5ppackage.LibraryJSON{}
	for _, l := range p.Libraries {
		inPackage[l.JSON.Dir()] = l.JSON
	}
	installed := s.Installed(ctx, t)
	seen := map[string]bool{}
	var missing []string
	var visit func(d h5ppackage.Dependency)
	visit = func(d h5ppackage.Dependency) {
		if seen[d.Dir()] {
			return
		}
		seen[d.Dir()] = true
		if !installed(d.MachineName, d.MajorVersion, d.MinorVersion) {
			missing = append(missing, d.String())
		}
		if j, ok := inPackage[d.Dir()]; ok {
			for _, dd := range j.PreloadedDependencies {
				visit(dd)
			}
			for _, dd := range j.DynamicDependencies {
				visit(dd)
			}
		}
	}
	for _, d := range p.H5P.PreloadedDependencies {
		visit(d)
	}
	for _, d := range p.H5P.DynamicDependencies {
		visit(d)
	}
	if len(missing) == 0 {
		return nil
	}
	sort.Strings(missing)
	e := apperr.New(apperr.Invalid, "Missing libraries you may not install: "+strings.Join(missing, ", ")+".")
	e.Fields = map[string][]string{"h5p_file": missing}
	e.Code = h5ppackage.CodeMissingDependency
	return e
}

// putFromPackage stores the package file name at key, refusing (and
// removing) an entry whose data does not match its header.
func putFromPackage(ctx context.Context, t *platform.Tenant, p *h5ppackage.Package, name, key string) error {
	stored := false
	err := p.Store(name, func(r io.Reader, size int64) error {
		if err := t.Blob.Put(ctx, key, r, size, contentType(name)); err != nil {
			return err
		}
		stored = true
		return nil
	})
	if err != nil && stored {
		_ = t.Blob.Delete(background(ctx), key)
	}
	return err
}

func copyBlob(ctx context.Context, t *platform.Tenant, from, to string) error {
	r, info, err := t.Blob.Get(ctx, from)
	if err != nil {
		return err
	}
	defer r.Close()
	return t.Blob.Put(ctx, to, r, info.Size, info.ContentType)
}

// recordDependencies replaces the dependency rows of an installed library
// within the install's transaction.
func recordDependencies(ctx context.Context, tx *sqldb.Tx, j h5ppackage.LibraryJSON) error {
	self, found, err := findLibrary(ctx, tx, j.MachineName, j.MajorVersion, j.MinorVersion)
	if err != nil || !found {
		return err
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM h5p_library_dependencies WHERE library_id = $1`, self.ID); err != nil {
		return fmt.Errorf("h5pstore: clear dependencies of %s: %w", j.Dir(), err)
	}
	groups := []struct {
		kind string
		deps []h5ppackage.Dependency
	}{{Preloaded, j.PreloadedDependencies}, {Dynamic, j.DynamicDependencies}, {Editor, j.EditorDependencies}}
	for _, g := range groups {
		for _, d := range g.deps {
			req, found, err := findLibrary(ctx, tx, d.MachineName, d.MajorVersion, d.MinorVersion)
			if err != nil {
				return err
			}
			if !found {
				return apperr.New(apperr.Invalid, fmt.Sprintf("Library %s needs %s, which is not installed.", j.Dir(), d))
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO h5p_library_dependencies
				(library_id, required_library_id, dependency_type) VALUES ($1, $2, $3)
				ON CONFLICT DO NOTHING`, self.ID, req.ID, g.kind); err != nil {
				return fmt.Errorf("h5pstore: record dependency of %s: %w", j.Dir(), err)
			}
		}
	}
	return nil
}

// Installed returns a snapshot of the tenant's installed libraries in the
// form h5ppackage.Options.Installed takes. When they cannot be read it
// reports nothing installed, so validation fails safe.
func (s *Store) Installed(ctx context.Context, t *platform.Tenant) func(machine string, major, minor int) bool {
	set := map[string]bool{}
	rows, err := t.DB.QueryContext(ctx, `SELECT machine_name, major_version, minor_version FROM h5p_libraries`)
	if err == nil {
		defer rows.Close()
		for rows.Next() {
			var m string
			var maj, min int
			if rows.Scan(&m, &maj, &min) == nil {
				set[libDir(m, maj, min)] = true
			}
		}
	}
	return func(machine string, major, minor int) bool { return set[libDir(machine, major, minor)] }
}

// Libraries lists the installed libraries by name and version.
func (s *Store) Libraries(ctx context.Context, t *platform.Tenant) ([]Library, error) {
	rows, err := t.DB.QueryContext(ctx, `SELECT `+libraryColumns+` FROM h5p_libraries
		ORDER BY machine_name, major_version, minor_version`)
	if err != nil {
		return nil, fmt.Errorf("h5pstore: list libraries: %w", err)
	}
	defer rows.Close()
	var out []Library
	for rows.Next() {
		l, err := scanLibrary(rows)
		if err != nil {
			return nil, fmt.Errorf("h5pstore: list libraries: %w", err)
		}
		out = append(out, l)
	}
	return out, rows.Err()
}

// Library loads one installed library.
func (s *Store) Library(ctx context.Context, t *platform.Tenant, machine string, major, minor int) (Library, error) {
	l, found, err := findLibrary(ctx, t.DB, machine, major, minor)
	if err == nil && !found {
		err = apperr.New(apperr.NotFound, "Library not found.")
	}
	return l, err
}

// LibraryFilesPrefix is the blob folder holding the files of the installed
// patch version of a library; NotFound when it is not installed.
func (s *Store) LibraryFilesPrefix(ctx context.Context, t *platform.Tenant, machine string, major, minor int) (string, error) {
	var patch int
	err := t.DB.QueryRowContext(ctx, `SELECT patch_version FROM h5p_libraries
		WHERE machine_name = $1 AND major_version = $2 AND minor_version = $3`, machine, major, minor).Scan(&patch)
	if sqldb.NotFound(err) {
		return "", apperr.New(apperr.NotFound, "Library not found.")
	}
	if err != nil {
		return "", fmt.Errorf("h5pstore: load library %s: %w", libDir(machine, major, minor), err)
	}
	return LibraryRef{MachineName: machine, Major: major, Minor: minor, Patch: patch}.FilesPrefix(), nil
}

// SetRestricted marks a library as restricted (only users allowed to use
// restricted libraries may create content with it) or not.
func (s *Store) SetRestricted(ctx context.Context, t *platform.Tenant, machine string, major, minor int, restricted bool) (Library, error) {
	res, err := t.DB.ExecContext(ctx, `UPDATE h5p_libraries SET restricted = $1, updated_at = $2
		WHERE machine_name = $3 AND major_version = $4 AND minor_version = $5`,
		restricted, s.now(), machine, major, minor)
	if err != nil {
		return Library{}, fmt.Errorf("h5pstore: restrict library: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return Library{}, apperr.New(apperr.NotFound, "Library not found.")
	}
	return s.Library(ctx, t, machine, major, minor)
}

// DeleteLibrary removes a library and its files. It is refused while a
// content or another library depends on it.
func (s *Store) DeleteLibrary(ctx context.Context, t *platform.Tenant, machine string, major, minor int) error {
	dir := libDir(machine, major, minor)
	unlock, err := s.Locker.Acquire(ctx, lockName(t, dir), lockTTL)
	if err != nil {
		return fmt.Errorf("h5pstore: lock library %s: %w", dir, err)
	}
	defer unlock(background(ctx))
	err = t.DB.Tx(ctx, func(tx *sqldb.Tx) error {
		l, found, err := findLibrary(ctx, tx, machine, major, minor)
		if err != nil {
			return err
		}
		if !found {
			return apperr.New(apperr.NotFound, "Library not found.")
		}
		var contents, libraries int
		if err := tx.QueryRowContext(ctx, `SELECT
			(SELECT COUNT(DISTINCT content_id) FROM h5p_content_libraries WHERE library_id = $1)
			+ (SELECT COUNT(*) FROM h5p_contents WHERE library_id = $1 AND id NOT IN
				(SELECT content_id FROM h5p_content_libraries WHERE library_id = $1)),
			(SELECT COUNT(DISTINCT library_id) FROM h5p_library_dependencies
				WHERE required_library_id = $1 AND library_id <> $1)`, l.ID).Scan(&contents, &libraries); err != nil {
			return fmt.Errorf("h5pstore: usage of library %s: %w", dir, err)
		}
		if contents > 0 || libraries > 0 {
			return apperr.New(apperr.Conflict, fmt.Sprintf(
				"Library %s %d.%d is in use by %d contents and %d libraries; it cannot be deleted.",
				machine, major, minor, contents, libraries))
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM h5p_library_dependencies WHERE required_library_id = $1`, l.ID); err != nil {
			return fmt.Errorf("h5pstore: delete library %s: %w", dir, err)
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM h5p_libraries WHERE id = $1`, l.ID); err != nil {
			return fmt.Errorf("h5pstore: delete library %s: %w", dir, err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	// Every patch version's folder, including any a failed install left.
	if err := t.Blob.DeletePrefix(ctx, libraryPrefix(dir)); err != nil {
		return fmt.Errorf("h5pstore: delete files of library %s: %w", dir, err)
	}
	return nil
}
