// Package changes tells every process of a deployment which data of a
// tenant changed, so that what each keeps in memory from it (principals,
// profiles) ends at once: in process, and through Redis publish/subscribe
// when the deployment shares a Redis.
package changes

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"log/slog"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// Channel is the Redis channel notices travel on.
const Channel = "lms:changes"

// Notice says which data of a tenant changed. Keys name it (see
// access.UserKey and friends). Tenant 0 means everything of every tenant:
// the feed lost its connection to Redis and may have missed notices.
type Notice struct {
	Tenant int64    `json:"tenant"`
	Keys   []string `json:"keys"`
}

// Feed delivers published notices to its subscribers, in this process at
// once (before Publish returns, so a request's own process never serves
// what the request just changed) and in the other processes through Redis.
type Feed struct {
	rdb    *redis.Client
	pubsub *redis.PubSub
	origin string
	log    *slog.Logger
	cancel context.CancelFunc
	done   chan struct{}

	mu   sync.RWMutex
	subs map[int]func(Notice)
	next int
}

// message is a notice on the wire, with the process that sent it.
type message struct {
	Origin string `json:"origin"`
	Notice
}

// New returns an in-process feed, or with rdb one shared by every process
// using that Redis; it is subscribed when New returns. Close ends it.
func New(ctx context.Context, rdb *redis.Client, log *slog.Logger) (*Feed, error) {
	if log == nil {
		log = slog.Default()
	}
	f := &Feed{rdb: rdb, origin: rand.Text(), log: log, subs: map[int]func(Notice){}}
	if rdb == nil {
		return f, nil
	}
	f.pubsub = rdb.Subscribe(ctx, Channel)
	// The first answer confirms the subscription: notices published after
	// New returns reach this process.
	if _, err := f.pubsub.Receive(ctx); err != nil {
		f.pubsub.Close()
		return nil, err
	}
	runCtx, cancel := context.WithCancel(context.Background())
	f.cancel, f.done = cancel, make(chan struct{})
	go f.receive(runCtx)
	return f, nil
}

// Subscribe calls fn with every notice, from this process or another, and
// returns a function ending the subscription. fn must not block.
func (f *Feed) Subscribe(fn func(Notice)) (cancel func()) {
	f.mu.Lock()
	id := f.next
	f.next++
	f.subs[id] = fn
	f.mu.Unlock()
	return func() {
		f.mu.Lock()
		delete(f.subs, id)
		f.mu.Unlock()
	}
}

// Publish delivers n to this process's subscribers, then to the other
// processes. A failed publication is logged: the other processes' caches
// still end with their time to live.
func (f *Feed) Publish(ctx context.Context, n Notice) {
	f.deliver(n)
	if f.rdb == nil {
		return
	}
	b, err := json.Marshal(message{Origin: f.origin, Notice: n})
	if err == nil {
		err = f.rdb.Publish(context.WithoutCancel(ctx), Channel, b).Err()
	}
	if err != nil {
		f.log.Error("changes: publish", "tenant", n.Tenant, "error", err)
	}
}

func (f *Feed) deliver(n Notice) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	for _, fn := range f.subs {
		fn(n)
	}
}

// receive delivers the other processes' notices until ctx ends. After a
// lost connection go-redis subscribes again; notices sent meanwhile are
// lost, so every subscriber then hears that everything changed.
func (f *Feed) receive(ctx context.Context) {
	defer close(f.done)
	for {
		msg, err := f.pubsub.Receive(ctx)
		if ctx.Err() != nil {
			return
		}
		switch m := msg.(type) {
		case *redis.Message:
			var in message
			if json.Unmarshal([]byte(m.Payload), &in) == nil && in.Origin != f.origin {
				f.deliver(in.Notice)
			}
		case *redis.Subscription:
			f.deliver(Notice{})
		}
		if err != nil {
			// Redis is away: wait a little before the next attempt.
			select {
			case <-ctx.Done():
				return
			case <-time.After(100 * time.Millisecond):
			}
		}
	}
}

// Close ends the subscription to Redis.
func (f *Feed) Close() {
	if f.pubsub == nil {
		return
	}
	f.cancel()
	f.pubsub.Close()
	<-f.done
}
