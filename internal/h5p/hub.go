package h5p

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/lms-platform/lms/internal/access"
	"github.com/lms-platform/lms/internal/h5p/h5ppackage"
	"github.com/lms-platform/lms/internal/httpx"
	"github.com/lms-platform/lms/internal/platform"
)

// DefaultHubURL is the content-type endpoint of the H5P hub, used when
// h5pstore.Settings.HubURL is empty.
const DefaultHubURL = "https://api.h5p.org/v1/content-types/"

// DefaultHubTimeout bounds one call to the hub when
// h5pstore.Settings.HubTimeout is zero, so a refresh never hangs.
const DefaultHubTimeout = 5 * time.Second

// maxHubBody bounds the hub's answer.
const maxHubBody = 8 << 20

// Messages of a content-type cache refresh.
const (
	msgHubUpdated     = "The content type cache was updated from the H5P hub."
	msgHubUnreachable = "The H5P hub could not be reached; showing the installed content types."
)

// hubMachineNameRe is what a content type id from the hub must look like
// to be listed.
var hubMachineNameRe = regexp.MustCompile(`^[\w\-.]{1,255}$`)

// hubRoutes registers the content-type cache routes of the spec's table.
func (s *Service) hubRoutes(api huma.API) {
	route := func(method, summary string) httpx.Route {
		return httpx.Route{Method: method, Path: "/h5p/content-type-cache/update", Summary: summary, Tags: h5pTags,
			Who: httpx.User, Scope: scopeOf(method)}
	}
	httpx.Handle(api, route("GET", "Get the stored content-type cache (h5p_library_list or h5p_library_read)"),
		s.getContentTypeCache)
	httpx.Handle(api, route("POST",
		"Refresh the content-type cache from the H5P hub (h5p_library_install or h5p_library_update)"),
		s.refreshContentTypeCache)
}

// cacheAnswer is the content-type cache in the envelope, with whether the
// hub answered the refresh that built it.
type cacheAnswer struct {
	ContentTypeCache
	// HubReachable is set by a refresh only.
	HubReachable *bool `json:"hubReachable,omitempty" doc:"Whether the hub answered the refresh."`
}

// cacheOutput is the answer of the content-type cache routes, never
// stored.
type cacheOutput struct {
	CacheControl string `header:"Cache-Control"`
	Body         ajaxBody[cacheAnswer]
}

// getContentTypeCache answers the stored content-type cache without
// calling the hub.
func (s *Service) getContentTypeCache(ctx context.Context, _ *struct{}) (*cacheOutput, error) {
	if err := permit(ctx, access.H5PLibraryList, access.H5PLibraryRead); err != nil {
		return nil, err
	}
	m, err := s.cacheModel(ctx, httpx.TenantFrom(ctx), UserFrom(ctx), false)
	if err != nil {
		return nil, err
	}
	return &cacheOutput{CacheControl: "no-store", Body: ajaxBody[cacheAnswer]{Success: true,
		Data: cacheAnswer{ContentTypeCache: m}}}, nil
}

// refreshContentTypeCache reads the content-type list from the hub, keeps
// it for the tenant and answers the cache. When the hub cannot be reached
// or answers something else, it answers the cache it has, marked
// outdated, still with 200: the hub is a convenience, not a dependency.
func (s *Service) refreshContentTypeCache(ctx context.Context, _ *struct{}) (*cacheOutput, error) {
	if err := permit(ctx, access.H5PLibraryInstall, access.H5PLibraryUpdate); err != nil {
		return nil, err
	}
	t := httpx.TenantFrom(ctx)
	reachable, msg := s.refreshHub(ctx, t)
	m, err := s.cacheModel(ctx, t, UserFrom(ctx), !reachable)
	if err != nil {
		return nil, err
	}
	return &cacheOutput{CacheControl: "no-store", Body: ajaxBody[cacheAnswer]{Success: true, Message: msg,
		Data: cacheAnswer{ContentTypeCache: m, HubReachable: &reachable}}}, nil
}

