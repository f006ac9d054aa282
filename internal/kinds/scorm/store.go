package scorm

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/lms-platform/lms/internal/apperr"
	"github.com/lms-platform/lms/internal/kinds/scorm/manifest"
	"github.com/lms-platform/lms/internal/platform"
	"github.com/lms-platform/lms/internal/sqldb"
	"github.com/lms-platform/lms/internal/topics"
)

// storedPackage is a package row with its parsed manifest and SCOs.
type storedPackage struct {
	ID         int64
	Title      string
	Version    string
	Manifest   *manifest.Manifest
	BlobPrefix string
	SCOs       []storedSCO
}

// storedSCO is one launchable item, with its manifest item.
type storedSCO struct {
	ID        int64
	PackageID int64
	Position  int
	Item      manifest.Item
}

func (p storedPackage) summary() ScormPackage {
	out := ScormPackage{ID: p.ID, Title: p.Title, Version: p.Version, SCOs: []SCO{}, Warnings: p.Manifest.Warnings}
	for _, s := range p.SCOs {
		out.SCOs = append(out.SCOs, s.view())
	}
	return out
}

func (s storedSCO) view() SCO {
	return SCO{ID: s.ID, Identifier: s.Item.Identifier, Title: s.Item.Title, Launch: s.Item.Launch, ScormType: s.Item.ScormType}
}

func (p storedPackage) sco(id int64) (storedSCO, bool) {
	for _, s := range p.SCOs {
		if s.ID == id {
			return s, true
		}
	}
	return storedSCO{}, false
}

func insertPackage(ctx context.Context, t *platform.Tenant, m *manifest.Manifest, prefix string, size int64, by *int64,
	now time.Time) (ScormPackage, error) {
	doc, err := json.Marshal(m)
	if err != nil {
		return ScormPackage{}, err
	}
	p := storedPackage{Title: m.Title, Version: m.Version, Manifest: m, BlobPrefix: prefix}
	err = t.Tx(ctx, func(tx *sqldb.Tx) error {
		err := tx.QueryRowContext(ctx, `INSERT INTO scorm_packages (title, version, identifier, manifest, blob_prefix, size,
			created_by, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING id`,
			m.Title, m.Version, m.Identifier, string(doc), prefix, size, by, now).Scan(&p.ID)
		if err != nil {
			return fmt.Errorf("scorm: insert package: %w", err)
		}
		for i, it := range m.Launchables() {
			sco := storedSCO{PackageID: p.ID, Position: i, Item: it}
			err := tx.QueryRowContext(ctx, `INSERT INTO scorm_scos (package_id, position, identifier, title, launch, scorm_type)
				VALUES ($1, $2, $3, $4, $5, $6) RETURNING id`, p.ID, i, it.Identifier, it.Title, it.Launch, it.ScormType).Scan(&sco.ID)
			if err != nil {
				return fmt.Errorf("scorm: insert sco: %w", err)
			}
			p.SCOs = append(p.SCOs, sco)
		}
		return nil
	})
	if err != nil {
		return ScormPackage{}, err
	}
	return p.summary(), nil
}

// loadPackage returns a package through the tenant's cache: a stored
// package never changes, and every commit and launch reads it.
func loadPackage(ctx context.Context, t *platform.Tenant, id int64) (storedPackage, error) {
	cache := t.Local(packageCacheKey{}, func() any { return &packageCache{m: map[int64]storedPackage{}} }).(*packageCache)
	if p, ok := cache.get(id); ok {
		return p, nil
	}
	p, err := packageByID(ctx, t.DB, id)
	if err == nil {
		cache.put(id, p)
	}
	return p, err
}

