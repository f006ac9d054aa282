package h5pstore

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/lms-platform/lms/internal/apperr"
	"github.com/lms-platform/lms/internal/blob"
	"github.com/lms-platform/lms/internal/h5p/h5ppackage"
	"github.com/lms-platform/lms/internal/platform"
	"github.com/lms-platform/lms/internal/sqldb"
)

const contentColumns = `c.id, c.title, l.machine_name, l.major_version, l.minor_version, c.user_id,
	c.created_at, c.updated_at, c.metadata, c.parameters`

// listColumns are contentColumns without the metadata and parameters,
// which a list does not show and which may be megabytes each.
const listColumns = `c.id, c.title, l.machine_name, l.major_version, l.minor_version, c.user_id,
	c.created_at, c.updated_at, '', ''`

const contentFrom = ` FROM h5p_contents c JOIN h5p_libraries l ON l.id = c.library_id`

func scanContent(row interface{ Scan(...any) error }) (Content, error) {
	var c Content
	var major, minor int
	var meta string
	err := row.Scan(&c.ID, &c.Title, &c.MainLibrary, &major, &minor, &c.UserID,
		&c.CreatedAt, &c.UpdatedAt, &meta, &c.Parameters)
	c.LibraryVersion = fmt.Sprintf("%d.%d", major, minor)
	c.Metadata = json.RawMessage(meta)
	return c, err
}

// SaveContent stores the content of a validated package whose libraries
// are installed: its parameters, its h5p.json as metadata, and its files.
func (s *Store) SaveContent(ctx context.Context, t *platform.Tenant, p *h5ppackage.Package, userID int64) (Content, error) {
	main, ok := mainDependency(p.H5P)
	if !ok {
		return Content{}, apperr.New(apperr.Invalid, "The main library is not among the preloaded dependencies.")
	}
	meta, err := compactJSON(p.H5PRaw, "h5p.json")
	if err != nil {
		return Content{}, err
	}
	params, err := compactJSON(p.Content, "content.json")
	if err != nil {
		return Content{}, err
	}
	roots := append([]h5ppackage.Dependency{main}, p.H5P.PreloadedDependencies...)
	roots = append(roots, p.H5P.DynamicDependencies...)
	id, err := s.insertContent(ctx, t, p.H5P.Title, main, roots, userID, params, meta)
	if err != nil {
		return Content{}, err
	}
	prefix := contentPrefix(id)
	wctx, batch := blob.WithBatch(ctx)
	for _, f := range p.ContentFiles {
		if err := putFromPackage(wctx, t, p, "content/"+f, prefix+f); err != nil {
			s.DeleteContent(background(ctx), t, id)
			return Content{}, fmt.Errorf("h5pstore: save content file %s: %w", f, err)
		}
	}
	if err := batch.Flush(); err != nil {
		s.DeleteContent(background(ctx), t, id)
		return Content{}, fmt.Errorf("h5pstore: save content files: %w", err)
	}
	return s.Content(ctx, t, id)
}

// mainDependency finds the version of the main library among the
// preloaded dependencies.
func mainDependency(h h5ppackage.H5PJSON) (h5ppackage.Dependency, bool) {
	var best h5ppackage.Dependency
	found := false
	for _, d := range h.PreloadedDependencies {
		if d.MachineName != h.MainLibrary {
			continue
		}
		if !found || d.MajorVersion > best.MajorVersion || d.MajorVersion == best.MajorVersion && d.MinorVersion > best.MinorVersion {
			best, found = d, true
		}
	}
	return best, found
}

func (s *Store) insertContent(ctx context.Context, t *platform.Tenant, title string, main h5ppackage.Dependency,
	roots []h5ppackage.Dependency, userID int64, params, meta string) (int64, error) {
	var id int64
	err := t.DB.Tx(ctx, func(tx *sqldb.Tx) error {
		lib, found, err := findLibrary(ctx, tx, main.MachineName, main.MajorVersion, main.MinorVersion)
		if err != nil {
			return err
		}
		if !found {
			return apperr.New(apperr.Invalid, fmt.Sprintf("The library %s is not installed.", main))
		}
		now := s.now()
		if err := tx.QueryRowContext(ctx, `INSERT INTO h5p_contents (title, library_id, user_id,
			parameters, metadata, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $6) RETURNING id`,
			title, lib.ID, userID, params, meta, now).Scan(&id); err != nil {
			return fmt.Errorf("h5pstore: insert content: %w", err)
		}
		return linkLibraries(ctx, tx, id, roots, params)
	})
	return id, err
}

