package h5p_test

import (
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/lms-platform/lms/internal/apitest"
)

// benchRequests sends requests built by req from parallel clients through
// the real server and fails on any answer but want.
func benchRequests(b *testing.B, env *apitest.Env, want int, req func() *http.Request) {
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	b.SetParallelism(16)
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			res, err := client.Do(req())
			if err != nil {
				b.Error(err)
				return
			}
			io.Copy(io.Discard, res.Body) // read to the end, so the connection is reused
			res.Body.Close()
			if res.StatusCode != want {
				b.Errorf("status %d", res.StatusCode)
				return
			}
		}
	})
}

// BenchmarkPlayModel is GET /h5p/contents/{id}/play for a learner with a
// saved state, on SQLite. Goal: at least 5x the Lumi H5P server's
// requests/s (bench/h5p-lumi).
func BenchmarkPlayModel(b *testing.B) {
	env := apitest.New(b, "sqlite", apitest.Options{})
	id := strconv.FormatInt(installTrueFalse(b, env), 10)
	u := env.NewUser("student")
	url := env.HTTP.URL + "/h5p/contents/" + id + "/play"
	benchRequests(b, env, 200, func() *http.Request {
		r, _ := http.NewRequest("GET", url, nil)
		r.Host = env.Host
		r.Header.Set("Authorization", "Bearer "+u.Token)
		return r
	})
}

// BenchmarkStateSave is POST /h5p/contentUserData/{id}/state/0 by one
// learner, on SQLite. Goal: at least 5x the Lumi H5P server's requests/s.
func BenchmarkStateSave(b *testing.B) {
	env := apitest.New(b, "sqlite", apitest.Options{})
	id := strconv.FormatInt(installTrueFalse(b, env), 10)
	u := env.NewUser("student")
	url := env.HTTP.URL + "/h5p/contentUserData/" + id + "/state/0"
	const body = `data=%7B%22answer%22%3Atrue%7D&preload=1&invalidate=0`
	benchRequests(b, env, 200, func() *http.Request {
		r, _ := http.NewRequest("POST", url, strings.NewReader(body))
		r.Host = env.Host
		r.Header.Set("Authorization", "Bearer "+u.Token)
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		return r
	})
}

// BenchmarkWhoAmI is the cheapest authenticated route of the service, the
// ceiling of the others on this machine.
func BenchmarkWhoAmI(b *testing.B) {
	env := apitest.New(b, "sqlite", apitest.Options{})
	url := env.HTTP.URL + "/h5p/whoami"
	u := env.NewUser("student")
	benchRequests(b, env, 200, func() *http.Request {
		r, _ := http.NewRequest("GET", url, nil)
		r.Host = env.Host
		r.Header.Set("Authorization", "Bearer "+u.Token)
		return r
	})
}
