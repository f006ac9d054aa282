package changes_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/lms-platform/lms/internal/changes"
	"github.com/lms-platform/lms/internal/redisconn/redisconntest"
)

// TestInProcess: subscribers hear a notice before Publish returns, and no
// longer once they cancel.
func TestInProcess(t *testing.T) {
	f, err := changes.New(context.Background(), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	var heard []changes.Notice
	cancel := f.Subscribe(func(n changes.Notice) { heard = append(heard, n) })
	f.Publish(context.Background(), changes.Notice{Tenant: 3, Keys: []string{"user:7"}})
	if len(heard) != 1 || heard[0].Tenant != 3 || !slices.Equal(heard[0].Keys, []string{"user:7"}) {
		t.Fatalf("heard %v", heard)
	}
	cancel()
	f.Publish(context.Background(), changes.Notice{Tenant: 3})
	if len(heard) != 1 {
		t.Errorf("heard %v after cancelling", heard)
	}
}

// TestAcrossProcesses: two feeds on one Redis stand for two processes; a
// notice published on one reaches the other, and the publisher hears its
// own notice once, at once.
func TestAcrossProcesses(t *testing.T) {
	rdb, ok := redisconntest.Client(t)
	if !ok {
		return
	}
	ctx := context.Background()
	a, err := changes.New(ctx, rdb, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := changes.New(ctx, rdb, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	atB := make(chan changes.Notice, 16)
	b.Subscribe(func(n changes.Notice) { atB <- n })
	var atA []changes.Notice
	a.Subscribe(func(n changes.Notice) { atA = append(atA, n) })
	sent := changes.Notice{Tenant: 42, Keys: []string{"token:abc"}}
	a.Publish(ctx, sent)
	if len(atA) != 1 {
		t.Fatalf("the publisher heard %v", atA)
	}
	// Notices of other tests sharing the Redis server may come first.
	wait, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	for {
		select {
		case n := <-atB:
			if n.Tenant == sent.Tenant && slices.Equal(n.Keys, sent.Keys) {
				return
			}
		case <-wait.Done():
			t.Fatal("the other process never heard the notice")
		}
	}
}