// packageByID loads a package; its manifest gives each SCO its item.
func packageByID(ctx context.Context, q sqldb.Querier, id int64) (storedPackage, error) {
	p := storedPackage{ID: id}
	var doc string
	err := q.QueryRowContext(ctx, `SELECT title, version, manifest, blob_prefix FROM scorm_packages WHERE id = $1`, id).
		Scan(&p.Title, &p.Version, &doc, &p.BlobPrefix)
	if errors.Is(err, sql.ErrNoRows) {
		return p, errPackageMissing
	}
	if err != nil {
		return p, fmt.Errorf("scorm: load package %d: %w", id, err)
	}
	p.Manifest = &manifest.Manifest{}
	if err := json.Unmarshal([]byte(doc), p.Manifest); err != nil {
		return p, fmt.Errorf("scorm: package %d manifest: %w", id, err)
	}
	items := map[string]manifest.Item{}
	for _, it := range p.Manifest.Launchables() {
		items[it.Identifier] = it
	}
	rows, err := q.QueryContext(ctx, `SELECT id, position, identifier FROM scorm_scos WHERE package_id = $1 ORDER BY position`, id)
	if err != nil {
		return p, fmt.Errorf("scorm: load scos of %d: %w", id, err)
	}
	defer rows.Close()
	for rows.Next() {
		s := storedSCO{PackageID: id}
		var ident string
		if err := rows.Scan(&s.ID, &s.Position, &ident); err != nil {
			return p, err
		}
		s.Item = items[ident]
		p.SCOs = append(p.SCOs, s)
	}
	return p, rows.Err()
}

// packageOfSCO finds the package of a SCO.
func packageOfSCO(ctx context.Context, q sqldb.Querier, scoID int64) (int64, error) {
	var id int64
	err := q.QueryRowContext(ctx, `SELECT package_id FROM scorm_scos WHERE id = $1`, scoID).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, errSCOMissing
	}
	if err != nil {
		return 0, fmt.Errorf("scorm: sco %d: %w", scoID, err)
	}
	return id, nil
}

// track is a learner's track of one SCO in one topic.
type track struct {
	ID, TopicID, SCOID, UserID int64
	Attempt, Session           int
	Seq                        int64
	CMI                        map[string]any
	Completion, Success        string
	ScoreRaw, ScoreMin         *float64
	ScoreMax, ScoreScaled      *float64
	Exit                       string
	BaseSeconds                int64
	SessionSeconds             int64
	CompletedAt                *time.Time
	UpdatedAt                  time.Time
}

const trackColumns = `id, topic_id, sco_id, user_id, attempt, session, seq, cmi, completion, success, score_raw, score_min,
	score_max, score_scaled, exit_mode, base_seconds, session_seconds, completed_at, updated_at`

func scanTrack(row interface{ Scan(...any) error }) (track, error) {
	var tr track
	var cmi string
	var completed sql.NullTime
	var raw, lo, hi, scaled sql.NullFloat64
	err := row.Scan(&tr.ID, &tr.TopicID, &tr.SCOID, &tr.UserID, &tr.Attempt, &tr.Session, &tr.Seq, &cmi, &tr.Completion,
		&tr.Success, &raw, &lo, &hi, &scaled, &tr.Exit, &tr.BaseSeconds, &tr.SessionSeconds, &completed, &tr.UpdatedAt)
	if err != nil {
		return tr, err
	}
	if err := json.Unmarshal([]byte(cmi), &tr.CMI); err != nil {
		return tr, fmt.Errorf("scorm: track %d cmi: %w", tr.ID, err)
	}
	tr.ScoreRaw, tr.ScoreMin, tr.ScoreMax, tr.ScoreScaled = float(raw), float(lo), float(hi), float(scaled)
	if completed.Valid {
		tr.CompletedAt = &completed.Time
	}
	return tr, nil
}

func float(f sql.NullFloat64) *float64 {
	if !f.Valid {
		return nil
	}
	return &f.Float64
}

func trackOf(ctx context.Context, q sqldb.Querier, topicID, scoID, userID int64) (*track, error) {
	tr, err := scanTrack(q.QueryRowContext(ctx, `SELECT `+trackColumns+` FROM scorm_tracks
		WHERE topic_id = $1 AND sco_id = $2 AND user_id = $3`, topicID, scoID, userID))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("scorm: load track: %w", err)
	}
	return &tr, nil
}

