package h5pstore_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/lms-platform/lms/internal/apperr"
	"github.com/lms-platform/lms/internal/h5p/h5pstore"
)

// TestConcurrentStateWrites sends many saves and deletes at once, so that
// they are committed in shared transactions: each caller gets its own
// answer (a state of unknown content is refused without failing the
// others), the last write of a key wins, and a delete queued after a save
// of the same key removes it.
func TestConcurrentStateWrites(t *testing.T) {
	for name, open := range backends(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			tn, s := open(t), newStore()
			p := openBytes(t, load(t, "hub/H5P.TrueFalse.h5p"), nil)
			if _, err := s.Install(ctx, tn, p, true); err != nil {
				t.Fatal(err)
			}
			c, err := s.SaveContent(ctx, tn, p, 1)
			if err != nil {
				t.Fatal(err)
			}
			key := func(user int64) h5pstore.UserData {
				return h5pstore.UserData{ContentID: c.ID, UserID: user, DataType: "state", ContextID: "ctx"}
			}
			const users = 40
			var wg sync.WaitGroup
			errs := make([]error, users+1)
			for u := int64(1); u <= users; u++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := range 5 {
						d := key(u)
						d.State = fmt.Sprintf(`{"user":%d,"n":%d}`, u, i)
						d.Preload = true
						if err := s.SaveUserState(ctx, tn, d); err != nil {
							errs[u] = err
							return
						}
					}
					if u%4 == 0 {
						errs[u] = s.DeleteUserState(ctx, tn, h5pstore.UserDataKey{ContentID: c.ID, UserID: u, DataType: "state", ContextID: "ctx"})
					}
				}()
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				d := key(999)
				d.ContentID = c.ID + 1000
				d.State = "{}"
				errs[0] = s.SaveUserState(ctx, tn, d)
			}()
			wg.Wait()
			if !apperr.Is(errs[0], apperr.NotFound) {
				t.Errorf("state of unknown content: %v", errs[0])
			}
			for u := int64(1); u <= users; u++ {
				if errs[u] != nil {
					t.Fatalf("user %d: %v", u, errs[u])
				}
				got, found, err := s.UserState(ctx, tn, h5pstore.UserDataKey{ContentID: c.ID, UserID: u, DataType: "state", ContextID: "ctx"})
				if err != nil {
					t.Fatal(err)
				}
				switch {
				case u%4 == 0 && found:
					t.Errorf("user %d: deleted state is back: %q", u, got.State)
				case u%4 != 0 && (!found || got.State != fmt.Sprintf(`{"user":%d,"n":4}`, u) || !got.Preload):
					t.Errorf("user %d: %v %+v", u, found, got)
				}
			}
		})
	}
}
