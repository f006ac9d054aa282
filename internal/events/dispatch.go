package events

import (
	"cmp"
	"context"
	crand "crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"math/rand/v2"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/lms-platform/lms/internal/clock"
	"github.com/lms-platform/lms/internal/platform"
	"github.com/lms-platform/lms/internal/sqldb"
)

// Listener handles one event of a tenant. Listeners must be idempotent:
// delivery is at least once, since a process that dies after a listener
// ran but before the delivery was recorded leaves the pair to be
// delivered again (by itself after a restart, or by another replica).
type Listener func(ctx context.Context, t *platform.Tenant, ev Stored) error

// Targets names the pairs a family of listeners adds for one event (the
// webhook endpoints subscribed to it, each its own pair): names all start
// with the family's prefix, and Run delivers one of them.
type Targets struct {
	Prefix string
	// Match returns the listener names (Prefix + something) that ev goes
	// to; it runs when the event's pairs are made.
	Match func(ctx context.Context, q sqldb.Querier, t *platform.Tenant, ev Stored) ([]string, error)
	// Run delivers ev to the named listener.
	Run func(ctx context.Context, t *platform.Tenant, name string, ev Stored) error
	// GaveUp, when set, is called after the named pair failed for good.
	GaveUp func(ctx context.Context, t *platform.Tenant, name string, ev Stored, reason string)
}

// Retry schedule: the first retry comes FirstRetry after a failure, each
// next one twice as late up to MaxRetryDelay, with a jitter of up to a
// quarter less, for the tenant's retry window (DefaultWindow unless
// Window says otherwise); after it the pair fails for good.
const (
	FirstRetry    = 5 * time.Second
	MaxRetryDelay = 6 * time.Hour
	DefaultWindow = 72 * time.Hour
)

// DefaultLease is how long a dispatcher holds the pairs it runs; a
// listener gets somewhat less (see Dispatcher.Lease).
const DefaultLease = 5 * time.Minute

// maxSleep bounds a dispatcher's sleep until the next due pair, so a
// pair made due by another way (an admin's retry on another replica) is
// not missed for long.
const maxSleep = time.Hour

// Dispatcher delivers recorded events to listeners, each (event, listener)
// pair on its own.
type Dispatcher struct {
	mu        sync.RWMutex // guards names, listeners, wants, targets
	names     []string
	listeners map[string]Listener
	// wants holds, for the listeners of some events only, which events
	// they get a pair of; a listener without an entry gets every event.
	wants   map[string]func(Stored) bool
	targets []Targets
	clock   clock.Clock
	log     *slog.Logger
	// Poll is how often a PostgreSQL tenant's dispatcher looks for pairs
	// without a wake-up: other replicas write events and retries too.
	Poll time.Duration
	// Lease is how long a claimed pair is this dispatcher's (wall clock);
	// its listener is cancelled at four fifths of it.
	Lease time.Duration
	// Window returns the tenant's retry window; nil is DefaultWindow.
	Window func(ctx context.Context, t *platform.Tenant) time.Duration
	// LeaseClock is the clock of leases, the real one unless a test sets
	// it: a lease is about processes alive, not about the injected time
	// that tests move by days.
	LeaseClock clock.Clock
}

// Tuning sets a dispatcher's Poll, Lease and Window at construction; a
// zero field keeps the default.
type Tuning struct {
	Poll, Lease time.Duration
	Window      func(ctx context.Context, t *platform.Tenant) time.Duration
}

// NewDispatcher returns a dispatcher without listeners.
func NewDispatcher(clk clock.Clock, log *slog.Logger, tune Tuning) *Dispatcher {
	d := &Dispatcher{listeners: map[string]Listener{}, clock: clk, log: log, Poll: 5 * time.Second,
		Lease: DefaultLease, LeaseClock: clock.System{}, Window: tune.Window}
	if tune.Poll > 0 {
		d.Poll = tune.Poll
	}
	if tune.Lease > 0 {
		d.Lease = tune.Lease
	}
	return d
}

// Listen adds a listener of every event under a stable name, the name its
// deliveries are recorded and listed under. Events recorded before get no
// pair for it.
func (d *Dispatcher) Listen(name string, l Listener) { d.ListenTo(name, nil, l) }

