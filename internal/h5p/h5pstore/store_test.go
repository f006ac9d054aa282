package h5pstore_test

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lms-platform/lms/internal/apperr"
	"github.com/lms-platform/lms/internal/blob"
	"github.com/lms-platform/lms/internal/clock"
	"github.com/lms-platform/lms/internal/fixtures"
	"github.com/lms-platform/lms/internal/h5p/h5ppackage"
	"github.com/lms-platform/lms/internal/h5p/h5pstore"
	"github.com/lms-platform/lms/internal/lock"
	"github.com/lms-platform/lms/internal/platform"
	"github.com/lms-platform/lms/internal/sqldb"
)

// backends opens a fresh tenant per call: SQLite always, PostgreSQL when
// LMS_TEST_PG_URL is set (required under CI=true).
func backends(tb testing.TB) map[string]func(tb testing.TB) *platform.Tenant {
	out := map[string]func(testing.TB) *platform.Tenant{"sqlite": openSQLite}
	pgURL := os.Getenv("LMS_TEST_PG_URL")
	switch {
	case pgURL != "":
		out["postgres"] = func(tb testing.TB) *platform.Tenant { return openPostgres(tb, pgURL) }
	case os.Getenv("CI") == "true":
		tb.Fatal("LMS_TEST_PG_URL is not set; CI=true requires PostgreSQL")
	}
	return out
}

func withBlob(tb testing.TB, db *sqldb.DB) *platform.Tenant {
	store, err := blob.NewFS(tb.TempDir())
	if err != nil {
		tb.Fatal(err)
	}
	return &platform.Tenant{DB: db, Blob: store}
}

func openSQLite(tb testing.TB) *platform.Tenant {
	tb.Helper()
	ctx := context.Background()
	db, err := sqldb.OpenSQLite(ctx, filepath.Join(tb.TempDir(), "t.db"))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	if err := sqldb.Migrate(ctx, db, sqldb.TenantSet); err != nil {
		tb.Fatal(err)
	}
	return withBlob(tb, db)
}

func openPostgres(tb testing.TB, serverURL string) *platform.Tenant {
	tb.Helper()
	ctx := context.Background()
	b := make([]byte, 6)
	rand.Read(b)
	name := "h5pstore_test_" + hex.EncodeToString(b)
	if err := sqldb.CreateDatabase(ctx, serverURL, name); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if err := sqldb.DropDatabase(context.Background(), serverURL, name); err != nil {
			tb.Error(err)
		}
	})
	u, err := sqldb.WithDatabase(serverURL, name)
	if err != nil {
		tb.Fatal(err)
	}
	db, err := sqldb.OpenPostgres(ctx, u)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	if err := sqldb.Migrate(ctx, db, sqldb.TenantSet); err != nil {
		tb.Fatal(err)
	}
	return withBlob(tb, db)
}

func newStore() *h5pstore.Store {
	clk := clock.NewFake(time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC))
	return &h5pstore.Store{Clock: clk, Locker: lock.NewMemory(clk)}
}

func fixture(tb testing.TB, rel string) string {
	tb.Helper()
	return fixtures.Path(tb, "h5p/"+rel)
}

// openBytes opens and validates a package held in memory.
func openBytes(tb testing.TB, b []byte, installed func(string, int, int) bool) *h5ppackage.Package {
	tb.Helper()
	p, err := h5ppackage.Open(bytes.NewReader(b), int64(len(b)), h5ppackage.Limits{})
	if err != nil {
		tb.Fatal(err)
	}
	if err := h5ppackage.Validate(p, h5ppackage.Options{Installed: installed}); err != nil {
		tb.Fatal(err)
	}
	return p
}