// refreshHub keeps the hub's content types for the tenant; reachable is
// false when the hub could not be read, msg says which.
func (s *Service) refreshHub(ctx context.Context, t *platform.Tenant) (reachable bool, msg string) {
	types, err := s.fetchHub(ctx)
	if err == nil {
		err = s.Store.SaveHubCache(ctx, t, types)
	}
	if err != nil {
		s.log.WarnContext(ctx, "h5p: content type hub refresh failed", "error", err)
		return false, msgHubUnreachable
	}
	return true, msgHubUpdated
}

// hubSettings returns the hub's content-type endpoint and the bound of one
// call to it, defaulted.
func (s *Service) hubSettings() (endpoint string, timeout time.Duration) {
	set := s.Store.Settings()
	endpoint, timeout = set.HubURL, set.HubTimeout
	if endpoint == "" {
		endpoint = DefaultHubURL
	}
	if timeout <= 0 {
		timeout = DefaultHubTimeout
	}
	return endpoint, timeout
}

// fetchHub asks the hub for its content types and returns the entries
// that name a content type and its version.
func (s *Service) fetchHub(ctx context.Context) ([]json.RawMessage, error) {
	endpoint, timeout := s.hubSettings()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	// The hub takes the site's details as a form; we send no site
	// identifier, only what the list depends on.
	form := url.Values{"platform_name": {"LMS"}, "core_api_version": {s.Store.CoreAPI().String()}, "disabled": {"0"}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, strings.NewReader(form.Encode()))
	if err != nil {
		return nil, fmt.Errorf("h5p: hub request: %w", err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	res, err := (&http.Client{Timeout: timeout}).Do(req)
	if err != nil {
		return nil, fmt.Errorf("h5p: call hub: %w", err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("h5p: hub answered %s", res.Status)
	}
	body, err := io.ReadAll(io.LimitReader(res.Body, maxHubBody+1))
	if err != nil {
		return nil, fmt.Errorf("h5p: read hub answer: %w", err)
	}
	if len(body) > maxHubBody {
		return nil, errors.New("h5p: the hub's answer is too large")
	}
	return parseHubTypes(body)
}

// hubVersion is a version as the hub writes it.
type hubVersion struct {
	Major int `json:"major"`
	Minor int `json:"minor"`
	Patch int `json:"patch"`
}

// hubType is the part of a hub entry the cache reads.
type hubType struct {
	ID                   string      `json:"id"`
	Version              hubVersion  `json:"version"`
	CoreAPIVersionNeeded *hubVersion `json:"coreApiVersionNeeded"`
}

// parseHubTypes reads the hub's answer {contentTypes: [...]}; anything
// else is an error, and entries without a usable id are dropped.
func parseHubTypes(body []byte) ([]json.RawMessage, error) {
	var doc struct {
		ContentTypes *[]json.RawMessage `json:"contentTypes"`
	}
	if err := json.Unmarshal(body, &doc); err != nil || doc.ContentTypes == nil {
		return nil, errors.New("h5p: the hub's answer is not a content type list")
	}
	out := []json.RawMessage{}
	for _, raw := range *doc.ContentTypes {
		if _, ok := decodeHubType(raw); ok {
			out = append(out, raw)
		}
	}
	return out, nil
}

func decodeHubType(raw json.RawMessage) (hubType, bool) {
	var h hubType
	if json.Unmarshal(raw, &h) != nil || !hubMachineNameRe.MatchString(h.ID) {
		return hubType{}, false
	}
	return h, true
}

// ContentTypeCache is the content-type cache in the format of the H5P
// editor's hub client.
type ContentTypeCache struct {
	Outdated     bool             `json:"outdated"`
	Libraries    []map[string]any `json:"libraries"`
	RecentlyUsed []string         `json:"recentlyUsed"`
	APIVersion   map[string]int   `json:"apiVersion"`
	Details      any              `json:"details"`
}

// hubFields are the descriptive fields of a hub entry the cache passes on.
var hubFields = []string{"title", "summary", "description", "icon", "isRecommended", "popularity",
	"screenshots", "license", "owner", "example", "tutorial", "keywords", "categories"}

// cacheModel lists the installed runnable libraries, completed by the
// tenant's last list from the hub: hub details and whether a newer version
// exists for installed content types, and the content types the hub has
// that are not installed.
func (s *Service) cacheModel(ctx context.Context, t *platform.Tenant, u *User, outdated bool) (ContentTypeCache, error) {
	libs, err := s.Store.Libraries(ctx, t)
	if err != nil {
		return ContentTypeCache{}, err
	}
	hub, _, err := s.Store.LoadHubCache(ctx, t)
	if err != nil {
		return ContentTypeCache{}, err
	}
	core := s.Store.CoreAPI()
	canInstall := u.Can(string(access.H5PLibraryInstall))
	type hubEntry struct {
		h      hubType
		fields map[string]any
	}
	byName := map[string]hubEntry{}
	var order []string
	for _, raw := range hub.ContentTypes {
		h, ok := decodeHubType(raw)
		if !ok {
			continue
		}
		var fields map[string]any
		_ = json.Unmarshal(raw, &fields)
		if _, dup := byName[h.ID]; !dup {
			order = append(order, h.ID)
		}
		byName[h.ID] = hubEntry{h, fields}
	}
	out := []map[string]any{}
	installed := map[string]bool{}
	for _, l := range libs {
		if !l.Runnable {
			continue
		}
		installed[l.MachineName] = true
		var j h5ppackage.LibraryJSON
		_ = json.Unmarshal(l.JSON, &j)
		e := map[string]any{
			"id": l.ID, "machineName": l.MachineName,
			"majorVersion": l.Major, "minorVersion": l.Minor, "patchVersion": l.Patch,
			"localMajorVersion": l.Major, "localMinorVersion": l.Minor, "localPatchVersion": l.Patch,
			"title": l.Title, "summary": "", "description": j.Description, "icon": "",
			"createdAt": l.CreatedAt.Unix(), "updatedAt": l.UpdatedAt.Unix(),
			"isRecommended": false, "popularity": 0, "screenshots": []any{}, "license": map[string]any{},
			"owner": j.Author, "installed": true, "isUpToDate": true, "restricted": l.Restricted,
			"canInstall": canInstall,
		}
		if he, ok := byName[l.MachineName]; ok {
			for _, k := range hubFields {
				if v, ok := he.fields[k]; ok && v != nil {
					e[k] = v
				}
			}
			v := he.h.Version
			e["majorVersion"], e["minorVersion"], e["patchVersion"] = v.Major, v.Minor, v.Patch
			e["isUpToDate"] = !newer(v, l.Major, l.Minor, l.Patch)
		}
		out = append(out, e)
	}
	for _, name := range order {
		if installed[name] {
			continue
		}
		he := byName[name]
		v := he.h.Version
		e := map[string]any{
			"id": nil, "machineName": name, "majorVersion": v.Major, "minorVersion": v.Minor, "patchVersion": v.Patch,
			"localMajorVersion": nil, "localMinorVersion": nil, "localPatchVersion": nil,
			"title": name, "summary": "", "description": "", "icon": "", "isRecommended": false, "popularity": 0,
			"screenshots": []any{}, "license": map[string]any{}, "owner": "",
			"installed": false, "isUpToDate": false, "restricted": false,
			"canInstall": canInstall && supported(he.h.CoreAPIVersionNeeded, core),
		}
		for _, k := range hubFields {
			if v, ok := he.fields[k]; ok && v != nil {
				e[k] = v
			}
		}
		if need := he.h.CoreAPIVersionNeeded; need != nil {
			e["h5pMajorVersion"], e["h5pMinorVersion"] = need.Major, need.Minor
		}
		out = append(out, e)
	}
	return ContentTypeCache{
		Outdated: outdated, Libraries: out, RecentlyUsed: []string{},
		APIVersion: map[string]int{"major": core.Major, "minor": core.Minor}, Details: nil,
	}, nil
}

// newer reports whether the hub's version v is later than major.minor.patch.
func newer(v hubVersion, major, minor, patch int) bool {
	if v.Major != major {
		return v.Major > major
	}
	if v.Minor != minor {
		return v.Minor > minor
	}
	return v.Patch > patch
}

// supported reports whether a content type needing core API need runs on
// this server's core; no stated need counts as supported.
func supported(need *hubVersion, core h5ppackage.Version) bool {
	return need == nil || !h5ppackage.Version{Major: need.Major, Minor: need.Minor}.After(core)
}