// linkLibraries replaces the content's library links with the closure of
// roots, the libraries named in params ("library": "H5P.Foo 1.2") and
// everything they depend on.
func linkLibraries(ctx context.Context, tx *sqldb.Tx, contentID int64, roots []h5ppackage.Dependency, params string) error {
	roots = append(roots, paramLibraries(params)...)
	types := map[int64]string{}
	var queue []int64
	for _, d := range roots {
		l, found, err := findLibrary(ctx, tx, d.MachineName, d.MajorVersion, d.MinorVersion)
		if err != nil {
			return err
		}
		if found && types[l.ID] == "" {
			types[l.ID] = Preloaded
			queue = append(queue, l.ID)
		}
	}
	if err := closure(ctx, tx, queue, types); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM h5p_content_libraries WHERE content_id = $1`, contentID); err != nil {
		return fmt.Errorf("h5pstore: unlink libraries: %w", err)
	}
	ids := make([]int64, 0, len(types))
	for id := range types {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	for _, id := range ids {
		if _, err := tx.ExecContext(ctx, `INSERT INTO h5p_content_libraries (content_id, library_id,
			dependency_type) VALUES ($1, $2, $3)`, contentID, id, types[id]); err != nil {
			return fmt.Errorf("h5pstore: link library: %w", err)
		}
	}
	return nil
}

// closure adds to types every library the queued ones depend on, typed
// as the player and the editor need them, as H5P's own implementations
// do: a library reached through an editor dependency is an editor
// library, and so is everything it depends on, so that an editor widget's
// own preloaded libraries (H5PEditor.TableList under H5PEditor.RangeList)
// never reach the player. A library reached several ways takes the
// strongest type: preloaded, then dynamic, then editor.
func closure(ctx context.Context, q sqldb.Querier, queue []int64, types map[int64]string) error {
	for len(queue) > 0 {
		id := queue[0]
		queue = queue[1:]
		rows, err := q.QueryContext(ctx, `SELECT required_library_id, dependency_type
			FROM h5p_library_dependencies WHERE library_id = $1 ORDER BY dependency_type, required_library_id`, id)
		if err != nil {
			return fmt.Errorf("h5pstore: library dependencies: %w", err)
		}
		for rows.Next() {
			var req int64
			var typ string
			if err := rows.Scan(&req, &typ); err != nil {
				rows.Close()
				return fmt.Errorf("h5pstore: library dependencies: %w", err)
			}
			if types[id] == Editor {
				typ = Editor
			}
			if typeRank[typ] > typeRank[types[req]] {
				types[req] = typ
				queue = append(queue, req)
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return fmt.Errorf("h5pstore: library dependencies: %w", err)
		}
	}
	return nil
}

// typeRank orders the dependency types by what they make a library load
// in: the player's preloaded libraries before its dynamic ones, both
// before the editor's.
var typeRank = map[string]int{Editor: 1, Dynamic: 2, Preloaded: 3}

// paramLibraries collects the sub-content libraries named in parameters
// ("library": "H5P.Foo 1.2" in an object at any depth), each once. The
// parameters are read token by token, not decoded whole: they may be
// megabytes, and a decoded tree takes many times that.
func paramLibraries(params string) []h5ppackage.Dependency {
	var out []h5ppackage.Dependency
	seen := map[string]bool{}
	dec := json.NewDecoder(strings.NewReader(params))
	var inObject []bool // per open container: an object, or an array
	key, wantKey := "", false
	for {
		tok, err := dec.Token()
		if err != nil {
			return out
		}
		switch v := tok.(type) {
		case json.Delim:
			if v == '{' || v == '[' {
				inObject = append(inObject, v == '{')
				wantKey = v == '{'
				continue
			}
			inObject = inObject[:len(inObject)-1]
		case string:
			if wantKey {
				key, wantKey = v, false
				continue
			}
			if key == "library" && len(inObject) > 0 && inObject[len(inObject)-1] && !seen[v] {
				seen[v] = true
				if m, maj, min, err := ParseLibrary(v); err == nil {
					out = append(out, h5ppackage.Dependency{MachineName: m, MajorVersion: maj, MinorVersion: min})
				}
			}
		}
		// A value has ended: in an object, a key comes next.
		wantKey = len(inObject) > 0 && inObject[len(inObject)-1]
	}
}

// errContentNotFound answers a content id without a row.
var errContentNotFound = apperr.New(apperr.NotFound, "Content not found.")

// Content loads one content.
func (s *Store) Content(ctx context.Context, t *platform.Tenant, id int64) (Content, error) {
	c, err := scanContent(t.DB.QueryRowContext(ctx, `SELECT `+contentColumns+contentFrom+` WHERE c.id = $1`, id))
	if sqldb.NotFound(err) {
		return Content{}, errContentNotFound
	}
	if err != nil {
		return Content{}, fmt.Errorf("h5pstore: load content %d: %w", id, err)
	}
	return c, nil
}

// ListContents lists contents, newest first, whose title contains q (any
// case) and, when userID is not 0, created by that user, without their
// metadata and parameters. total counts all matches.
func (s *Store) ListContents(ctx context.Context, t *platform.Tenant, q string, userID int64, offset, limit int) ([]Content, int, error) {
	var a sqldb.Args
	where := []string{"1 = 1"}
	if strings.TrimSpace(q) != "" {
		where = append(where, `LOWER(c.title) LIKE LOWER(`+a.Add(sqldb.Contains(q))+`) ESCAPE '\'`)
	}
	if userID != 0 {
		where = append(where, "c.user_id = "+a.Add(userID))
	}
	cond := sqldb.Where(where)
	var total int
	if err := t.DB.QueryRowContext(ctx, `SELECT COUNT(*) FROM h5p_contents c`+cond, a...).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("h5pstore: count contents: %w", err)
	}
	if limit <= 0 {
		limit = 20
	}
	if offset < 0 {
		offset = 0
	}
	query := `SELECT ` + listColumns + contentFrom + cond + ` ORDER BY c.id DESC LIMIT ` +
		a.Add(limit) + ` OFFSET ` + a.Add(offset)
	rows, err := t.DB.QueryContext(ctx, query, a...)
	if err != nil {
		return nil, 0, fmt.Errorf("h5pstore: list contents: %w", err)
	}
	defer rows.Close()
	out := []Content{}
	for rows.Next() {
		c, err := scanContent(rows)
		if err != nil {
			return nil, 0, fmt.Errorf("h5pstore: list contents: %w", err)
		}
		out = append(out, c)
	}
	return out, total, rows.Err()
}

