package demo

import (
	"archive/zip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/lms-platform/lms/internal/platform"
)

// The reset removes a tenant's H5P content through the H5P service, with
// the internal token, as the platform's other parts do: the service owns
// its data and files.

// h5pCall sends one request to the H5P service for the tenant.
func (s *Service) h5pCall(ctx context.Context, t *platform.Tenant, method, path string, out any) error {
	if s.H5PURL == nil || s.H5PURL() == "" {
		return fmt.Errorf("demo: no H5P service address")
	}
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimRight(s.H5PURL(), "/")+path, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("X-Internal-Token", s.InternalToken)
	req.Header.Set("X-Forwarded-Host", t.PrimaryHost())
	res, err := (&http.Client{Timeout: 2 * time.Minute}).Do(req)
	if err != nil {
		return fmt.Errorf("demo: H5P service: %w", err)
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(res.Body, 4<<20))
	if err != nil {
		return err
	}
	if res.StatusCode < 200 || res.StatusCode >= 300 {
		return fmt.Errorf("demo: H5P service: %s %s answered %d: %.200s", method, path, res.StatusCode, raw)
	}
	if out != nil {
		return json.Unmarshal(raw, out)
	}
	return nil
}

// deleteH5P deletes every H5P content of the tenant and returns how many.
func (s *Service) deleteH5P(ctx context.Context, t *platform.Tenant) (int, error) {
	deleted := 0
	// Each round lists the first page again, since deleting shifts pages;
	// the bound stops a service that keeps answering the same ids.
	for round := 0; round < 1000; round++ {
		var page struct {
			Data []struct {
				ID string `json:"id"`
			} `json:"data"`
		}
		if err := s.h5pCall(ctx, t, http.MethodGet, "/h5p/contents?perPage=100", &page); err != nil {
			return deleted, err
		}
		if len(page.Data) == 0 {
			return deleted, nil
		}
		for _, c := range page.Data {
			if err := s.h5pCall(ctx, t, http.MethodDelete, "/h5p/contents/"+url.PathEscape(c.ID), nil); err != nil {
				return deleted, err
			}
			deleted++
		}
	}
	return deleted, fmt.Errorf("demo: H5P content keeps coming back after %d deletions", deleted)
}

// deleteH5POrphans asks the service to delete content files that no
// content owns any more (after the tenant database was recreated).
func (s *Service) deleteH5POrphans(ctx context.Context, t *platform.Tenant) error {
	return s.h5pCall(ctx, t, http.MethodPost, "/h5p/contents/orphans/delete", nil)
}

// maxPackages bounds how many packages of the content directory the seed
// imports.
const maxPackages = 20

// h5pPackage is a package file of the content directory.
type h5pPackage struct {
	Path  string
	Name  string
	Title string
}

// packages lists the .h5p files of the content directory, by name, with
// the title each declares in its h5p.json.
func (s *Service) packages() ([]h5pPackage, error) {
	dir := s.Config.ContentDir
	if dir == "" {
		return nil, nil
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("demo: LMS_DEMO_CONTENT_DIR: %w", err)
	}
	var out []h5pPackage
	for _, e := range entries {
		if e.IsDir() || !strings.EqualFold(filepath.Ext(e.Name()), ".h5p") {
			continue
		}
		p := h5pPackage{Path: filepath.Join(dir, e.Name()), Name: e.Name()}
		p.Title = packageTitle(p.Path)
		if p.Title == "" {
			p.Title = titleFromName(e.Name())
		}
		out = append(out, p)
	}
	slices.SortFunc(out, func(a, b h5pPackage) int { return strings.Compare(a.Name, b.Name) })
	if len(out) > maxPackages {
		out = out[:maxPackages]
	}
	return out, nil
}

// packageTitle reads the title of a package's h5p.json; "" when it has
// none or cannot be read (the H5P service reports what is wrong when the
// package is uploaded).
func packageTitle(path string) string {
	zr, err := zip.OpenReader(path)
	if err != nil {
		return ""
	}
	defer zr.Close()
	for _, f := range zr.File {
		if f.Name != "h5p.json" {
			continue
		}
		rc, err := f.Open()
		if err != nil {
			return ""
		}
		defer rc.Close()
		var meta struct {
			Title string `json:"title"`
		}
		if json.NewDecoder(io.LimitReader(rc, 1<<20)).Decode(&meta) != nil {
			return ""
		}
		return strings.TrimSpace(meta.Title)
	}
	return ""
}

// titleFromName turns "H5P.DragText.h5p" into "DragText".
func titleFromName(name string) string {
	name = strings.TrimSuffix(name, filepath.Ext(name))
	name = strings.TrimPrefix(name, "H5P.")
	name = strings.NewReplacer("-", " ", "_", " ").Replace(name)
	if name == "" {
		return "Interactive exercise"
	}
	return strings.ToUpper(name[:1]) + name[1:]
}
