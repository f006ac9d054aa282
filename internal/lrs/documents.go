package lrs

import (
	"context"
	"crypto/sha1"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/lms-platform/lms/internal/apperr"
	"github.com/lms-platform/lms/internal/platform"
	"github.com/lms-platform/lms/internal/sqldb"
)

// The kinds of documents.
const (
	StateDoc    = "state"
	ActivityDoc = "activity"
	AgentDoc    = "agent"
)

// DocKey names a document or, with ID empty, a set of them.
type DocKey struct {
	Kind         string
	ActivityID   string
	AgentKey     string
	Registration string
	ID           string
}

// Document is a stored document.
type Document struct {
	ContentType string
	Body        []byte
	ETag        string
	Updated     time.Time
}

// MaxDocument caps a document's size: a request's.
const MaxDocument = MaxRequest

// Preconditions are a write's If-Match and If-None-Match headers.
type Preconditions struct {
	IfMatch     string
	IfNoneMatch string
}

func etagOf(body []byte) string {
	sum := sha1.Sum(body)
	return `"` + hex.EncodeToString(sum[:]) + `"`
}

func matches(header, etag string) bool {
	for _, part := range strings.Split(header, ",") {
		p := strings.TrimSpace(part)
		if p == "*" || p == etag || strings.TrimPrefix(p, "W/") == etag {
			return true
		}
	}
	return false
}

var (
	errPrecondition = apperr.New(apperr.Conflict, "The document changed; send If-Match with its current ETag.")
	errDocMissing   = apperr.New(apperr.NotFound, "No such document.")
)

// ErrPreconditionFailed is the 412 of a write whose If-Match or If-None-Match
// does not hold.
var ErrPreconditionFailed = errors.New("lrs: precondition failed")

var (
	errOtherState   = apperr.New(apperr.Forbidden, "A launch reaches only the state of its own activity, learner and registration.")
	errReadOnlyDoc  = apperr.New(apperr.Forbidden, "A launch may only read activity profiles.")
	errOtherProfile = apperr.New(apperr.Forbidden, "A launch reaches only its own learner's agent profile.")
)

// allowedDocs checks a scope's access to a document key (write for PUT,
// POST and DELETE): a launch reaches the state documents of its own
// activity, learner and registration, and may only read those it holds
// read-only (LMS.LaunchData, cmi5 section 10.2.1); it may read activity
// profiles, and its learner's agent profile. An admin reaches everything.
func allowedDocs(scope Scope, k DocKey, write bool) error {
	if scope.Admin {
		return nil
	}
	switch k.Kind {
	case StateDoc:
		if k.AgentKey != scope.ActorKey || k.ActivityID != scope.ActivityID || k.Registration != scope.Registration {
			return errOtherState
		}
		if write && k.ID != "" && slices.Contains(scope.ReadOnlyStates, k.ID) {
			return apperr.New(apperr.Forbidden, "The state document "+k.ID+" is read-only for a launch.")
		}
	case ActivityDoc:
		if write {
			return errReadOnlyDoc
		}
	default:
		if k.AgentKey != scope.ActorKey {
			return errOtherProfile
		}
	}
	return nil
}