func load(tb testing.TB, rel string) []byte {
	b, err := os.ReadFile(fixture(tb, rel))
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

func TestInstallAndContents(t *testing.T) {
	for name, open := range backends(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			tn, s := open(t), newStore()
			raw := load(t, "hub/H5P.TrueFalse.h5p")
			p := openBytes(t, raw, nil)

			// Without the right to install, the missing libraries are named.
			_, err := s.Install(ctx, tn, p, false)
			if !apperr.Is(err, apperr.Invalid) || !strings.Contains(err.Error(), "H5P.TrueFalse 1.") {
				t.Fatalf("install without right: %v", err)
			}

			got, err := s.Install(ctx, tn, p, true)
			if err != nil || len(got) != len(p.Libraries) {
				t.Fatalf("fresh install: %v %v", got, err)
			}
			if got, err := s.Install(ctx, tn, p, true); err != nil || len(got) != 0 {
				t.Fatalf("second install should skip: %v %v", got, err)
			}
			if _, err := s.Install(ctx, tn, p, false); err != nil {
				t.Fatalf("install without right, all present: %v", err)
			}

			// A lower patch version installed is updated.
			lib := p.Libraries[0].JSON
			if _, err := tn.DB.ExecContext(ctx, `UPDATE h5p_libraries SET patch_version = patch_version - 1
				WHERE machine_name = $1 AND major_version = $2 AND minor_version = $3`, lib.MachineName, lib.MajorVersion, lib.MinorVersion); err != nil {
				t.Fatal(err)
			}
			if got, err := s.Install(ctx, tn, p, true); err != nil || len(got) != 1 || got[0].MachineName != lib.MachineName {
				t.Fatalf("patch update: %v %v", got, err)
			}

			c, err := s.SaveContent(ctx, tn, p, 7)
			if err != nil {
				t.Fatal(err)
			}
			if c.MainLibrary != "H5P.TrueFalse" || c.UserID != 7 || c.Title == "" || !strings.Contains(c.LibraryVersion, ".") {
				t.Fatalf("content: %+v", c)
			}
			c2, err := s.SaveContent(ctx, tn, p, 8)
			if err != nil {
				t.Fatal(err)
			}
			list, total, err := s.ListContents(ctx, tn, "", 0, 0, 1)
			if err != nil || total != 2 || len(list) != 1 || list[0].ID != c2.ID {
				t.Fatalf("list page 1: %v %d %v", list, total, err)
			}
			list, total, _ = s.ListContents(ctx, tn, "", 7, 0, 10)
			if total != 1 || list[0].ID != c.ID {
				t.Fatalf("list by user: %v %d", list, total)
			}
			if _, total, _ = s.ListContents(ctx, tn, strings.ToUpper(c.Title[:3]), 0, 0, 10); total != 2 {
				t.Fatalf("search: %d", total)
			}
			if _, total, _ = s.ListContents(ctx, tn, "no such title%", 0, 0, 10); total != 0 {
				t.Fatalf("search none: %d", total)
			}

			// Update keeps the creator.
			lib0 := c.MainLibrary + " " + c.LibraryVersion
			up, err := s.UpdateContent(ctx, tn, c.ID, lib0, json.RawMessage(`{"question":"<p>New?</p>","correct":"true"}`), json.RawMessage(`{"title":"Renamed"}`))
			if err != nil || up.Title != "Renamed" || up.UserID != 7 || !strings.Contains(string(up.Parameters), "New?") {
				t.Fatalf("update: %+v %v", up, err)
			}

			// The main library is in use.
			maj, min := splitVersion(t, c.LibraryVersion)
			if err := s.DeleteLibrary(ctx, tn, "H5P.TrueFalse", maj, min); !apperr.Is(err, apperr.Conflict) {
				t.Fatalf("delete library in use: %v", err)
			}

			// Delete removes rows, files, user data and results.
			if _, err := tn.DB.ExecContext(ctx, `INSERT INTO h5p_content_user_data (content_id, user_id, data_type,
				sub_content_id, context_id, user_state, preload, invalidate, updated_at)
				VALUES ($1, 7, 'state', 0, '', '{}', TRUE, FALSE, $2)`, c.ID, time.Now()); err != nil {
				t.Fatal(err)
			}
			if _, err := tn.DB.ExecContext(ctx, `INSERT INTO h5p_results (content_id, user_id, score, max_score,
				completion_time) VALUES ($1, 7, 1, 1, 3)`, c.ID); err != nil {
				t.Fatal(err)
			}
			for _, id := range []int64{c.ID, c2.ID} {
				if err := s.DeleteContent(ctx, tn, id); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := s.Content(ctx, tn, c.ID); !apperr.Is(err, apperr.NotFound) {
				t.Fatalf("deleted content: %v", err)
			}
			var n int
			tn.DB.QueryRowContext(ctx, `SELECT (SELECT COUNT(*) FROM h5p_content_user_data) +
				(SELECT COUNT(*) FROM h5p_results) + (SELECT COUNT(*) FROM h5p_content_libraries)`).Scan(&n)
			if n != 0 {
				t.Fatalf("%d dependent rows left", n)
			}
			tn.Blob.List(ctx, "h5p/content/", func(i blob.Info) error { t.Errorf("file left: %s", i.Key); return nil })

			// Unused now: the main library can go.
			if err := s.DeleteLibrary(ctx, tn, "H5P.TrueFalse", maj, min); err != nil {
				t.Fatalf("delete unused library: %v", err)
			}
			if _, err := s.Library(ctx, tn, "H5P.TrueFalse", maj, min); !apperr.Is(err, apperr.NotFound) {
				t.Fatalf("deleted library: %v", err)
			}
		})
	}
}

