// Command lmsbench is the load run of `make bench`: it starts the platform
// on SQLite in a temporary directory, logs a user in and measures
// requests per second and latency percentiles of GET /api/profile/me over
// keep-alive connections, load generator included. With -binary it also
// measures how long `lms serve` takes to serve its first request and its
// resident memory when idle with one tenant.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/lms-platform/lms/internal/config"
	"github.com/lms-platform/lms/internal/server"
)

func main() {
	conns := flag.Int("c", 32, "concurrent connections")
	dur := flag.Duration("d", 10*time.Second, "duration of the load run")
	binary := flag.String("binary", "bin/lms", "lms binary for the start-up and memory run (empty: skip)")
	flag.Parse()
	if err := loadRun(*conns, *dur); err != nil {
		fmt.Fprintln(os.Stderr, "lmsbench:", err)
		os.Exit(1)
	}
	if *binary != "" {
		if err := processRun(*binary); err != nil {
			fmt.Fprintln(os.Stderr, "lmsbench:", err)
			os.Exit(1)
		}
	}
}

func loadRun(conns int, dur time.Duration) error {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "lmsbench")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	cfg := &config.Config{DataDir: dir, PlatformHost: "localhost", AdminEmail: "admin@localhost",
		AdminPass: "bench-password", PasswordCost: "test", LogLevel: "error"}
	s, err := server.New(ctx, cfg, server.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		return err
	}
	defer s.Close()
	if _, _, err := s.EnsurePlatform(ctx); err != nil {
		return err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: s.Handler}
	go srv.Serve(ln)
	defer srv.Close()
	base := "http://" + ln.Addr().String()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: conns, MaxConnsPerHost: conns}}
	token, err := login(client, base)
	if err != nil {
		return err
	}

	var mu sync.Mutex
	var all []time.Duration
	var failures int
	deadline := time.Now().Add(dur)
	var wg sync.WaitGroup
	start := time.Now()
	for range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var mine []time.Duration
			bad := 0
			for time.Now().Before(deadline) {
				req, _ := http.NewRequest("GET", base+"/api/profile/me", nil)
				req.Host = "localhost"
				req.Header.Set("Authorization", "Bearer "+token)
				t0 := time.Now()
				res, err := client.Do(req)
				if err != nil {
					bad++
					continue
				}
				io.Copy(io.Discard, res.Body)
				res.Body.Close()
				if res.StatusCode != 200 {
					bad++
				}
				mine = append(mine, time.Since(t0))
			}
			mu.Lock()
			all = append(all, mine...)
			failures += bad
			mu.Unlock()
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	slices.Sort(all)
	pct := func(p float64) time.Duration {
		if len(all) == 0 {
			return 0
		}
		return all[min(len(all)-1, int(float64(len(all))*p))]
	}
	fmt.Printf("GET /api/profile/me (SQLite, %d connections, %s): %.0f requests/s, %d failed\n",
		conns, dur, float64(len(all))/elapsed.Seconds(), failures)
	fmt.Printf("  latency p50 %s  p90 %s  p99 %s  max %s\n", pct(0.50), pct(0.90), pct(0.99), pct(1))
	if failures > 0 {
		return fmt.Errorf("%d requests failed", failures)
	}
	return nil
}

func login(client *http.Client, base string) (string, error) {
	body, _ := json.Marshal(map[string]any{"email": "admin@localhost", "password": "bench-password", "remember_me": true})
	req, _ := http.NewRequest("POST", base+"/api/auth/login", bytes.NewReader(body))
	req.Host = "localhost"
	req.Header.Set("Content-Type", "application/json")
	res, err := client.Do(req)
	if err != nil {
		return "", err
	}
	defer res.Body.Close()
	var out struct {
		Data struct {
			Token string `json:"token"`
		} `json:"data"`
	}
	if err := json.NewDecoder(res.Body).Decode(&out); err != nil || out.Data.Token == "" {
		return "", fmt.Errorf("login failed: %d", res.StatusCode)
	}
	return out.Data.Token, nil
}

// processRun starts `lms serve` on a prepared data directory, times its
// first served request and reads its resident memory once idle.
func processRun(binary string) error {
	dir, err := os.MkdirTemp("", "lmsbench-proc")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	addr := ln.Addr().String()
	ln.Close()
	env := append(os.Environ(), "LMS_DATA_DIR="+dir, "LMS_API_ADDR="+addr, "LMS_ADMIN_PASSWORD=bench-password",
		"LMS_LOG_LEVEL=error")
	// First start creates the platform tenant (key generation, migrations);
	// the measured start is the second, as after any restart.
	for round := 0; round < 2; round++ {
		cmd := exec.Command(binary, "serve")
		cmd.Env = env
		cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
		start := time.Now()
		if err := cmd.Start(); err != nil {
			return err
		}
		firstServed := time.Duration(0)
		for time.Since(start) < 20*time.Second {
			req, _ := http.NewRequest("GET", "http://"+addr+"/api/healthcheck", nil)
			req.Host = "localhost"
			if res, err := http.DefaultClient.Do(req); err == nil {
				res.Body.Close()
				if res.StatusCode == 200 {
					firstServed = time.Since(start)
					break
				}
			}
			time.Sleep(2 * time.Millisecond)
		}
		if round == 1 {
			time.Sleep(3 * time.Second)
			rss := readRSS(cmd.Process.Pid)
			fmt.Printf("lms serve: first request served %s after start; idle RSS with one tenant %s\n", firstServed, rss)
		}
		cmd.Process.Signal(os.Interrupt)
		cmd.Wait()
	}
	return nil
}

func readRSS(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return "unknown"
	}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "VmRSS:") {
			return strings.TrimSpace(strings.TrimPrefix(line, "VmRSS:"))
		}
	}
	return "unknown"
}
