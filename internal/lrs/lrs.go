package lrs

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/lms-platform/lms/internal/access"
	"github.com/lms-platform/lms/internal/apperr"
	"github.com/lms-platform/lms/internal/clock"
	"github.com/lms-platform/lms/internal/limit"
	"github.com/lms-platform/lms/internal/lock"
	"github.com/lms-platform/lms/internal/platform"
	"github.com/lms-platform/lms/internal/sqldb"
)

// Scope is what a caller may do in the store: everything (a tenant
// admin), or what one launched AU session may (its registration and its
// learner).
type Scope struct {
	Admin bool
	// UserID is the admin, or the learner of the session.
	UserID int64
	// Session, Registration and ActorKey bound a launch's calls.
	Session      string
	Registration string
	ActorKey     string
	// ActivityID is the launch's activity (cmi5's activityId, the LMS's
	// own for the AU in the registration): the only activity whose state
	// documents the launch reaches.
	ActivityID string
	// ReadOnlyStates are the ids of the state documents the launch may
	// read but not write or delete (cmi5's LMS.LaunchData).
	ReadOnlyStates []string
}

// Launches finds the scope of a launch's auth token.
type Launches interface {
	LaunchScope(ctx context.Context, t *platform.Tenant, token string) (Scope, error)
}

// Rules are a profile's rules over the statements a launch writes (cmi5's
// session rules). Record judges and records a batch in the transaction
// that stores it, one batch of one session at a time, so the profile's
// state changes with the statements or not at all: a refusal rolls the
// batch back. It sees only the statements not stored before (a batch sent
// again after a lost answer passes). The function it returns (nil for
// none) runs after the commit, for reactions that store statements of
// their own.
//
// Admit judges one statement of a launch as the AU sent it, before the
// store fills in what it left out (id, timestamp). Document judges a
// launch's access to one document once the scope allows it: a read (w
// nil), a write or a delete.
type Rules interface {
	Admit(scope Scope, st *Statement) error
	Record(ctx context.Context, tx *sqldb.Tx, t *platform.Tenant, scope Scope, statements []*Statement) (func(context.Context) error, error)
	Document(ctx context.Context, t *platform.Tenant, scope Scope, k DocKey, w *DocWrite) error
}

// DocWrite is a launch's write of a document: a PUT, a POST (Merge) or a
// DELETE.
type DocWrite struct {
	ContentType string
	Body        []byte
	Merge       bool
	Delete      bool
}

// ruled tells whether a scope's calls go through the Rules: a launch's,
// never an admin's.
func (s *Service) ruled(scope Scope) bool { return s.Rules != nil && !scope.Admin }

// Service is the store.
type Service struct {
	Clock    clock.Clock
	Launches Launches
	Rules    Rules
	// Principal reads an API access token sent as the password of Basic
	// credentials, for clients that speak Basic only.
	Principal func(ctx context.Context, t *platform.Tenant, token string) (*access.Principal, error)
	// Locker orders the batches of one launch session.
	Locker lock.Locker
	// Limiter counts the statements of launch sessions
	// (StatementsPerMinute); nil for none.
	Limiter limit.Limiter
}

var (
	errForbidden = apperr.New(apperr.Forbidden, "This credential may not do that in the LRS.")
	errNotFound  = apperr.New(apperr.NotFound, "No such statement.")
)

func (s *Service) now() time.Time { return s.Clock.Now().UTC().Truncate(time.Millisecond) }

// sessionLockTTL bounds how long one batch of a session may hold its
// session's lock.
const sessionLockTTL = 30 * time.Second

// sessionLock orders the batches of one launch session, across replicas
// (the cmi5 rules read what the session's earlier batches stored); an
// admin's batches belong to no session.
func (s *Service) sessionLock(ctx context.Context, t *platform.Tenant, id string) (func(), error) {
	if id == "" {
		return func() {}, nil
	}
	unlock, err := s.Locker.Acquire(ctx, "lrs-session:"+strconv.FormatInt(t.ID, 10)+":"+id, sessionLockTTL)
	if err != nil {
		return nil, err
	}
	return func() { unlock(context.WithoutCancel(ctx)) }, nil
}

// authority is the agent the store names as the authority of what a
// scope writes.
func authority(t *platform.Tenant, scope Scope) map[string]any {
	name := fmt.Sprintf("user-%d", scope.UserID)
	if !scope.Admin {
		name = "cmi5-session-" + scope.Session
	}
	return map[string]any{"objectType": "Agent", "account": map[string]any{"homePage": "https://" + t.PrimaryHost(), "name": name}}
}

// Attachment is the content of an attachment sent with statements.
type Attachment struct {
	ContentType string
	Body        []byte
}