// ListenTo adds a listener as Listen does, which gets a pair only of the
// events that wants accepts when their pairs are made (nil: every event).
// A pair costs its writes, a claim and a record whether the listener acts
// or not, and most listeners react to a few events.
func (d *Dispatcher) ListenTo(name string, wants func(Stored) bool, l Listener) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if _, dup := d.listeners[name]; dup || name == "" {
		panic("events: listener name empty or taken: " + name)
	}
	// Copied on write: dispatchers read the old maps without the lock.
	listeners := make(map[string]Listener, len(d.listeners)+1)
	maps.Copy(listeners, d.listeners)
	listeners[name] = l
	d.listeners = listeners
	if wants != nil {
		byListener := make(map[string]func(Stored) bool, len(d.wants)+1)
		maps.Copy(byListener, d.wants)
		byListener[name] = wants
		d.wants = byListener
	}
	d.names = append(d.names[:len(d.names):len(d.names)], name)
}

// ListenTargets adds a family of listeners whose pairs depend on the
// event and the tenant's data (webhook endpoints).
func (d *Dispatcher) ListenTargets(tg Targets) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.targets = append(d.targets[:len(d.targets):len(d.targets)], tg)
}

// Listeners are the names of the fixed listeners (those added with Listen
// or ListenTo), in the order added.
func (d *Dispatcher) Listeners() []string {
	d.mu.RLock()
	defer d.mu.RUnlock()
	return append([]string(nil), d.names...)
}

// registered returns the listeners and target families.
func (d *Dispatcher) registered() (map[string]Listener, []Targets) {
	d.mu.RLock()
	defer d.mu.RUnlock()
	return d.listeners, d.targets
}

// listenersOf names the fixed listeners that get a pair of ev.
func (d *Dispatcher) listenersOf(ev Stored) []string {
	d.mu.RLock()
	defer d.mu.RUnlock()
	out := make([]string, 0, len(d.names))
	for _, name := range d.names {
		if wants := d.wants[name]; wants == nil || wants(ev) {
			out = append(out, name)
		}
	}
	return out
}

// Named accepts the events of the names given (for ListenTo).
func Named(names ...string) func(Stored) bool {
	return func(ev Stored) bool { return slices.Contains(names, ev.Name) }
}

// permanent marks an error that a retry cannot cure.
type permanent struct{ err error }

func (p permanent) Error() string { return p.err.Error() }
func (p permanent) Unwrap() error { return p.err }

// Permanent wraps err so the pair fails for good at once, with err as its
// reason: a partner's answer that means "never" (unknown user, refused
// scope), not "later".
func Permanent(err error) error {
	if err == nil {
		return nil
	}
	return permanent{err}
}

// IsPermanent reports whether err was wrapped by Permanent.
func IsPermanent(err error) bool {
	var p permanent
	return errors.As(err, &p)
}

// Start runs the dispatcher of one tenant until the returned stop is
// called. It fits platform.Options.OnOpen.
//
// It sleeps until the earliest due pair (the injected clock's time), a
// commit's kick, or on PostgreSQL the poll; on SQLite a tenant with
// nothing due is not polled at all, so idle tenants cost nothing and their
// pools can close their connections.
func (d *Dispatcher) Start(t *platform.Tenant) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if t.DB.Dialect != sqldb.Postgres {
			// One process writes an SQLite tenant: leases left in it are a
			// dead process's, which ran out with it.
			if _, err := t.DB.ExecContext(ctx, `UPDATE event_deliveries SET claim = NULL, claimed_until = NULL
				WHERE state = 'pending' AND claim IS NOT NULL`); err != nil && ctx.Err() == nil {
				d.log.Error("release delivery leases", "tenant", t.ID, "error", err)
			}
		}
		for {
			next, err := d.dispatch(ctx, t)
			if ctx.Err() != nil {
				return
			}
			var wake <-chan time.Time
			switch {
			case err != nil:
				d.log.Error("dispatch events", "tenant", t.ID, "error", err)
				wake = time.After(d.Poll)
			case !next.IsZero() && next.After(d.clock.Now()):
				wake = clock.After(d.clock, min(next.Sub(d.clock.Now()), maxSleep))
			case !next.IsZero():
				// Due but not claimable now (this run's own failure with a
				// clock set back): look again at the poll.
				wake = time.After(d.Poll)
			}
			var poll <-chan time.Time
			if t.DB.Dialect == sqldb.Postgres {
				poll = time.After(d.Poll)
			}
			select {
			case <-ctx.Done():
				return
			case <-t.Kicked():
			case <-wake:
			case <-poll:
			}
		}
	}()
	return func() { cancel(); <-done }
}

// batchSize is how many events or pairs one step takes.
const batchSize = 100