// PutDocument writes a document (replace), or with merge the POST of JSON
// objects merged into the stored one. Concurrency per xAPI: If-Match and
// If-None-Match are checked (412 when they fail); a PUT of a profile
// document without either header is a 409 when it exists, else a 400.
func (s *Service) PutDocument(ctx context.Context, t *platform.Tenant, scope Scope, k DocKey, contentType string, body []byte,
	pre Preconditions, merge bool) error {
	if err := allowedDocs(scope, k, true); err != nil {
		return err
	}
	if s.ruled(scope) {
		if err := s.Rules.Document(ctx, t, scope, k, &DocWrite{ContentType: contentType, Body: body, Merge: merge}); err != nil {
			return err
		}
	}
	if len(body) > MaxDocument {
		return apperr.New(apperr.TooLarge, "The document is too large.")
	}
	now := s.now()
	return t.Tx(ctx, func(tx *sqldb.Tx) error {
		old, err := loadDocument(ctx, tx, k)
		exists := err == nil
		if err != nil && !apperr.Is(err, apperr.NotFound) {
			return err
		}
		if pre.IfMatch != "" && (!exists || !matches(pre.IfMatch, old.ETag)) {
			return ErrPreconditionFailed
		}
		if pre.IfNoneMatch != "" && exists && matches(pre.IfNoneMatch, old.ETag) {
			return ErrPreconditionFailed
		}
		if !merge && k.Kind != StateDoc && pre.IfMatch == "" && pre.IfNoneMatch == "" {
			// A client must send one of them with a profile PUT
			// (Communication 3.1): for a document that exists the answer
			// is the 409 xAPI names, for a new one a 400.
			if exists {
				return errPrecondition
			}
			return bad("A PUT of a profile document needs If-Match or If-None-Match (If-None-Match: * for a new one).")
		}
		if merge && exists {
			body, contentType, err = mergeJSON(old, contentType, body)
			if err != nil {
				return err
			}
		} else if merge && isJSON(contentType) && !jsonObject(body) {
			return bad("A POSTed JSON document must be an object.")
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO lrs_documents (kind, activity_id, agent_key, registration, doc_id, content_type, body, etag, updated)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
ON CONFLICT (kind, activity_id, agent_key, registration, doc_id) DO UPDATE SET content_type = excluded.content_type, body = excluded.body,
etag = excluded.etag, updated = excluded.updated`, k.Kind, k.ActivityID, k.AgentKey, k.Registration, k.ID, contentType, body, etagOf(body), now)
		if err != nil {
			return fmt.Errorf("lrs: write document: %w", err)
		}
		return nil
	})
}

func isJSON(contentType string) bool {
	return strings.HasPrefix(strings.ToLower(strings.TrimSpace(contentType)), "application/json")
}

func jsonObject(b []byte) bool {
	var m map[string]json.RawMessage
	return json.Unmarshal(b, &m) == nil && m != nil
}

// mergeJSON merges a POSTed JSON object into a stored one (top-level
// properties of the new one win); anything else is a 400.
func mergeJSON(old Document, contentType string, body []byte) ([]byte, string, error) {
	if !isJSON(old.ContentType) || !isJSON(contentType) {
		return nil, "", bad("Only JSON documents can be merged by POST.")
	}
	var a, b map[string]json.RawMessage
	if json.Unmarshal(old.Body, &a) != nil || a == nil || json.Unmarshal(body, &b) != nil || b == nil {
		return nil, "", bad("Only JSON objects can be merged by POST.")
	}
	for k, v := range b {
		a[k] = v
	}
	out, err := json.Marshal(a)
	return out, "application/json", err
}

func loadDocument(ctx context.Context, q sqldb.Querier, k DocKey) (Document, error) {
	var d Document
	err := q.QueryRowContext(ctx, `SELECT content_type, body, etag, updated FROM lrs_documents
WHERE kind = $1 AND activity_id = $2 AND agent_key = $3 AND registration = $4 AND doc_id = $5`,
		k.Kind, k.ActivityID, k.AgentKey, k.Registration, k.ID).Scan(&d.ContentType, &d.Body, &d.ETag, &d.Updated)
	if errors.Is(err, sql.ErrNoRows) {
		return d, errDocMissing
	}
	if err != nil {
		return d, fmt.Errorf("lrs: load document: %w", err)
	}
	return d, nil
}

// GetDocument reads one document.
func (s *Service) GetDocument(ctx context.Context, t *platform.Tenant, scope Scope, k DocKey) (Document, error) {
	if err := allowedDocs(scope, k, false); err != nil {
		return Document{}, err
	}
	if s.ruled(scope) {
		if err := s.Rules.Document(ctx, t, scope, k, nil); err != nil {
			return Document{}, err
		}
	}
	return loadDocument(ctx, t.DB, k)
}

// DocumentIDs lists the ids of the documents under k (ID empty), changed
// after since when given.
func (s *Service) DocumentIDs(ctx context.Context, t *platform.Tenant, scope Scope, k DocKey, since *time.Time) ([]string, error) {
	if err := allowedDocs(scope, k, false); err != nil {
		return nil, err
	}
	var args sqldb.Args
	q := `SELECT doc_id FROM lrs_documents WHERE kind = ` + args.Add(k.Kind) + ` AND activity_id = ` + args.Add(k.ActivityID) +
		` AND agent_key = ` + args.Add(k.AgentKey) + ` AND registration = ` + args.Add(k.Registration)
	if since != nil {
		q += ` AND updated > ` + args.Add(*since)
	}
	rows, err := t.DB.QueryContext(ctx, q+` ORDER BY doc_id`, args...)
	if err != nil {
		return nil, fmt.Errorf("lrs: list documents: %w", err)
	}
	defer rows.Close()
	ids := []string{}
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, rows.Err()
}

// DeleteDocument deletes one document, or with k.ID empty (state only)
// every state document of the activity, agent and registration but those
// the scope holds read-only. If-Match is honoured.
func (s *Service) DeleteDocument(ctx context.Context, t *platform.Tenant, scope Scope, k DocKey, pre Preconditions) error {
	if err := allowedDocs(scope, k, true); err != nil {
		return err
	}
	if s.ruled(scope) {
		if err := s.Rules.Document(ctx, t, scope, k, &DocWrite{Delete: true}); err != nil {
			return err
		}
	}
	// The check and the delete share a transaction, so no write lands
	// between them.
	return t.Tx(ctx, func(tx *sqldb.Tx) error {
		if k.ID != "" && pre.IfMatch != "" {
			old, err := loadDocument(ctx, tx, k)
			if err != nil && !apperr.Is(err, apperr.NotFound) {
				return err
			}
			if err != nil || !matches(pre.IfMatch, old.ETag) {
				return ErrPreconditionFailed
			}
		}
		var args sqldb.Args
		q := `DELETE FROM lrs_documents WHERE kind = ` + args.Add(k.Kind) + ` AND activity_id = ` + args.Add(k.ActivityID) +
			` AND agent_key = ` + args.Add(k.AgentKey) + ` AND registration = ` + args.Add(k.Registration)
		if k.ID != "" {
			q += ` AND doc_id = ` + args.Add(k.ID)
		}
		if !scope.Admin {
			for _, id := range scope.ReadOnlyStates {
				q += ` AND doc_id <> ` + args.Add(id)
			}
		}
		if _, err := tx.ExecContext(ctx, q, args...); err != nil {
			return fmt.Errorf("lrs: delete document: %w", err)
		}
		return nil
	})
}

// WriteState writes a state document for the LMS itself (cmi5's
// LMS.LaunchData), outside any caller's scope.
func (s *Service) WriteState(ctx context.Context, t *platform.Tenant, k DocKey, body []byte) error {
	k.Kind = StateDoc
	return s.PutDocument(ctx, t, Scope{Admin: true}, k, "application/json", body, Preconditions{}, false)
}

// WriteAgentProfile writes an agent profile document for the LMS itself
// (cmi5's learner preferences) unless one is there.
func (s *Service) WriteAgentProfile(ctx context.Context, t *platform.Tenant, agentKey, id string, body []byte) error {
	k := DocKey{Kind: AgentDoc, AgentKey: agentKey, ID: id}
	err := s.PutDocument(ctx, t, Scope{Admin: true}, k, "application/json", body, Preconditions{IfNoneMatch: "*"}, false)
	if errors.Is(err, ErrPreconditionFailed) {
		return nil
	}
	return err
}
