package cmi5_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/lms-platform/lms/internal/accounts"
	"github.com/lms-platform/lms/internal/apitest"
	"github.com/lms-platform/lms/internal/fixtures"
	"github.com/lms-platform/lms/internal/kinds/cmi5"
)

// sessions is the number of AU sessions sending statements at once.
const sessions = 200

// idMark stands for the statement id in an encoded statement.
const idMark = "{statement-id}"

// BenchmarkStatements200Sessions stores statements over HTTP from 200
// launched AU sessions at once on SQLite, each with its own auth token and
// cmi5's rules applied, and then reads every one back. The goal (README):
// at least 2,000 statements/s.

func BenchmarkStatements200Sessions(b *testing.B) {
	env := apitest.New(b, "sqlite", apitest.Options{})
	w := newWorld(b, env)
	topic := w.topic(b, w.imported(b, "course.zip", fixtures.Read(b, "cmi5/single_au_basic_responsive.zip")).ID, nil, "AU")
	all := make([]*session, sessions)
	ctx := context.Background()
	tn, release := env.OpenTenant(env.Tenant)
	for i := range all {
		email := fmt.Sprintf("au-%d@%s", i, env.Host)
		if err := env.Server.AddUser(ctx, env.Tenant, email, "secret-password", "student"); err != nil {
			b.Fatal(err)
		}
		u, err := accounts.ByEmail(ctx, tn.DB, email)
		if err != nil {
			b.Fatal(err)
		}
		tn.DB.ExecContext(ctx, `INSERT INTO course_users (course_id, user_id, created_at) VALUES ($1, $2, $3)`, w.course, u.ID, env.Clock.Now())
		if i%25 == 0 {
			// Each launch fetches twice; the fetch URL allows 60 a minute
			// per IP, and every session here comes from one.
			env.Clock.Advance(time.Minute)
		}
		token, _ := env.Login(env.Host, email, "secret-password")
		w.learner = &apitest.User{ID: u.ID, Token: token}
		all[i] = launch(b, w, topic, "")
		all[i].send(b, 200, all[i].statement(cmi5.VerbInitialized, nil, false))
	}
	release()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: sessions}}
	// Each session's statement is encoded once and sent with a fresh id
	// each time, as the load generator's own cost is not what is measured.
	encoded := map[*session][]byte{}
	for _, s := range all {
		st := s.statement("http://adlnet.gov/expapi/verbs/experienced", nil, false)
		encoded[s], _ = json.Marshal(st)
		encoded[s] = bytes.Replace(encoded[s], []byte(st["id"].(string)), []byte(idMark), 1)
	}
	// A session may send 200 statements a minute (README): a throttled
	// one moves the test clock to the next minute, once per window, as a
	// client would wait for Retry-After.
	var windowMu sync.Mutex
	nextWindow := func(sent time.Time) {
		windowMu.Lock()
		defer windowMu.Unlock()
		if now := env.Clock.Now(); now.Truncate(time.Minute).Equal(sent.Truncate(time.Minute)) {
			env.Clock.Advance(now.Truncate(time.Minute).Add(time.Minute).Sub(now))
		}
	}
	var post func(s *session) error
	post = func(s *session) error {
		sent := env.Clock.Now()
		data := bytes.Replace(encoded[s], []byte(idMark), []byte(uuid.NewString()), 1)
		req, _ := http.NewRequest("POST", env.HTTP.URL+"/api/xapi/statements", bytes.NewReader(data))
		req.Host = env.Host
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Basic "+s.auth)
		req.Header.Set("X-Experience-API-Version", "1.0.3")
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		// Read to the end, so the connection is kept for the next
		// statement as a browser's would be.
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode == http.StatusTooManyRequests {
			nextWindow(sent)
			return post(s)
		}
		if resp.StatusCode != 200 {
			return fmt.Errorf("status %d", resp.StatusCode)
		}
		return nil
	}
	var next atomic.Int64
	var failed atomic.Value
	b.ResetTimer()
	start := time.Now()
	var wg sync.WaitGroup
	for _, s := range all {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for next.Add(1) <= int64(b.N) {
				if err := post(s); err != nil {
					failed.Store(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	if err, _ := failed.Load().(error); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "statements/s")
	// Every statement is readable: launched and initialized per session,
	// and the b.N sent.
	if n := env.Count(b, `SELECT COUNT(*) FROM lrs_statements WHERE verb = 'http://adlnet.gov/expapi/verbs/experienced'`); n != b.N {
		b.Fatalf("%d statements stored, %d sent", n, b.N)
	}
	for _, s := range all {
		q := s.xapi("GET", "statements?limit=0", nil)
		if list, _ := q.Get("statements").([]any); q.Status != 200 || len(list) < 2 {
			b.Fatalf("read back: %d %s", q.Status, q.Body)
		}
	}
}