func splitVersion(t *testing.T, v string) (int, int) {
	_, maj, min, err := h5pstore.ParseLibrary("X " + v)
	if err != nil {
		t.Fatal(err)
	}
	return maj, min
}

func TestConcurrentInstall(t *testing.T) {
	for name, open := range backends(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			tn, s := open(t), newStore()
			raw := load(t, "hub/H5P.TrueFalse.h5p")
			var wg sync.WaitGroup
			errs := make(chan error, 8)
			for range 8 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					p := openBytes(t, raw, nil)
					_, err := s.Install(ctx, tn, p, true)
					errs <- err
				}()
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				if err != nil {
					t.Fatal(err)
				}
			}
			p := openBytes(t, raw, nil)
			libs, err := s.Libraries(ctx, tn)
			if err != nil || len(libs) != len(p.Libraries) {
				t.Fatalf("libraries: %d, want %d (%v)", len(libs), len(p.Libraries), err)
			}
			for _, l := range p.Libraries {
				prefix := libRef(l.JSON).FilesPrefix()
				for _, f := range l.Files {
					if _, err := tn.Blob.Stat(ctx, prefix+f); err != nil {
						t.Errorf("%s/%s: %v", l.Dir, f, err)
					}
				}
			}
		})
	}
}

func TestPackageRoundTrip(t *testing.T) {
	var names []string
	for _, dir := range []string{"valid", "hub"} {
		m, _ := filepath.Glob(filepath.Join(fixture(t, dir), "*.h5p"))
		for _, f := range m {
			names = append(names, dir+"/"+filepath.Base(f))
		}
	}
	for name, open := range backends(t) {
		t.Run(name, func(t *testing.T) {
			for _, fx := range names {
				t.Run(fx, func(t *testing.T) {
					ctx := context.Background()
					tn, s := open(t), newStore()
					p := openBytes(t, load(t, fx), nil)
					if _, err := s.Install(ctx, tn, p, true); err != nil {
						t.Fatal(err)
					}
					c, err := s.SaveContent(ctx, tn, p, 1)
					if err != nil {
						t.Fatal(err)
					}
					var buf bytes.Buffer
					if err := s.Package(ctx, tn, c.ID, &buf); err != nil {
						t.Fatal(err)
					}
					// The package stands alone: it validates with nothing installed.
					p2 := openBytes(t, buf.Bytes(), nil)
					if _, err := s.Install(ctx, tn, p2, true); err != nil {
						t.Fatal(err)
					}
					c2, err := s.SaveContent(ctx, tn, p2, 1)
					if err != nil {
						t.Fatal(err)
					}
					if !jsonEqual([]byte(c.Parameters), []byte(c2.Parameters)) || !jsonEqual(c.Metadata, c2.Metadata) {
						t.Errorf("content differs after round trip")
					}
					if a, b := files(t, tn, c.ID), files(t, tn, c2.ID); !reflect.DeepEqual(a, b) || len(a) != len(p.ContentFiles) {
						t.Errorf("content files differ: %d vs %d (package %d)", len(a), len(b), len(p.ContentFiles))
					}
				})
			}
		})
	}
}

func jsonEqual(a, b []byte) bool {
	var x, y any
	return json.Unmarshal(a, &x) == nil && json.Unmarshal(b, &y) == nil && reflect.DeepEqual(x, y)
}