// DispatchPending makes the pairs of new events and delivers the pairs
// that are due, each at most once per call, and returns how many were
// delivered. A failed pair is retried on a later call once due.
//
// Pairs are claimed with a lease: claim and claimed_until are set in one
// short statement (on PostgreSQL over rows locked FOR UPDATE SKIP LOCKED,
// so two replicas never claim the same pair), and the listener runs
// outside any transaction, so a slow partner holds no connection or lock.
// A replica that dies leaves its lease to run out; another then runs the
// pair again (at least once).
func (d *Dispatcher) DispatchPending(ctx context.Context, t *platform.Tenant) (int, error) {
	n := 0
	_, err := d.run(ctx, t, &n)
	return n, err
}

// dispatch is DispatchPending returning the time the next pending pair is
// due (zero when none is).
func (d *Dispatcher) dispatch(ctx context.Context, t *platform.Tenant) (time.Time, error) {
	n := 0
	return d.run(ctx, t, &n)
}

func (d *Dispatcher) run(ctx context.Context, t *platform.Tenant, delivered *int) (time.Time, error) {
	if err := d.expand(ctx, t); err != nil {
		return time.Time{}, err
	}
	seen := map[int64]bool{}
	for {
		batch, err := d.claim(ctx, t, seen)
		if err != nil {
			return time.Time{}, err
		}
		if len(batch) == 0 {
			break
		}
		for _, p := range batch {
			ok, err := d.deliverPair(ctx, t, p)
			if err != nil {
				return time.Time{}, err
			}
			if ok {
				*delivered++
			} else {
				// Only a failed pair can be pending again in this call.
				seen[p.id] = true
			}
		}
	}
	return d.nextDue(ctx, t)
}

// expand makes the pairs of the events that have none yet and marks them
// (dispatched_at is the time their pairs were made).
func (d *Dispatcher) expand(ctx context.Context, t *platform.Tenant) error {
	lock := ""
	if t.DB.Dialect == sqldb.Postgres {
		lock = " FOR UPDATE SKIP LOCKED"
	}
	for {
		n := 0
		err := t.DB.Tx(ctx, func(tx *sqldb.Tx) error {
			rows, err := tx.QueryContext(ctx, `SELECT id, name, user_id, payload, created_at FROM events
				WHERE dispatched_at IS NULL ORDER BY id LIMIT $1`+lock, batchSize)
			if err != nil {
				return fmt.Errorf("events: new events: %w", err)
			}
			evs, err := scanEvents(rows)
			if err != nil {
				return err
			}
			now := d.clock.Now()
			for _, ev := range evs {
				_, targets := d.registered()
				names := d.listenersOf(ev)
				for _, tg := range targets {
					more, err := tg.Match(ctx, tx, t, ev)
					if err != nil {
						return err
					}
					names = append(names, more...)
				}
				if err := insertPairs(ctx, tx, ev.ID, names, now); err != nil {
					return err
				}
				if _, err := tx.ExecContext(ctx, `UPDATE events SET dispatched_at = $1 WHERE id = $2`, now, ev.ID); err != nil {
					return err
				}
			}
			n = len(evs)
			return nil
		})
		if err != nil || n < batchSize {
			return err
		}
	}
}

// insertPairs makes the pairs of an event with the listeners named, in
// one statement: a statement each was most of the cost of making them.
func insertPairs(ctx context.Context, tx *sqldb.Tx, event int64, listeners []string, now time.Time) error {
	if len(listeners) == 0 {
		return nil
	}
	var q strings.Builder
	q.WriteString(`INSERT INTO event_deliveries
		(event_id, listener, state, attempts, next_attempt_at, last_error, created_at, updated_at) VALUES `)
	args := []any{event, now}
	for i, name := range listeners {
		if i > 0 {
			q.WriteString(", ")
		}
		args = append(args, name)
		fmt.Fprintf(&q, "($1, $%d, 'pending', 0, $2, '', $2, $2)", len(args))
	}
	q.WriteString(" ON CONFLICT (event_id, listener) DO NOTHING")
	if _, err := tx.ExecContext(ctx, q.String(), args...); err != nil {
		return fmt.Errorf("events: pairs of %d: %w", event, err)
	}
	return nil
}

// pair is a claimed (event, listener) pair.
type pair struct {
	id       int64
	listener string
	attempts int
	claim    string
	since    time.Time // start of its retry window
	due      time.Time // when it fell due
	ev       Stored
}

