package h5pstore

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/lms-platform/lms/internal/h5p/h5ppackage"
	"github.com/lms-platform/lms/internal/platform"
	"github.com/lms-platform/lms/internal/sqldb"
)

// Asset is a preloaded JS or CSS file of a library: the library's folder
// ("H5P.Foo-1.2") and the file's path in it.
type Asset struct {
	Dir  string
	Path string
}

// PlayerAssets lists the preloaded scripts and styles the player loads for
// a content: those of the content's main library, of the libraries its
// parameters name, and of everything they preload, each library after the
// libraries it depends on.
func (s *Store) PlayerAssets(ctx context.Context, t *platform.Tenant, contentID int64) (scripts, styles []Asset, err error) {
	q := t.DB
	roots, err := sqldb.Column[int64](q.QueryContext(ctx, `SELECT library_id FROM h5p_content_libraries
		WHERE content_id = $1 AND dependency_type = $2 ORDER BY library_id`, contentID, Preloaded))
	if err != nil {
		return nil, nil, fmt.Errorf("h5pstore: content libraries: %w", err)
	}
	var main int64
	if err := q.QueryRowContext(ctx, `SELECT library_id FROM h5p_contents WHERE id = $1`, contentID).Scan(&main); err != nil {
		return nil, nil, fmt.Errorf("h5pstore: content library: %w", err)
	}
	// The main library comes first among the roots so that its order wins.
	roots = append([]int64{main}, roots...)

	state := map[int64]int{} // 1: being visited, 2: listed
	var visit func(id int64) error
	visit = func(id int64) error {
		if state[id] != 0 {
			return nil
		}
		state[id] = 1
		lib, err := scanLibrary(q.QueryRowContext(ctx, `SELECT `+libraryColumns+` FROM h5p_libraries WHERE id = $1`, id))
		if err != nil {
			return fmt.Errorf("h5pstore: load library %d: %w", id, err)
		}
		var j h5ppackage.LibraryJSON
		if err := json.Unmarshal(lib.JSON, &j); err != nil {
			return fmt.Errorf("h5pstore: library.json of %s: %w", lib.Ref().Dir(), err)
		}
		// Dependencies in the order library.json declares them.
		for _, d := range j.PreloadedDependencies {
			dep, found, err := findLibrary(ctx, q, d.MachineName, d.MajorVersion, d.MinorVersion)
			if err != nil {
				return err
			}
			if found {
				if err := visit(dep.ID); err != nil {
					return err
				}
			}
		}
		state[id] = 2
		dir := lib.Ref().Dir()
		for _, p := range j.PreloadedJS {
			scripts = append(scripts, Asset{Dir: dir, Path: p.Path})
		}
		for _, p := range j.PreloadedCSS {
			styles = append(styles, Asset{Dir: dir, Path: p.Path})
		}
		return nil
	}
	for _, id := range roots {
		if err := visit(id); err != nil {
			return nil, nil, err
		}
	}
	return scripts, styles, nil
}