func tracksOfTopic(ctx context.Context, q sqldb.Querier, topicID, userID int64) (map[int64]track, error) {
	rows, err := q.QueryContext(ctx, `SELECT `+trackColumns+` FROM scorm_tracks WHERE topic_id = $1 AND user_id = $2`, topicID, userID)
	if err != nil {
		return nil, fmt.Errorf("scorm: load tracks: %w", err)
	}
	defer rows.Close()
	out := map[int64]track{}
	for rows.Next() {
		tr, err := scanTrack(rows)
		if err != nil {
			return nil, err
		}
		out[tr.SCOID] = tr
	}
	return out, rows.Err()
}

// startSession opens a new session of the track: a new track, the same
// attempt resumed, or a new attempt with a clean data model. The
// previous session's time joins base_seconds.
func startSession(ctx context.Context, q sqldb.Querier, tr *track, now time.Time, newAttempt bool) error {
	if tr.ID == 0 {
		tr.Attempt, tr.Session, tr.Completion, tr.Success, tr.CMI = 1, 1, "not attempted", "unknown", map[string]any{}
		return q.QueryRowContext(ctx, `INSERT INTO scorm_tracks (topic_id, sco_id, user_id, attempt, session, created_at, updated_at)
			VALUES ($1, $2, $3, 1, 1, $4, $4)
			ON CONFLICT (topic_id, sco_id, user_id) DO UPDATE SET session = scorm_tracks.session + 1, seq = 0, updated_at = $4
			RETURNING id, session`, tr.TopicID, tr.SCOID, tr.UserID, now).Scan(&tr.ID, &tr.Session)
	}
	tr.BaseSeconds += tr.SessionSeconds
	tr.SessionSeconds = 0
	if newAttempt {
		tr.Attempt++
		tr.CMI = map[string]any{}
		tr.Exit = ""
	}
	cmi, _ := json.Marshal(tr.CMI)
	return q.QueryRowContext(ctx, `UPDATE scorm_tracks SET attempt = $2, session = session + 1, seq = 0, cmi = $3, exit_mode = $4,
		base_seconds = base_seconds + session_seconds, session_seconds = 0, updated_at = $5 WHERE id = $1 RETURNING session`,
		tr.ID, tr.Attempt, string(cmi), tr.Exit, now).Scan(&tr.Session)
}