func files(t *testing.T, tn *platform.Tenant, id int64) map[string]string {
	ctx := context.Background()
	prefix := "h5p/content/" + h5pstore.FormatID(id) + "/"
	out := map[string]string{}
	tn.Blob.List(ctx, prefix, func(i blob.Info) error {
		r, _, err := tn.Blob.Get(ctx, i.Key)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(r)
		r.Close()
		out[strings.TrimPrefix(i.Key, prefix)] = string(b)
		return nil
	})
	return out
}

func BenchmarkInstallAndSaveTrueFalse(b *testing.B) {
	raw := load(b, "hub/H5P.TrueFalse.h5p")
	ctx := context.Background()
	run := func(b *testing.B, tn *platform.Tenant, s *h5pstore.Store) {
		p, err := h5ppackage.Open(bytes.NewReader(raw), int64(len(raw)), h5ppackage.Limits{})
		if err != nil {
			b.Fatal(err)
		}
		if err := h5ppackage.Validate(p, h5ppackage.Options{Installed: s.Installed(ctx, tn)}); err != nil {
			b.Fatal(err)
		}
		if _, err := s.Install(ctx, tn, p, true); err != nil {
			b.Fatal(err)
		}
		if _, err := s.SaveContent(ctx, tn, p, 1); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("cold", func(b *testing.B) {
		for b.Loop() {
			b.StopTimer()
			tn, s := openSQLite(b), newStore()
			b.StartTimer()
			run(b, tn, s)
		}
	})
	b.Run("warm", func(b *testing.B) {
		tn, s := openSQLite(b), newStore()
		run(b, tn, s)
		for b.Loop() {
			run(b, tn, s)
		}
	})
}

func libRef(j h5ppackage.LibraryJSON) h5pstore.LibraryRef {
	return h5pstore.LibraryRef{MachineName: j.MachineName, Major: j.MajorVersion, Minor: j.MinorVersion, Patch: j.PatchVersion}
}

// patchedTrueFalse rewrites the TrueFalse fixture in memory: its
// H5P.TrueFalse library one patch version up, its main script marked,
// upgrades.js dropped and scripts/extra.js added.
func patchedTrueFalse(tb testing.TB, raw []byte) []byte {
	tb.Helper()
	zr, err := zip.NewReader(bytes.NewReader(raw), int64(len(raw)))
	if err != nil {
		tb.Fatal(err)
	}
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	add := func(name string, b []byte) {
		w, err := zw.Create(name)
		if err != nil {
			tb.Fatal(err)
		}
		w.Write(b)
	}
	for _, f := range zr.File {
		if f.FileInfo().IsDir() || f.Name == "H5P.TrueFalse-1.6/upgrades.js" {
			continue
		}
		rc, err := f.Open()
		if err != nil {
			tb.Fatal(err)
		}
		b, _ := io.ReadAll(rc)
		rc.Close()
		switch f.Name {
		case "H5P.TrueFalse-1.6/library.json":
			var m map[string]any
			if err := json.Unmarshal(b, &m); err != nil {
				tb.Fatal(err)
			}
			m["patchVersion"] = m["patchVersion"].(float64) + 1
			b, _ = json.Marshal(m)
		case "H5P.TrueFalse-1.6/scripts/h5p-true-false.js":
			b = append(b, "\n/* patched */\n"...)
		}
		add(f.Name, b)
	}
	add("H5P.TrueFalse-1.6/scripts/extra.js", []byte("/* new in the patch */\n"))
	if err := zw.Close(); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

// gateBlob holds the first Put of a key ending in suffix until release is
// closed, then lets it fail with fail (nil: succeed).
type gateBlob struct {
	blob.Store
	suffix  string
	once    sync.Once
	entered chan struct{}
	release chan struct{}
	fail    error
}

func (g *gateBlob) Put(ctx context.Context, key string, r io.Reader, size int64, ct string) error {
	gated := false
	if strings.HasSuffix(key, g.suffix) {
		g.once.Do(func() { gated = true })
	}
	if gated {
		close(g.entered)
		<-g.release
		if g.fail != nil {
			return g.fail
		}
	}
	return g.Store.Put(ctx, key, r, size, ct)
}

func readBlob(t *testing.T, tn *platform.Tenant, key string) (string, error) {
	rc, _, err := tn.Blob.Get(context.Background(), key)
	if err != nil {
		return "", err
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	return string(b), err
}

// listKeys lists the keys under prefix, relative to it.
func listKeys(t *testing.T, tn *platform.Tenant, prefix string) []string {
	var out []string
	tn.Blob.List(context.Background(), prefix, func(i blob.Info) error {
		out = append(out, strings.TrimPrefix(i.Key, prefix))
		return nil
	})
	return out
}

// TestPatchUpdateAtomic stops a patch update in the middle of writing the
// new files and checks what a reader sees then: the installed row and the
// complete folder of the old version. After the update, or after it
// fails, exactly one complete version is left.
func TestPatchUpdateAtomic(t *testing.T) {
	for name, open := range backends(t) {
		for _, failing := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/failing=%v", name, failing), func(t *testing.T) {
				ctx := context.Background()
				tn, s := open(t), newStore()
				raw := load(t, "hub/H5P.TrueFalse.h5p")
				if _, err := s.Install(ctx, tn, openBytes(t, raw, nil), true); err != nil {
					t.Fatal(err)
				}
				old, err := s.Library(ctx, tn, "H5P.TrueFalse", 1, 6)
				if err != nil {
					t.Fatal(err)
				}
				oldPrefix := old.Ref().FilesPrefix()
				oldFiles := listKeys(t, tn, oldPrefix)
				oldScript, err := readBlob(t, tn, oldPrefix+"scripts/h5p-true-false.js")
				if err != nil {
					t.Fatal(err)
				}
				newRef := old.Ref()
				newRef.Patch++

				gate := &gateBlob{Store: tn.Blob, suffix: newRef.FilesPrefix() + "semantics.json",
					entered: make(chan struct{}), release: make(chan struct{})}
				if failing {
					gate.fail = errors.New("disk full")
				}
				gated := &platform.Tenant{DB: tn.DB, Blob: gate}
				p2 := openBytes(t, patchedTrueFalse(t, raw), nil)
				done := make(chan error, 1)
				go func() {
					_, err := s.Install(ctx, gated, p2, true)
					done <- err
				}()
				<-gate.entered

				// Mid-update: the reader's view is the old version, whole.
				prefix, err := s.LibraryFilesPrefix(ctx, tn, "H5P.TrueFalse", 1, 6)
				if err != nil || prefix != oldPrefix {
					t.Errorf("prefix mid-update: %q %v, want %q", prefix, err, oldPrefix)
				}
				if got := listKeys(t, tn, oldPrefix); !reflect.DeepEqual(got, oldFiles) {
					t.Errorf("old folder changed mid-update: %d files, want %d", len(got), len(oldFiles))
				}
				if got, _ := readBlob(t, tn, prefix+"scripts/h5p-true-false.js"); got != oldScript {
					t.Errorf("old script changed mid-update")
				}
				close(gate.release)
				err = <-done

				lib, lerr := s.Library(ctx, tn, "H5P.TrueFalse", 1, 6)
				if lerr != nil {
					t.Fatal(lerr)
				}
				all := listKeys(t, tn, "h5p/libraries/H5P.TrueFalse-1.6/")
				if failing {
					if err == nil {
						t.Fatal("install with a failing write succeeded")
					}
					if lib.Patch != old.Patch || len(all) != len(oldFiles) || len(listKeys(t, tn, newRef.FilesPrefix())) != 0 {
						t.Errorf("after a failed update: patch %d, %d files (want %d), new folder %v",
							lib.Patch, len(all), len(oldFiles), listKeys(t, tn, newRef.FilesPrefix()))
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				newFiles := listKeys(t, tn, newRef.FilesPrefix())
				if lib.Patch != newRef.Patch || len(all) != len(newFiles) || len(listKeys(t, tn, oldPrefix)) != 0 {
					t.Errorf("after the update: patch %d, %d files, new folder %d files, old folder %v",
						lib.Patch, len(all), len(newFiles), listKeys(t, tn, oldPrefix))
				}
				if !slices.Contains(newFiles, "scripts/extra.js") || slices.Contains(newFiles, "upgrades.js") {
					t.Errorf("new folder: %v", newFiles)
				}
				if got, _ := readBlob(t, tn, newRef.FilesPrefix()+"scripts/h5p-true-false.js"); !strings.HasSuffix(got, "/* patched */\n") {
					t.Errorf("new script not installed")
				}
			})
		}
	}
}