// Store stores statements (in order) and returns their ids. An id the
// store has for the same statement is left as it is; for another one, the
// batch is refused with 409. A launch scope may write only statements of
// its learner and registration, void only its own statements, send at
// most StatementsPerMinute statements a minute, and passes the Rules.
func (s *Service) Store(ctx context.Context, t *platform.Tenant, scope Scope, list []*Statement, attachments map[string]Attachment) ([]string, error) {
	if len(list) > MaxBatch {
		return nil, errBatchTooLarge
	}
	if err := s.allowStatements(ctx, t, scope, len(list)); err != nil {
		return nil, err
	}
	now := s.now()
	seen := map[string]bool{}
	for _, st := range list {
		if s.ruled(scope) {
			if err := s.Rules.Admit(scope, st); err != nil {
				return nil, err
			}
		}
		if st.ID == "" {
			st.ID = uuid.NewString()
		}
		if seen[st.ID] {
			return nil, bad("The statement id %s appears twice in the batch.", st.ID)
		}
		seen[st.ID] = true
		if !scope.Admin && (st.ActorKey != scope.ActorKey || st.Registration != scope.Registration) {
			return nil, apperr.New(apperr.Forbidden, "A launch may write only statements of its learner and registration.")
		}
		for _, a := range st.Attachments {
			if _, ok := attachments[a.SHA2]; !ok && a.FileURL == "" {
				return nil, bad("The attachment %s has neither a fileUrl nor its content in the request.", a.SHA2)
			}
		}
		if err := checkSignature(st, attachments); err != nil {
			return nil, err
		}
		if st.Verb == VerbVoided && !scope.Admin {
			if err := mayVoid(ctx, t, scope, st.ObjectID); err != nil {
				return nil, err
			}
		}
		st.Object["id"] = st.ID
		st.Object["stored"] = now.Format(time.RFC3339Nano)
		st.Object["authority"] = authority(t, scope)
		if _, ok := st.Object["timestamp"]; !ok {
			st.Object["timestamp"] = st.Object["stored"]
		}
		if _, ok := st.Object["version"]; !ok {
			st.Object["version"] = "1.0.0"
		}
	}
	for sha := range attachments {
		used := false
		for _, st := range list {
			for _, a := range st.Attachments {
				used = used || a.SHA2 == sha
			}
		}
		if !used {
			return nil, bad("The request carries an attachment (%s) no statement declares.", sha)
		}
	}
	bodies := make([][]byte, len(list))
	for i, st := range list {
		var err error
		if bodies[i], err = json.Marshal(st.Object); err != nil {
			return nil, fmt.Errorf("lrs: encode statement: %w", err)
		}
	}
	release, err := s.sessionLock(ctx, t, scope.Session)
	if err != nil {
		return nil, err
	}
	defer release()
	var after func(context.Context) error
	err = t.Tx(ctx, func(tx *sqldb.Tx) error {
		fresh, err := insertStatements(ctx, tx, list, bodies, attachments, now)
		if err != nil || !s.ruled(scope) || len(fresh) == 0 {
			return err
		}
		after, err = s.Rules.Record(ctx, tx, t, scope, fresh)
		return err
	})
	if err != nil {
		return nil, err
	}
	if after != nil {
		if err := after(ctx); err != nil {
			return nil, err
		}
	}
	ids := make([]string, len(list))
	for i, st := range list {
		ids[i] = st.ID
	}
	return ids, nil
}

var errVoidOthers = apperr.New(apperr.Forbidden, "A launch may void only its own statements.")

// mayVoid tells whether a launch may void the statement id: one of its
// learner's in its registration. The statement must be stored already: a
// launch cannot void in advance what another may store under that id.
func mayVoid(ctx context.Context, t *platform.Tenant, scope Scope, id string) error {
	actor, reg, err := statementOwner(ctx, t.DB, id)
	if apperr.Is(err, apperr.NotFound) {
		return errVoidOthers
	}
	if err != nil {
		return err
	}
	if actor != scope.ActorKey || reg != scope.Registration {
		return errVoidOthers
	}
	return nil
}

// sameStatement tells whether two statements are the same apart from
// what the store sets (stored, authority, version).
func sameStatement(a, b map[string]any) bool {
	strip := func(m map[string]any) map[string]any {
		out := map[string]any{}
		for k, v := range m {
			if k != "stored" && k != "authority" && k != "version" && k != "timestamp" {
				out[k] = v
			}
		}
		return out
	}
	ja, _ := json.Marshal(strip(a))
	jb, _ := json.Marshal(strip(b))
	var x, y any
	json.Unmarshal(ja, &x)
	json.Unmarshal(jb, &y)
	return reflect.DeepEqual(x, y)
}

// Get returns one statement: by id (404 when voided), or a voided one by
// voidedStatementId.
func (s *Service) Get(ctx context.Context, t *platform.Tenant, scope Scope, id string, voided bool) (*StoredStatement, error) {
	if !IsUUID(id) {
		return nil, bad("The statement id must be a UUID.")
	}
	st, err := statementByID(ctx, t.DB, strings.ToLower(id))
	if err != nil {
		return nil, err
	}
	if st.Voided != voided {
		return nil, errNotFound
	}
	if !scope.Admin && st.Registration != scope.Registration {
		return nil, errNotFound
	}
	return st, nil
}

// StoredStatement is a statement as stored.
type StoredStatement struct {
	Seq          int64
	ID           string
	Registration string
	Voided       bool
	Stored       time.Time
	Body         json.RawMessage
}

// Query reads a page of the statements matching q (see queryStatements
// for budget and format); a launch sees its registration only.
func (s *Service) Query(ctx context.Context, t *platform.Tenant, scope Scope, q Filter, budget int, format func(json.RawMessage) json.RawMessage) (Page, error) {
	if !scope.Admin {
		q.Within = scope.Registration
	}
	return queryStatements(ctx, t.DB, q, budget, format)
}