// claim leases the next due pairs not yet run in this call.
func (d *Dispatcher) claim(ctx context.Context, t *platform.Tenant, seen map[int64]bool) ([]pair, error) {
	token := newClaim()
	now, wall := d.clock.Now(), d.LeaseClock.Now()
	lock := ""
	if t.DB.Dialect == sqldb.Postgres {
		lock = " FOR UPDATE SKIP LOCKED"
	}
	// A pair this call already ran (failed, and due again at once: a
	// clock behind) waits for the next call.
	var skip strings.Builder
	args := []any{token, wall.Add(d.Lease), now, wall, batchSize}
	for id := range seen {
		if skip.Len() == 0 {
			skip.WriteString(" AND id NOT IN (")
		} else {
			skip.WriteString(", ")
		}
		args = append(args, id)
		fmt.Fprintf(&skip, "$%d", len(args))
	}
	if skip.Len() > 0 {
		skip.WriteString(")")
	}
	free := `state = 'pending' AND next_attempt_at <= $3 AND (claimed_until IS NULL OR claimed_until <= $4)`
	// The claim returns its pairs, and their events are read by id: a
	// join on the claim token was planned, on tables PostgreSQL had not
	// analysed yet (a burst of events), as a hash of every event ever
	// recorded, for each batch.
	rows, err := t.DB.QueryContext(ctx, `UPDATE event_deliveries SET claim = $1, claimed_until = $2
		WHERE `+free+` AND id IN (SELECT id FROM event_deliveries WHERE `+free+skip.String()+`
		ORDER BY next_attempt_at, id LIMIT $5`+lock+`)
		RETURNING id, listener, attempts, created_at, event_id, next_attempt_at`, args...)
	if err != nil {
		return nil, fmt.Errorf("events: claim: %w", err)
	}
	var out []pair
	var eventIDs []int64
	for rows.Next() {
		p := pair{claim: token}
		if err := rows.Scan(&p.id, &p.listener, &p.attempts, &p.since, &p.ev.ID, &p.due); err != nil {
			rows.Close()
			return nil, err
		}
		out, eventIDs = append(out, p), append(eventIDs, p.ev.ID)
	}
	rows.Close()
	if err := rows.Err(); err != nil || len(out) == 0 {
		return nil, err
	}
	in, arg := sqldb.AnyOf(t.DB.Dialect, "id", 1, sqldb.UniqueIDs(eventIDs))
	evs, err := t.DB.QueryContext(ctx, `SELECT id, name, user_id, payload, created_at FROM events WHERE `+in, arg)
	if err != nil {
		return nil, fmt.Errorf("events: claimed: %w", err)
	}
	stored, err := scanEvents(evs)
	if err != nil {
		return nil, err
	}
	byID := make(map[int64]Stored, len(stored))
	for _, ev := range stored {
		byID[ev.ID] = ev
	}
	// A pair whose event was deleted since the claim went with it (ON
	// DELETE CASCADE); the others run in the order they fell due.
	out = slices.DeleteFunc(out, func(p pair) bool {
		_, kept := byID[p.ev.ID]
		return !kept
	})
	for i := range out {
		out[i].ev = byID[out[i].ev.ID]
	}
	slices.SortFunc(out, func(a, b pair) int { return cmp.Or(a.due.Compare(b.due), cmp.Compare(a.id, b.id)) })
	return out, nil
}

func newClaim() string {
	b := make([]byte, 12)
	crand.Read(b)
	return hex.EncodeToString(b)
}

// deliverPair runs one claimed pair and records its outcome, under its
// claim (a lease that ran out and was taken over records nothing). Only a
// failure to record, or the dispatcher stopping, is returned.
func (d *Dispatcher) deliverPair(ctx context.Context, t *platform.Tenant, p pair) (bool, error) {
	lctx, cancel := context.WithTimeout(ctx, d.Lease*4/5)
	err := d.call(lctx, t, p)
	cancel()
	if err != nil && ctx.Err() != nil {
		// Stopping: not an attempt. The pair, and the rest of its batch,
		// are released for the next run.
		_, rerr := t.DB.ExecContext(context.Background(), `UPDATE event_deliveries SET claim = NULL, claimed_until = NULL
			WHERE claim = $1`, p.claim)
		return false, errors.Join(ctx.Err(), rerr)
	}
	now := d.clock.Now()
	if err == nil {
		_, err := t.DB.ExecContext(ctx, `UPDATE event_deliveries SET state = 'delivered', attempts = attempts + 1,
			delivered_at = $1, updated_at = $1, claim = NULL, claimed_until = NULL WHERE id = $2 AND claim = $3`,
			now, p.id, p.claim)
		return err == nil, err
	}
	reason := err.Error()
	next, dead := d.nextAttempt(ctx, t, p, now, err)
	state := "pending"
	if dead {
		state = "failed"
		d.log.Warn("event delivery failed for good", "tenant", t.ID, "event", p.ev.Name, "id", p.ev.ID,
			"listener", p.listener, "attempts", p.attempts+1, "error", reason)
	} else {
		d.log.Info("event delivery failed", "tenant", t.ID, "event", p.ev.Name, "id", p.ev.ID,
			"listener", p.listener, "attempts", p.attempts+1, "next", next, "error", reason)
	}
	if _, err := t.DB.ExecContext(ctx, `UPDATE event_deliveries SET state = $1, attempts = attempts + 1,
		next_attempt_at = $2, last_error = $3, updated_at = $4, claim = NULL, claimed_until = NULL
		WHERE id = $5 AND claim = $6`, state, next, reason, now, p.id, p.claim); err != nil {
		return false, err
	}
	if dead {
		d.gaveUp(ctx, t, p, reason)
	}
	return false, nil
}

