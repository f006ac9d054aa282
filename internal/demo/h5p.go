package demo

import (
	"archive/zip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/lms-platform/lms/client"
	"github.com/lms-platform/lms/internal/platform"
)

// The reset removes a tenant's H5P content through the H5P service, with
// the internal token, as the platform's other parts do: the service owns
// its data and files.

// h5pClient is the typed client of the H5P service for the tenant.
func (s *Service) h5pClient(t *platform.Tenant) (*client.Client, error) {
	if s.H5PURL == nil || s.H5PURL() == "" {
		return nil, fmt.Errorf("demo: no H5P service address")
	}
	c, err := client.New(s.H5PURL(), &http.Client{Timeout: 2 * time.Minute})
	if err != nil {
		return nil, fmt.Errorf("demo: H5P service: %w", err)
	}
	return c.WithHeader("X-Internal-Token", s.InternalToken).WithHeader("X-Forwarded-Host", t.PrimaryHost()), nil
}

// deleteH5P deletes every H5P content of the tenant and returns how many.
func (s *Service) deleteH5P(ctx context.Context, t *platform.Tenant) (int, error) {
	h5p, err := s.h5pClient(t)
	if err != nil {
		return 0, err
	}
	deleted := 0
	// Each round lists the first page again, since deleting shifts pages;
	// the bound stops a service that keeps answering the same ids.
	for round := 0; round < 1000; round++ {
		page, err := h5p.GetH5PContents(ctx, client.GetH5PContentsParams{PerPage: client.Ptr[int64](100)})
		if err != nil {
			return deleted, fmt.Errorf("demo: H5P service: listing contents: %w", err)
		}
		if len(page.Items) == 0 {
			return deleted, nil
		}
		for _, c := range page.Items {
			if _, err := h5p.DeleteH5PContentsID(ctx, c.ID); err != nil {
				return deleted, fmt.Errorf("demo: H5P service: deleting content %s: %w", c.ID, err)
			}
			deleted++
		}
	}
	return deleted, fmt.Errorf("demo: H5P content keeps coming back after %d deletions", deleted)
}

// deleteH5POrphans asks the service to delete content files that no
// content owns any more (after the tenant database was recreated).
func (s *Service) deleteH5POrphans(ctx context.Context, t *platform.Tenant) error {
	h5p, err := s.h5pClient(t)
	if err != nil {
		return err
	}
	if _, err := h5p.PostH5PContentsOrphansDelete(ctx); err != nil {
		return fmt.Errorf("demo: H5P service: deleting orphan files: %w", err)
	}
	return nil
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