// commitTrack stores a commit when (session, seq) is newer than what the
// track holds; false when it is late or repeated.
func commitTrack(ctx context.Context, q sqldb.Querier, tr *track, session int, seq int64, now time.Time) (bool, error) {
	cmi, err := json.Marshal(tr.CMI)
	if err != nil {
		return false, err
	}
	res, err := q.ExecContext(ctx, `UPDATE scorm_tracks SET seq = $3, cmi = $4, completion = $5, success = $6, score_raw = $7,
		score_min = $8, score_max = $9, score_scaled = $10, exit_mode = $11, session_seconds = $12,
		completed_at = COALESCE(completed_at, $13), updated_at = $14
		WHERE id = $1 AND session = $2 AND seq < $3`,
		tr.ID, session, seq, string(cmi), tr.Completion, tr.Success, tr.ScoreRaw, tr.ScoreMin, tr.ScoreMax, tr.ScoreScaled,
		tr.Exit, tr.SessionSeconds, tr.CompletedAt, now)
	if err != nil {
		return false, fmt.Errorf("scorm: commit track %d: %w", tr.ID, err)
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// userTracks lists a learner's tracks in every topic.
func userTracks(ctx context.Context, q sqldb.Querier, userID int64) ([]Track, error) {
	rows, err := q.QueryContext(ctx, `SELECT s.topic_id, s.sco_id, c.identifier, c.title, s.attempt, s.completion, s.success,
			s.score_raw, s.score_min, s.score_max, s.score_scaled, s.base_seconds + s.session_seconds, s.completed_at, s.updated_at
		FROM scorm_tracks s JOIN scorm_scos c ON c.id = s.sco_id
		WHERE s.user_id = $1 ORDER BY s.topic_id, c.position`, userID)
	if err != nil {
		return nil, fmt.Errorf("scorm: tracks of user %d: %w", userID, err)
	}
	defer rows.Close()
	out := []Track{}
	for rows.Next() {
		var t Track
		var raw, lo, hi, scaled sql.NullFloat64
		var completed sql.NullTime
		if err := rows.Scan(&t.TopicID, &t.SCOID, &t.Identifier, &t.Title, &t.Attempt, &t.Completion, &t.Success, &raw, &lo, &hi,
			&scaled, &t.Seconds, &completed, &t.LastAccess); err != nil {
			return nil, err
		}
		t.Score = Score{Raw: float(raw), Min: float(lo), Max: float(hi), Scaled: float(scaled)}
		if completed.Valid {
			t.CompletedAt = &completed.Time
		}
		t.Status = t.status()
		out = append(out, t)
	}
	return out, rows.Err()
}

// learnerState is what sequencing reads of a learner in a package, from
// the topic being played: per SCO, the track that decides its status,
// and the learner's global objectives. The SCO being played (playing)
// is read from its track in this topic; every other SCO from the learner's
// track furthest along among the topics of the same course that played
// it (completed or passed before any other status, an attempted one before
// one not attempted, then the latest), so that a package whose SCOs are
// played by several topics (module 1 in one, module 2 in the next) unlocks
// as one package.
func learnerState(ctx context.Context, q sqldb.Querier, pkg storedPackage, userID, topicID, playing int64) (map[int64]track,
	map[string]objState, error) {
	own, err := tracksOfTopic(ctx, q, topicID, userID)
	if err != nil {
		return nil, nil, err
	}
	course, err := topics.CourseOf(ctx, q, topicID)
	if err != nil {
		return nil, nil, err
	}
	rows, err := q.QueryContext(ctx, `SELECT `+trackColumns+` FROM scorm_tracks
		WHERE user_id = $1 AND topic_id <> $2 AND sco_id IN (SELECT id FROM scorm_scos WHERE package_id = $3)`,
		userID, topicID, pkg.ID)
	if err != nil {
		return nil, nil, fmt.Errorf("scorm: tracks of package %d: %w", pkg.ID, err)
	}
	var others []track
	for rows.Next() {
		tr, err := scanTrack(rows)
		if err != nil {
			rows.Close()
			return nil, nil, err
		}
		others = append(others, tr)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, nil, err
	}
	out := map[int64]track{}
	for id, tr := range own {
		out[id] = tr
	}
	inCourse := map[int64]bool{}
	for _, tr := range others {
		if tr.SCOID == playing {
			continue
		}
		in, seen := inCourse[tr.TopicID]
		if !seen {
			c, err := topics.CourseOf(ctx, q, tr.TopicID)
			if err != nil && !apperr.Is(err, apperr.NotFound) {
				return nil, nil, err
			}
			in = err == nil && c == course
			inCourse[tr.TopicID] = in
		}
		if cur, ok := out[tr.SCOID]; in && (!ok || further(tr, cur)) {
			out[tr.SCOID] = tr
		}
	}
	globals, err := loadGlobals(ctx, q, userID, pkg.ID)
	if err != nil {
		return nil, nil, err
	}
	return out, globals, nil
}

// further tells whether track a is further along than b.
func further(a, b track) bool {
	rank := func(tr track) int {
		switch {
		case done(tr.Completion, tr.Success):
			return 2
		case tr.Completion != "not attempted":
			return 1
		}
		return 0
	}
	if ra, rb := rank(a), rank(b); ra != rb {
		return ra > rb
	}
	return a.UpdatedAt.After(b.UpdatedAt)
}
