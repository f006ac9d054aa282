// This file is the cmi5 content kind: a topic plays one AU of an
// imported cmi5 course (package cmi5 imports, launches and tracks it).
// Its topic completes when the AU is satisfied per its moveOn, never by a
// learner's progress write.

package cmi5

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/danielgtaylor/huma/v2"

	"github.com/lms-platform/lms/internal/apperr"
	"github.com/lms-platform/lms/internal/content"
	"github.com/lms-platform/lms/internal/httpx"
)

// Kind is the cmi5 kind.
type Kind struct {
	Packages *Service
}

func (*Kind) Class() string { return TopicClass }
func (*Kind) Name() string  { return "cmi5" }

// Fields documents the topic input.
func (*Kind) Fields() map[string]*huma.Schema {
	return map[string]*huma.Schema{
		"au": {Type: huma.TypeInteger, Description: "The AU to play (an id from the package's aus). Needed when the package has several AUs; " +
			"without it the create answers 422 with details.choices listing them."},
	}
}

// Build takes the package (an id or an uploaded file) and the AU.
func (k *Kind) Build(ctx context.Context, env content.Env, old json.RawMessage, in content.Input) (json.RawMessage, error) {
	fields := inputFields(in)
	var pkg Cmi5Package
	var err error
	if f, ok := in.Files["package"]; ok {
		rc, oerr := f.Open()
		if oerr != nil {
			return nil, oerr
		}
		data, rerr := io.ReadAll(io.LimitReader(rc, MaxUpload+1))
		rc.Close()
		if rerr != nil {
			return nil, fmt.Errorf("cmi5 topic: read package: %w", rerr)
		}
		if len(data) > MaxUpload {
			return nil, apperr.New(apperr.TooLarge, "The package is too large.")
		}
		pkg, err = k.Packages.Import(ctx, env.Tenant, httpx.PrincipalFrom(ctx), Upload{Name: f.Name, Data: data})
	} else if id, ok := fields["package"]; ok {
		n, perr := strconv.ParseInt(id, 10, 64)
		if perr != nil || n < 1 {
			return nil, apperr.Field("package", "The package must be the id of an imported cmi5 package.")
		}
		pkg, err = k.Packages.Get(ctx, env.Tenant, n)
		if apperr.Is(err, apperr.NotFound) {
			return nil, apperr.Field("package", "The package must be the id of an imported cmi5 package.")
		}
	} else if _, auSent := fields["au"]; old != nil && !auSent {
		return old, nil
	} else if old != nil {
		// Another AU of the topic's package: an au sent alone is a
		// choice like any other, not left out.
		v, perr := ParseTopic(old)
		if perr != nil {
			return nil, perr
		}
		pkg, err = k.Packages.Get(ctx, env.Tenant, v.PackageID)
	} else {
		return nil, apperr.Field("package", "A cmi5 package (package) is required.")
	}
	if err != nil {
		return nil, err
	}
	var au *AUInfo
	if raw, ok := fields["au"]; ok {
		id, perr := strconv.ParseInt(raw, 10, 64)
		for i := range pkg.AUs {
			if perr == nil && pkg.AUs[i].ID == id {
				au = &pkg.AUs[i]
			}
		}
		if au == nil {
			return nil, Choices(pkg, "The au must be one of the package's AUs.")
		}
	} else if len(pkg.AUs) == 1 {
		au = &pkg.AUs[0]
	} else {
		return nil, Choices(pkg, "")
	}
	return json.Marshal(TopicValue{PackageID: pkg.ID, AUID: au.ID, Title: au.Title, LaunchMethod: au.LaunchMethod})
}

// inputFields reads package and au from the form fields or the generic
// value.
func inputFields(in content.Input) map[string]string {
	out := map[string]string{}
	for _, k := range []string{"package", "au"} {
		// Sent empty is kept, to be refused, not taken for "not sent".
		if v, ok := in.Fields[k]; ok {
			out[k] = strings.TrimSpace(v)
		}
	}
	if len(in.Value) > 0 {
		var obj map[string]json.RawMessage
		if json.Unmarshal(in.Value, &obj) == nil {
			for _, k := range []string{"package", "au"} {
				if _, done := out[k]; !done && len(obj[k]) > 0 {
					out[k] = strings.Trim(string(obj[k]), `"`)
				}
			}
		}
	}
	return out
}

// Copy shares the package: the clone plays the same AU.
func (*Kind) Copy(_ context.Context, _ content.Env, value json.RawMessage) (json.RawMessage, error) {
	return value, nil
}

// Remove keeps the package, which other topics and registrations use.
func (*Kind) Remove(context.Context, content.Env, json.RawMessage) error { return nil }

// CompletesItself: a cmi5 topic completes when its AU is satisfied.
func (*Kind) CompletesItself(json.RawMessage) bool { return true }

// View shows the AU with the route that launches it.
func (*Kind) View(env content.Env, value json.RawMessage) (any, error) {
	v, err := ParseTopic(value)
	if err != nil {
		return nil, err
	}
	return struct {
		TopicValue
		LaunchURL string `json:"launch_url"`
	}{v, fmt.Sprintf("/api/cmi5/launch/%d", env.TopicID)}, nil
}
