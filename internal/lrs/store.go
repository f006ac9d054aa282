package lrs

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/lms-platform/lms/internal/apperr"
	"github.com/lms-platform/lms/internal/sqldb"
)

// sameAsStored tells whether the statement stored under st's id is st.
func sameAsStored(ctx context.Context, q sqldb.Querier, st *Statement) (bool, error) {
	var body string
	if err := q.QueryRowContext(ctx, `SELECT body FROM lrs_statements WHERE id = $1`, st.ID).Scan(&body); err != nil {
		return false, fmt.Errorf("lrs: look up statement: %w", err)
	}
	var old map[string]any
	d := json.NewDecoder(strings.NewReader(body))
	d.UseNumber()
	d.Decode(&old)
	return sameStatement(old, st.Object), nil
}

// insertStatements stores the statements not stored yet and returns them;
// an id stored for another statement is a conflict, and voiding marks its
// target. bodies holds each statement's JSON, encoded before the
// transaction: on SQLite the transactions of all writers run one after the
// other, so what can be done outside is.
func insertStatements(ctx context.Context, tx *sqldb.Tx, list []*Statement, bodies [][]byte, attachments map[string]Attachment, now time.Time) ([]*Statement, error) {
	var fresh []*Statement
	for i, st := range list {
		if st.Verb == VerbVoided {
			if err := void(ctx, tx, st); err != nil {
				return nil, err
			}
		}
		// The insert itself finds an id stored before, which is rare: a
		// lookup first would cost every statement a query.
		var seq int64
		err := tx.QueryRowContext(ctx, `INSERT INTO lrs_statements (id, stored, verb, actor_key, object_type, object_id, object_agent_key, registration, body, size)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) ON CONFLICT (id) DO NOTHING RETURNING seq`, st.ID, now, st.Verb, st.ActorKey, st.ObjectType, st.ObjectID, st.ObjectAgent,
			st.Registration, string(bodies[i]), len(bodies[i])).Scan(&seq)
		if errors.Is(err, sql.ErrNoRows) {
			same, err := sameAsStored(ctx, tx, st)
			if err != nil {
				return nil, err
			}
			if !same {
				return nil, apperr.New(apperr.Conflict, "The statement id "+st.ID+" is already stored for another statement.")
			}
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("lrs: insert statement: %w", err)
		}
		if err := insertRelated(ctx, tx, seq, st.Related); err != nil {
			return nil, err
		}
		for _, a := range st.Attachments {
			at, ok := attachments[a.SHA2]
			if !ok {
				continue
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO lrs_attachments (sha2, content_type, body) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING`,
				a.SHA2, at.ContentType, at.Body); err != nil {
				return nil, fmt.Errorf("lrs: insert attachment: %w", err)
			}
		}
		fresh = append(fresh, st)
	}
	return fresh, nil
}

// void marks the statement a voiding statement names as voided, unless
// that one voids too. A voiding statement stored before voided its target
// then already, so repeating it is harmless.
func void(ctx context.Context, tx *sqldb.Tx, st *Statement) error {
	var verb string
	err := tx.QueryRowContext(ctx, `SELECT verb FROM lrs_statements WHERE id = $1`, st.ObjectID).Scan(&verb)
	if err == nil && verb == VerbVoided {
		return bad("A voiding statement cannot be voided.")
	}
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("lrs: look up voided statement: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `UPDATE lrs_statements SET voided = TRUE WHERE id = $1`, st.ObjectID); err != nil {
		return fmt.Errorf("lrs: void statement: %w", err)
	}
	return nil
}

// insertRelated stores the activities and agents a statement names
// beyond actor and object, a few hundred rows to an INSERT.
func insertRelated(ctx context.Context, tx *sqldb.Tx, seq int64, related []Related) error {
	const perInsert = 300 // 900 parameters, well below both engines' limits
	seen := make(map[Related]bool, len(related))
	var args sqldb.Args
	var rows []string
	flush := func() error {
		if len(rows) == 0 {
			return nil
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO lrs_statement_related (seq, kind, value) VALUES `+strings.Join(rows, ", ")+` ON CONFLICT DO NOTHING`, args...)
		if err != nil {
			return fmt.Errorf("lrs: insert related: %w", err)
		}
		args, rows = nil, nil
		return nil
	}
	for _, r := range related {
		if seen[r] {
			continue
		}
		seen[r] = true
		rows = append(rows, "("+args.Add(seq)+", "+args.Add(r.Kind)+", "+args.Add(r.Value)+")")
		if len(rows) == perInsert {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	return flush()
}

func statementByID(ctx context.Context, q sqldb.Querier, id string) (*StoredStatement, error) {
	st := &StoredStatement{}
	var body string
	err := q.QueryRowContext(ctx, `SELECT seq, id, registration, voided, stored, body FROM lrs_statements WHERE id = $1`, id).
		Scan(&st.Seq, &st.ID, &st.Registration, &st.Voided, &st.Stored, &body)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, errNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("lrs: load statement: %w", err)
	}
	st.Body = json.RawMessage(body)
	return st, nil
}

// statementOwner is the actor and registration of a stored statement.
func statementOwner(ctx context.Context, q sqldb.Querier, id string) (actor, registration string, err error) {
	err = q.QueryRowContext(ctx, `SELECT actor_key, registration FROM lrs_statements WHERE id = $1`, strings.ToLower(id)).Scan(&actor, &registration)
	if errors.Is(err, sql.ErrNoRows) {
		return "", "", errNotFound
	}
	if err != nil {
		return "", "", fmt.Errorf("lrs: look up statement: %w", err)
	}
	return actor, registration, nil
}

// Filter is a statement query (xAPI 1.0.3 Communication 2.1.3).
type Filter struct {
	AgentKey          string
	Verb              string
	Activity          string
	Registration      string
	RelatedActivities bool
	RelatedAgents     bool
	Since, Until      *time.Time
	Limit             int
	Ascending         bool
	// After continues a query past the statement with this seq (the more
	// link's cursor), in the query's order.
	After int64
	// Within bounds the query to one registration whatever the statements
	// target (a launch's scope), unlike Registration, which a statement
	// also meets through the statement it targets.
	Within string
}

// MaxLimit caps a page of statements.
const MaxLimit = 500

// matchConds are the filters a statement meets by itself or through the
// statement it targets (Communication 2.1.3, filter conditions for
// StatementRefs): all but the time and sequence ones. alias names the
// statement row.
func matchConds(f Filter, args *sqldb.Args, alias string) []string {
	var conds []string
	related := func(kind, arg string) string {
		return "EXISTS (SELECT 1 FROM lrs_statement_related r WHERE r.seq = " + alias + ".seq AND r.kind = '" + kind + "' AND r.value = " + arg + ")"
	}
	if f.AgentKey != "" {
		a := args.Add(f.AgentKey)
		c := "(" + alias + ".actor_key = " + a + " OR " + alias + ".object_agent_key = " + a
		if f.RelatedAgents {
			c += " OR " + related("agent", a)
		}
		conds = append(conds, c+")")
	}
	if f.Verb != "" {
		conds = append(conds, alias+".verb = "+args.Add(f.Verb))
	}
	if f.Activity != "" {
		a := args.Add(f.Activity)
		c := "((" + alias + ".object_type = 'Activity' AND " + alias + ".object_id = " + a + ")"
		if f.RelatedActivities {
			c += " OR " + related("activity", a)
		}
		conds = append(conds, c+")")
	}
	if f.Registration != "" {
		conds = append(conds, alias+".registration = "+args.Add(f.Registration))
	}
	return conds
}

// Page is a page of a statement query as read: at most the query's limit
// of statements and, beyond the first, at most PageBytes of them as
// formatted by the page's format function.
type Page struct {
	Statements []StoredStatement
	// More tells that statements follow the last one.
	More bool
	// Size is the bytes of the statements as formatted, with a
	// separator each.
	Size int
}

// queryStatements reads a page: rows are read one at a time and reading
// stops at the limit or before the statement that would take the page past
// budget bytes (format gives a statement's bytes as answered), so a page
// never holds more than its budget and one statement.
func queryStatements(ctx context.Context, q sqldb.Querier, f Filter, budget int, format func(json.RawMessage) json.RawMessage) (Page, error) {
	var args sqldb.Args
	conds := []string{"s.voided = FALSE"}
	with := ""
	if match := matchConds(f, &args, "s"); len(match) > 0 {
		// A statement whose object is a StatementRef also matches when the
		// statement it targets does, voided or not, and so on down a chain
		// of references: targeted holds the ids of the statements that
		// match and are targeted.
		base := matchConds(f, &args, "t")
		with = `WITH RECURSIVE targeted(id) AS (
SELECT t.id FROM lrs_statements t WHERE ` + strings.Join(base, " AND ") + `
 AND EXISTS (SELECT 1 FROM lrs_statements x WHERE x.object_type = 'StatementRef' AND x.object_id = t.id)
UNION
SELECT x.id FROM lrs_statements x JOIN targeted ON x.object_type = 'StatementRef' AND x.object_id = targeted.id
) `
		conds = append(conds, "(("+strings.Join(match, " AND ")+") OR (s.object_type = 'StatementRef' AND s.object_id IN (SELECT id FROM targeted)))")
	}
	if f.Within != "" {
		conds = append(conds, "s.registration = "+args.Add(f.Within))
	}
	if f.Since != nil {
		conds = append(conds, "s.stored > "+args.Add(*f.Since))
	}
	if f.Until != nil {
		conds = append(conds, "s.stored <= "+args.Add(*f.Until))
	}
	order := "DESC"
	if f.Ascending {
		order = "ASC"
	}
	if f.After > 0 {
		op := "<"
		if f.Ascending {
			op = ">"
		}
		conds = append(conds, "s.seq "+op+" "+args.Add(f.After))
	}
	limit := f.Limit
	if limit <= 0 || limit > MaxLimit {
		limit = MaxLimit
	}
	// The database leaves out the rows past the byte budget by their
	// stored size (before_size: the bytes of the rows ahead of a row in
	// the page's order), keeping the one that crosses it, so no more
	// bodies than a page's are read out; total tells whether it left out
	// any. The page's own cut is by the sizes as formatted.
	rows, err := q.QueryContext(ctx, with+`SELECT b.seq, b.id, b.registration, b.voided, b.stored, b.body, w.total FROM (
SELECT p.seq, COUNT(*) OVER () AS total,
COALESCE(SUM(p.size) OVER (ORDER BY p.seq `+order+` ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0) AS before_size
FROM (SELECT s.seq, s.size FROM lrs_statements s WHERE `+strings.Join(conds, " AND ")+` ORDER BY s.seq `+order+` LIMIT `+args.Add(limit+1)+`) p
) w JOIN lrs_statements b ON b.seq = w.seq WHERE w.before_size <= `+args.Add(budget)+` ORDER BY b.seq `+order, args...)
	if err != nil {
		return Page{}, fmt.Errorf("lrs: query statements: %w", err)
	}
	defer rows.Close()
	var page Page
	read, total := 0, 0
	for rows.Next() {
		var st StoredStatement
		var body []byte
		if err := rows.Scan(&st.Seq, &st.ID, &st.Registration, &st.Voided, &st.Stored, &body, &total); err != nil {
			return Page{}, fmt.Errorf("lrs: read statement: %w", err)
		}
		read++
		st.Body = format(body)
		if len(page.Statements) == limit || (len(page.Statements) > 0 && page.Size+len(st.Body)+1 > budget) {
			page.More = true
			break
		}
		page.Statements = append(page.Statements, st)
		page.Size += len(st.Body) + 1
	}
	page.More = page.More || read < total
	if err := rows.Err(); err != nil {
		return Page{}, fmt.Errorf("lrs: read statements: %w", err)
	}
	return page, nil
}

// attachment loads an attachment's content.
func attachment(ctx context.Context, q sqldb.Querier, sha string) (Attachment, bool, error) {
	var a Attachment
	err := q.QueryRowContext(ctx, `SELECT content_type, body FROM lrs_attachments WHERE sha2 = $1`, sha).Scan(&a.ContentType, &a.Body)
	if errors.Is(err, sql.ErrNoRows) {
		return a, false, nil
	}
	if err != nil {
		return a, false, fmt.Errorf("lrs: load attachment: %w", err)
	}
	return a, true, nil
}

// definitionStatements bounds how many of the latest statements naming an
// activity its definition is gathered from.
const definitionStatements = 200

// activityDefinition is the definition of an activity as the statements
// whose object it is define it (Communication 2.5): their definitions
// merged from the oldest to the newest, a newer one replacing what it
// states again and keeping what it leaves out, and language maps and
// extensions merged key by key, so that two statements in two languages
// give both.
func activityDefinition(ctx context.Context, q sqldb.Querier, id string) (map[string]any, error) {
	rows, err := q.QueryContext(ctx, `SELECT body FROM lrs_statements WHERE object_type = 'Activity' AND object_id = $1 ORDER BY seq DESC LIMIT $2`,
		id, definitionStatements)
	if err != nil {
		return nil, fmt.Errorf("lrs: load activity: %w", err)
	}
	defer rows.Close()
	var defs []map[string]any
	for rows.Next() {
		var body string
		if err := rows.Scan(&body); err != nil {
			return nil, fmt.Errorf("lrs: read activity: %w", err)
		}
		var st struct {
			Object struct {
				Definition map[string]any `json:"definition"`
			} `json:"object"`
		}
		d := json.NewDecoder(strings.NewReader(body))
		d.UseNumber()
		if d.Decode(&st) == nil && st.Object.Definition != nil {
			defs = append(defs, st.Object.Definition)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("lrs: read activity: %w", err)
	}
	var merged map[string]any
	for i := len(defs) - 1; i >= 0; i-- {
		merged = mergeDefinition(merged, defs[i])
	}
	return merged, nil
}

// mergeDefinition lays a newer definition over an older one.
func mergeDefinition(old, newer map[string]any) map[string]any {
	if old == nil {
		return newer
	}
	out := map[string]any{}
	for k, v := range old {
		out[k] = v
	}
	for k, v := range newer {
		switch k {
		case "name", "description", "extensions":
			out[k] = mergeMaps(old[k], v)
		case "choices", "scale", "source", "target", "steps":
			out[k] = mergeComponents(old[k], v)
		default:
			out[k] = v
		}
	}
	return out
}

// mergeMaps merges two JSON objects key by key, the newer's values
// winning; a value that is not an object replaces the older one.
func mergeMaps(old, newer any) any {
	om, ok1 := old.(map[string]any)
	nm, ok2 := newer.(map[string]any)
	if !ok1 || !ok2 {
		return newer
	}
	out := map[string]any{}
	for k, v := range om {
		out[k] = v
	}
	for k, v := range nm {
		out[k] = v
	}
	return out
}

// mergeComponents takes the newer list of interaction components, each
// keeping the description languages of the older component of its id.
func mergeComponents(old, newer any) any {
	ol, ok1 := old.([]any)
	nl, ok2 := newer.([]any)
	if !ok1 || !ok2 {
		return newer
	}
	byID := map[any]map[string]any{}
	for _, c := range ol {
		if cm, ok := c.(map[string]any); ok {
			byID[cm["id"]] = cm
		}
	}
	out := make([]any, len(nl))
	for i, c := range nl {
		cm, ok := c.(map[string]any)
		prev, had := byID[cm["id"]]
		if !ok || !had {
			out[i] = c
			continue
		}
		m := map[string]any{}
		for k, v := range cm {
			m[k] = v
		}
		if d, ok := prev["description"]; ok {
			m["description"] = mergeMaps(d, cm["description"])
			if cm["description"] == nil {
				m["description"] = d
			}
		}
		out[i] = m
	}
	return out
}
