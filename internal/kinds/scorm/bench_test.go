package scorm_test

import (
	"bytes"
	"context"
	"crypto/rand"
	stdjson "encoding/json"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lms-platform/lms/internal/accounts"
	"github.com/lms-platform/lms/internal/apitest"
	"github.com/lms-platform/lms/internal/kinds/scorm"
)

const benchLearners = 200

const benchManifest = `<manifest identifier="b" xmlns="http://www.imsproject.org/xsd/imscp_rootv1p1p2" xmlns:adlcp="http://www.adlnet.org/xsd/adlcp_rootv1p2">
<metadata><schemaversion>1.2</schemaversion></metadata>
<organizations default="o"><organization identifier="o"><title>Bench</title><item identifier="i" identifierref="r"><title>SCO</title></item></organization></organizations>
<resources><resource identifier="r" type="webcontent" adlcp:scormtype="sco" href="index.html"/></resources></manifest>`

// benchTopic uploads a package (extra files of the given total size) and
// makes a topic of it in the world's course.
func benchTopic(b *testing.B, w *world, extra int) (sco, topic string) {
	files := map[string]string{"imsmanifest.xml": benchManifest, "index.html": "<p>SCO</p>"}
	for i := 0; extra > 0; i++ {
		n := min(extra, 1<<20)
		buf := make([]byte, n)
		rand.Read(buf)
		files[fmt.Sprintf("media/%04d.bin", i)] = string(buf)
		extra -= n
	}
	pkg := apitest.Must(upload(b, w.env, w.tutor, "bench.zip", zipOf(b, files)))(b)
	return fmt.Sprint(pkg.Scos[0].ID), fmt.Sprint(scormTopic(b, w, "Bench", pkg.ID, 0))
}

// BenchmarkCommits: 200 learners commit their model as fast as they can
// (a SCO's autocommit, every 5 s of a real session, squeezed together).
// It reports commits per second and fails when a learner's last commit
// is not the one stored (a lost or reordered commit).
func BenchmarkCommits(b *testing.B) {
	env := apitest.New(b, "sqlite", apitest.Options{})
	w := newWorld(b, env)
	sco, topic := benchTopic(b, w, 0)
	ctx := context.Background()
	tn, release := env.OpenTenant(env.Tenant)
	tokens := make([]string, benchLearners)
	for i := range tokens {
		email := fmt.Sprintf("bench-%d@%s", i, env.Host)
		if err := env.Server.AddUser(ctx, env.Tenant, email, "secret-password", "student"); err != nil {
			b.Fatal(err)
		}
		u, _ := accounts.ByEmail(ctx, tn.DB, email)
		tn.DB.ExecContext(ctx, `INSERT INTO course_users (course_id, user_id, created_at) VALUES ($1, $2, $3)`, w.course, u.ID, env.Clock.Now())
		bearer, _ := env.Login(env.Host, email, "secret-password")
		l := env.Call(b, 200, "POST", "/api/scorm/launch/"+sco, bearer, map[string]any{"topic_id": jsonNum(topic)})
		tokens[i] = l.String("data.token")
	}
	release()
	tr := &http.Transport{MaxIdleConns: 512, MaxIdleConnsPerHost: 512}
	defer tr.CloseIdleConnections()
	hc := &http.Client{Transport: tr, Timeout: time.Minute}
	seqs := make([]atomic.Int64, benchLearners)
	var next atomic.Int64
	var failed atomic.Int64
	b.ResetTimer()
	start := time.Now()
	var wg sync.WaitGroup
	per := (b.N + benchLearners - 1) / benchLearners
	for i := range tokens {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			for range per {
				seq := seqs[i].Add(1)
				next.Add(1)
				body, _ := stdjson.Marshal(map[string]any{"seq": seq, "cmi": map[string]any{"cmi.core.lesson_status": "incomplete",
					"cmi.core.lesson_location": fmt.Sprint(seq), "cmi.suspend_data": fmt.Sprintf("page=%d", seq)}})
				req, _ := http.NewRequest("POST", env.HTTP.URL+"/api/scorm/tracks/"+sco+"/commit", bytes.NewReader(body))
				req.Host = env.Host
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set(scorm.TokenHeader, tokens[i])
				res, err := hc.Do(req)
				if err != nil || res.StatusCode != 200 {
					failed.Add(1)
				}
				if res != nil {
					res.Body.Close()
				}
			}
		}(i)
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	b.ReportMetric(float64(next.Load())/elapsed.Seconds(), "commits/s")
	if failed.Load() > 0 {
		b.Fatalf("%d commits failed", failed.Load())
	}
	for i, tok := range tokens {
		res := env.Do(apitest.Request{Method: "GET", Path: "/api/scorm/tracks/" + sco, Headers: map[string]string{scorm.TokenHeader: tok}})
		want := fmt.Sprint(seqs[i].Load())
		if res.Get("data.cmi").(map[string]any)["cmi.core.lesson_location"] != want || res.Number("data.seq") != float64(seqs[i].Load()) {
			b.Fatalf("learner %d: stored %s, want commit %s", i, res.Body, want)
		}
	}
}

// BenchmarkLaunchLargePackage: the launch of a SCO of a 50 MB package,
// server time per launch (the package is extracted once, at upload).
func BenchmarkLaunchLargePackage(b *testing.B) {
	env := apitest.New(b, "sqlite", apitest.Options{})
	w := newWorld(b, env)
	sco, topic := benchTopic(b, w, 50<<20)
	b.ResetTimer()
	for b.Loop() {
		res := env.Do(apitest.Request{Method: "POST", Path: "/api/scorm/launch/" + sco, Token: w.learner.Token,
			Body: map[string]any{"topic_id": jsonNum(topic)}})
		if res.Status != 200 {
			b.Fatalf("launch: %s", res.Body)
		}
	}
}

func jsonNum(s string) stdjson.Number { return stdjson.Number(s) }
