package interactive

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"path"
	"regexp"
	"strings"
	"unicode/utf8"
)

// ManifestFile is the manifest's name at the root of a package.
const ManifestFile = "lms-interactive.json"

// Limits of a manifest.
const (
	MaxManifestSize = 64 << 10
	MaxSteps        = 200
	MaxOrigins      = 20
	maxTitle        = 200
	maxEntry        = 255
)

// Manifest is lms-interactive.json: the page the app starts at, its steps
// in order and the network origins it needs.
type Manifest struct {
	Title   string   `json:"title,omitempty" maxLength:"200" doc:"Name of the app; default: the archive's name."`
	Entry   string   `json:"entry" minLength:"1" maxLength:"255" doc:"Path of the start page in the archive (index.html, app/start.htm), an .html or .htm file."`
	Steps   []Step   `json:"steps" minItems:"1" maxItems:"200" doc:"The steps of the app in the order a learner walks them; topics play a range of them."`
	Network []string `json:"network,omitempty" maxItems:"20" doc:"Origins the app connects to (https://tiles.example.org, wss://live.example.org:8443): scheme, host and port only. A topic must accept them (acceptNetwork), and the tenant must allow network access (lms_interactive.allow_network)."`
}

// Step is one step of an app.
type Step struct {
	ID    string `json:"id" pattern:"^[A-Za-z0-9_-]{1,64}$" doc:"Unique id the app reports when the learner reaches the step."`
	Title string `json:"title" minLength:"1" maxLength:"200" doc:"Title shown to learners."`
}

var stepID = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// ParseManifest reads and checks a manifest. Problems are keyed by the
// field's path in the manifest (entry, steps.2.id, network.0); a manifest
// with problems returns them all, with what could be read of it (to check
// its entry against the archive), or an empty Manifest when it is not
// JSON of its shape (the problem keyed manifest).
func ParseManifest(data []byte) (Manifest, map[string][]string) {
	errs := map[string][]string{}
	fail := func(field, msg string) { errs[field] = append(errs[field], msg) }
	var m Manifest
	if len(data) > MaxManifestSize {
		fail("manifest", fmt.Sprintf("%s may not be greater than %d KiB.", ManifestFile, MaxManifestSize>>10))
		return m, errs
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		fail("manifest", fmt.Sprintf("%s is not a valid manifest: %s.", ManifestFile, jsonProblem(err)))
		return Manifest{}, errs
	}
	if dec.More() {
		fail("manifest", ManifestFile+" holds more than one JSON value.")
		return Manifest{}, errs
	}
	if utf8.RuneCountInString(m.Title) > maxTitle {
		fail("title", fmt.Sprintf("The title may not be longer than %d characters.", maxTitle))
	}
	if msg := entryProblem(m.Entry); msg != "" {
		fail("entry", msg)
	}
	switch {
	case len(m.Steps) == 0:
		fail("steps", "The manifest must list at least one step.")
	case len(m.Steps) > MaxSteps:
		fail("steps", fmt.Sprintf("The manifest may list at most %d steps.", MaxSteps))
	default:
		seen := map[string]bool{}
		for i, s := range m.Steps {
			field := fmt.Sprintf("steps.%d", i)
			if !stepID.MatchString(s.ID) {
				fail(field+".id", "A step id is 1 to 64 letters, digits, _ or -.")
			} else if seen[s.ID] {
				fail(field+".id", fmt.Sprintf("The step id %s appears more than once.", s.ID))
			}
			seen[s.ID] = true
			if n := utf8.RuneCountInString(strings.TrimSpace(s.Title)); n == 0 || n > maxTitle {
				fail(field+".title", fmt.Sprintf("A step title is 1 to %d characters.", maxTitle))
			}
		}
	}
	if len(m.Network) > MaxOrigins {
		fail("network", fmt.Sprintf("The manifest may list at most %d network origins.", MaxOrigins))
	} else {
		for i, o := range m.Network {
			norm, msg := origin(o)
			if msg != "" {
				fail(fmt.Sprintf("network.%d", i), msg)
				continue
			}
			m.Network[i] = norm
		}
	}
	if len(errs) > 0 {
		return m, errs
	}
	return m, nil
}

func jsonProblem(err error) string {
	msg := err.Error()
	// The decoder's messages name Go types; keep them short and plain.
	msg = strings.TrimPrefix(msg, "json: ")
	if len(msg) > 200 {
		msg = msg[:200]
	}
	return msg
}

// entryProblem checks the start page's path: relative, inside the
// archive, an HTML page.
func entryProblem(entry string) string {
	switch {
	case entry == "":
		return "The entry (the start page) is required."
	case len(entry) > maxEntry || !utf8.ValidString(entry):
		return "The entry must be a path of at most 255 bytes."
	case strings.HasPrefix(entry, "/") || strings.Contains(entry, `\`) || strings.ContainsAny(entry, "?#") ||
		path.Clean(entry) != entry || entry == "." || strings.HasPrefix(entry, "../") || entry == "..":
		return "The entry must be a plain relative path inside the archive (index.html)."
	}
	for _, r := range entry {
		if r < 0x20 || r == 0x7f {
			return "The entry must not hold control characters."
		}
	}
	if ext := strings.ToLower(path.Ext(entry)); ext != ".html" && ext != ".htm" {
		return "The entry must be an .html or .htm page."
	}
	return ""
}

// origin checks a network origin and returns it in its normal form
// (lower-case scheme and host, no default port).
func origin(raw string) (string, string) {
	const msg = "A network origin is https:// or wss:// with a host and an optional port, nothing else (https://tiles.example.org)."
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "https" && u.Scheme != "wss") || u.Host == "" || u.User != nil ||
		(u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" || u.Opaque != "" || strings.Contains(raw, "*") {
		return "", msg
	}
	host := strings.ToLower(u.Hostname())
	if host == "" || strings.Trim(host, "abcdefghijklmnopqrstuvwxyz0123456789.-") != "" {
		return "", msg
	}
	out := u.Scheme + "://" + host
	if p := u.Port(); p != "" && p != "443" {
		out += ":" + p
	}
	return out, ""
}

// Step returns the index of a step id, or -1.
func (m Manifest) Step(id string) int {
	for i, s := range m.Steps {
		if s.ID == id {
			return i
		}
	}
	return -1
}