// DeleteContent removes a content, its library links, user states and
// results (by cascade) and its files.
func (s *Store) DeleteContent(ctx context.Context, t *platform.Tenant, id int64) error {
	res, err := t.DB.ExecContext(ctx, `DELETE FROM h5p_contents WHERE id = $1`, id)
	if err != nil {
		return fmt.Errorf("h5pstore: delete content %d: %w", id, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return errContentNotFound
	}
	if err := t.Blob.DeletePrefix(ctx, contentPrefix(id)); err != nil {
		return fmt.Errorf("h5pstore: delete files of content %d: %w", id, err)
	}
	return nil
}

// UpdateContent sets the main library ("H5P.Foo 1.2"), the parameters and
// the metadata of a content; the creator stays. metadata (the editor's
// metadata object, or nil to keep it) is merged into the stored
// descriptor, whose mainLibrary and preloadedDependencies follow the new
// library and parameters.
func (s *Store) UpdateContent(ctx context.Context, t *platform.Tenant, id int64, library string, params, metadata json.RawMessage) (Content, error) {
	machine, major, minor, err := ParseLibrary(library)
	if err != nil {
		return Content{}, err
	}
	paramsText, err := compactJSON(params, "params")
	if err != nil {
		return Content{}, err
	}
	var patch map[string]any
	if len(metadata) > 0 && string(metadata) != "null" {
		if err := json.Unmarshal(metadata, &patch); err != nil {
			return Content{}, apperr.Field("metadata", "Must be a JSON object.")
		}
	}
	err = t.DB.Tx(ctx, func(tx *sqldb.Tx) error {
		old, err := scanContent(tx.QueryRowContext(ctx, `SELECT `+contentColumns+contentFrom+` WHERE c.id = $1`, id))
		if sqldb.NotFound(err) {
			return errContentNotFound
		}
		if err != nil {
			return fmt.Errorf("h5pstore: load content %d: %w", id, err)
		}
		lib, found, err := findLibrary(ctx, tx, machine, major, minor)
		if err != nil {
			return err
		}
		if !found {
			return apperr.Field("library", fmt.Sprintf("The library %s is not installed.", library))
		}
		desc := map[string]any{}
		_ = json.Unmarshal(old.Metadata, &desc)
		for k, v := range patch {
			desc[k] = v
		}
		main := h5ppackage.Dependency{MachineName: machine, MajorVersion: major, MinorVersion: minor}
		deps := uniqueDependencies(append([]h5ppackage.Dependency{main}, paramLibraries(paramsText)...))
		desc["mainLibrary"] = machine
		desc["preloadedDependencies"] = deps
		title, _ := desc["title"].(string)
		if strings.TrimSpace(title) == "" {
			title = old.Title
			desc["title"] = title
		}
		metaText, err := json.Marshal(desc)
		if err != nil {
			return fmt.Errorf("h5pstore: encode metadata: %w", err)
		}
		if _, err := tx.ExecContext(ctx, `UPDATE h5p_contents SET title = $1, library_id = $2,
			parameters = $3, metadata = $4, updated_at = $5 WHERE id = $6`,
			title, lib.ID, paramsText, string(metaText), s.now(), id); err != nil {
			return fmt.Errorf("h5pstore: update content %d: %w", id, err)
		}
		return linkLibraries(ctx, tx, id, deps, paramsText)
	})
	if err != nil {
		return Content{}, err
	}
	return s.Content(ctx, t, id)
}

func uniqueDependencies(in []h5ppackage.Dependency) []h5ppackage.Dependency {
	seen := map[string]bool{}
	var out []h5ppackage.Dependency
	for _, d := range in {
		if !seen[d.Dir()] {
			seen[d.Dir()] = true
			out = append(out, d)
		}
	}
	return out
}

// FormatID renders a content id as the API shows it.
func FormatID(id int64) string { return strconv.FormatInt(id, 10) }
