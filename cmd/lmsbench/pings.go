package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// The pings beside a quiz round (-pingers): the rest of a school keeps
// reading while a class sits its exam. Each of the learners pings one
// reading of the course every pingEvery, their first pings spread over the
// first interval, through the round and for at least pingRounds
// intervals. Afterwards each learner's seconds on the reading, read back
// through their own program, must be what their last acknowledged ping
// answered: a stored value below it is an acknowledged second lost.

const (
	readingClass = `Lms\TopicTypes\Models\TopicContent\RichText`
	pingRounds   = 3
	pingP99Goal  = 250 * time.Millisecond
)

// pinging is the pings of one round.
type pinging struct {
	topic int64
	every time.Duration
	began time.Time
	lat   latencies
	// firstLat and laterLat split lat: a learner's first ping starts the
	// course and meets a replica that has not seen the token.
	firstLat, laterLat latencies
	// acked holds each learner's seconds on the reading as their last
	// acknowledged ping answered, and pings how many were acknowledged.
	acked, pings []atomic.Int64
	stop         chan struct{}
	wg           sync.WaitGroup
}

// startPings adds a reading to the class's lesson and starts the first n
// learners pinging it every every.
func (c *class) startPings(base string, n int, every time.Duration) (*pinging, error) {
	var reading created
	err := post(http.DefaultClient, base, c.admin, "/api/admin/topics", map[string]any{"lesson": c.lesson,
		"title": "Reading", "topicable": readingClass, "html": "<p>Read this while a class sits its exam.</p>"},
		http.StatusCreated, &reading)
	if err != nil {
		return nil, err
	}
	p := &pinging{topic: reading.ID, every: every, began: time.Now(), acked: make([]atomic.Int64, n),
		pings: make([]atomic.Int64, n), stop: make(chan struct{})}
	hc := &http.Client{Timeout: time.Minute, Transport: &http.Transport{MaxIdleConnsPerHost: 512}}
	path := "/api/courses/progress/" + strconv.FormatInt(p.topic, 10) + "/ping"
	for i, token := range c.tokens[:n] {
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			next := p.began.Add(time.Duration(i) * every / time.Duration(n))
			for {
				select {
				case <-p.stop:
					return
				case <-time.After(time.Until(next)):
				}
				t0 := time.Now()
				var ping struct {
					Seconds int64 `json:"seconds"`
				}
				err := send(hc, "PUT", base, token, path, nil, http.StatusOK, &ping)
				took := time.Since(t0)
				p.lat.add(took, err)
				if p.pings[i].Load() == 0 {
					p.firstLat.add(took, err)
				} else {
					p.laterLat.add(took, err)
				}
				if err == nil {
					p.acked[i].Store(ping.Seconds)
					p.pings[i].Add(1)
				}
				next = next.Add(every)
			}
		}()
	}
	return p, nil
}

// finish lets the pings run for their rounds, stops them, reads every
// learner's stored seconds back and prints the outcome: whether the goal
// (ping p99 under pingP99Goal, no error, no acknowledged second lost) is
// met.
func (p *pinging) finish(base string, course int64, tokens []string) bool {
	time.Sleep(time.Until(p.began.Add(pingRounds * p.every)))
	close(p.stop)
	p.wg.Wait()
	took := time.Since(p.began)
	stored := make([]int64, len(tokens))
	hc := &http.Client{Timeout: time.Minute, Transport: &http.Transport{MaxIdleConnsPerHost: 32}}
	err := inParallel(len(tokens), 32, func(i int) error {
		var err error
		stored[i], err = p.secondsOf(hc, base, course, tokens[i])
		return err
	})
	fmt.Printf("  pings beside it: %d learners, one every %s each, for %s: %s\n", len(tokens), p.every,
		took.Round(time.Second), &p.lat)
	fmt.Printf("    each learner's first ping: %s\n    the later ones: %s\n", &p.firstLat, &p.laterLat)
	if err != nil {
		fmt.Printf("  stored seconds not read: %v\n", err)
		return false
	}
	lost, equal := 0, 0
	var acked, total, expected int64
	for i := range tokens {
		a := p.acked[i].Load()
		acked += a
		total += stored[i]
		if n := p.pings[i].Load(); n > 1 {
			expected += (n - 1) * int64(p.every/time.Second)
		}
		switch {
		case stored[i] < a:
			lost++
		case stored[i] == a:
			equal++
		}
	}
	fmt.Printf("  stored seconds: %d learners, %d equal to their last acknowledged ping, %d below it (lost); "+
		"%d s stored, %d s acknowledged, %d s between the acknowledged pings by the load generator's clock\n",
		len(tokens), equal, lost, total, acked, expected)
	met := lost == 0 && p.lat.errors == 0 && p.lat.p(0.99) < pingP99Goal
	verdict := "met"
	if !met {
		verdict = "NOT met"
	}
	fmt.Printf("  goal: ping p99 < %s, no error, no acknowledged second lost: %s\n", pingP99Goal, verdict)
	return met
}

// secondsOf reads the learner's seconds on the reading from their program.
func (p *pinging) secondsOf(hc *http.Client, base string, course int64, token string) (int64, error) {
	req, _ := http.NewRequest("GET", base+"/api/courses/"+strconv.FormatInt(course, 10)+"/program", nil)
	req.Host = "localhost"
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := hc.Do(req)
	if err != nil {
		return 0, err
	}
	defer res.Body.Close()
	var out struct {
		Data struct {
			Lessons []struct {
				Topics []struct {
					ID       int64 `json:"id"`
					Progress *struct {
						Seconds int64 `json:"seconds"`
					} `json:"progress"`
				} `json:"topics"`
			} `json:"lessons"`
		} `json:"data"`
	}
	if res.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("program: %s", res.Status)
	}
	if err := json.NewDecoder(res.Body).Decode(&out); err != nil {
		return 0, err
	}
	for _, l := range out.Data.Lessons {
		for _, t := range l.Topics {
			if t.ID == p.topic && t.Progress != nil {
				return t.Progress.Seconds, nil
			}
		}
	}
	return 0, nil
}