// call runs the pair's listener, a panic counting as its failure.
func (d *Dispatcher) call(ctx context.Context, t *platform.Tenant, p pair) (err error) {
	defer func() {
		if r := recover(); r != nil {
			d.log.Error("event listener panicked", "tenant", t.ID, "listener", p.listener, "panic", r, "at", panicSite())
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	listeners, targets := d.registered()
	if l, ok := listeners[p.listener]; ok {
		return l(ctx, t, p.ev)
	}
	for _, tg := range targets {
		if strings.HasPrefix(p.listener, tg.Prefix) {
			return tg.Run(ctx, t, p.listener, p.ev)
		}
	}
	return Permanent(fmt.Errorf("no listener %q in this version", p.listener))
}

// panicSite is the first frame of the stack outside the runtime and this
// file: where the listener panicked.
func panicSite() string {
	for _, line := range strings.Split(string(debug.Stack()), "\n") {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "/") && !strings.Contains(line, "/runtime/") && !strings.Contains(line, "events/dispatch.go") {
			return line
		}
	}
	return ""
}

func (d *Dispatcher) gaveUp(ctx context.Context, t *platform.Tenant, p pair, reason string) {
	_, targets := d.registered()
	for _, tg := range targets {
		if tg.GaveUp != nil && strings.HasPrefix(p.listener, tg.Prefix) {
			tg.GaveUp(ctx, t, p.listener, p.ev, reason)
		}
	}
}

// nextAttempt is when a pair that failed at now (its attempts-th attempt
// before this one) is tried again, or dead when it is not: the error is
// permanent, or the next try would fall after the retry window counted
// from the pair's making (the event's time, or an admin's retry).
func (d *Dispatcher) nextAttempt(ctx context.Context, t *platform.Tenant, p pair, now time.Time, err error) (time.Time, bool) {
	if IsPermanent(err) {
		return now, true
	}
	window := DefaultWindow
	if d.Window != nil {
		window = d.Window(ctx, t)
	}
	next := now.Add(RetryDelay(p.attempts + 1))
	if next.After(p.since.Add(window)) {
		return now, true
	}
	return next, false
}

// RetryDelay is the wait after a pair's failed attempt n (1 for the first):
// FirstRetry doubled n-1 times, at most MaxRetryDelay, less a random jitter
// of up to a quarter, so pairs that failed together do not all come back
// at once.
func RetryDelay(n int) time.Duration {
	delay := MaxRetryDelay
	if n < 32 {
		delay = min(FirstRetry<<(n-1), MaxRetryDelay)
	}
	return delay - time.Duration(rand.Int64N(int64(delay/4)+1))
}

// nextDue is when the earliest pending pair is due, zero when none is.
// Pairs leased by another replica are left to the poll.
func (d *Dispatcher) nextDue(ctx context.Context, t *platform.Tenant) (time.Time, error) {
	var next time.Time
	err := t.DB.QueryRowContext(ctx, `SELECT next_attempt_at FROM event_deliveries WHERE state = 'pending'
		AND (claimed_until IS NULL OR claimed_until <= $1) ORDER BY next_attempt_at LIMIT 1`, d.LeaseClock.Now()).Scan(&next)
	if errors.Is(err, sql.ErrNoRows) {
		return time.Time{}, nil
	}
	if err != nil {
		return time.Time{}, fmt.Errorf("events: next due: %w", err)
	}
	return next, nil
}

func scanEvents(rows *sql.Rows) ([]Stored, error) {
	defer rows.Close()
	var out []Stored
	for rows.Next() {
		var ev Stored
		var user sql.NullInt64
		var payload string
		if err := rows.Scan(&ev.ID, &ev.Name, &user, &payload, &ev.CreatedAt); err != nil {
			return nil, err
		}
		ev.UserID = user.Int64
		if err := json.Unmarshal([]byte(payload), &ev.Payload); err != nil {
			return nil, fmt.Errorf("events: decode %d: %w", ev.ID, err)
		}
		out = append(out, ev)
	}
	return out, rows.Err()
}
