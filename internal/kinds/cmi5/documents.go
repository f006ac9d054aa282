package cmi5

import (
	"context"
	"encoding/json"
	"fmt"
	"mime"
	"regexp"
	"strings"

	"github.com/lms-platform/lms/internal/lrs"
	"github.com/lms-platform/lms/internal/platform"
)

// Document applies cmi5 section 11.0 to a launch's access to the learner
// preferences (the cmi5LearnerPreferences agent profile): a read is
// recorded, as initialized must follow one (requirement 11.0.0.0-3); a
// write must leave a valid document, else it is refused with the 403 the
// section lets the LMS answer; the AU deletes nothing there. Other
// documents pass.
func (s *Service) Document(ctx context.Context, t *platform.Tenant, scope lrs.Scope, k lrs.DocKey, w *lrs.DocWrite) error {
	if k.Kind != lrs.AgentDoc || k.ID != PreferencesID {
		return nil
	}
	if w == nil {
		_, err := t.DB.ExecContext(ctx, `UPDATE cmi5_sessions SET preferences_read = TRUE WHERE id = $1 AND preferences_read = FALSE`,
			scope.Session)
		if err != nil {
			return fmt.Errorf("cmi5: record the preferences read: %w", err)
		}
		return nil
	}
	if w.Delete {
		return rejectedDoc("an AU may not delete the learner preferences.")
	}
	return checkPreferences(w.ContentType, w.Body, w.Merge)
}

func rejectedDoc(format string, args ...any) error {
	return rejectedAs("Learner preferences rejected by the cmi5 rules: ", format, args...)
}

// checkPreferences judges a learner preferences document an AU writes
// (cmi5 sections 11.0 to 11.2): a JSON object whose languagePreference is
// a comma-separated list of RFC 5646 tags and whose audioPreference is on
// or off. A PUT needs both; a POST (merged into the stored document) the
// ones it sends.
func checkPreferences(contentType string, body []byte, merge bool) error {
	if mt, _, err := mime.ParseMediaType(contentType); err != nil || mt != "application/json" {
		return rejectedDoc("the document must be application/json.")
	}
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(body, &doc); err != nil || doc == nil {
		return rejectedDoc("the document must be a JSON object.")
	}
	for _, name := range []string{"languagePreference", "audioPreference"} {
		raw, ok := doc[name]
		if !ok {
			if merge {
				continue
			}
			return rejectedDoc("the document needs %s.", name)
		}
		var v string
		if json.Unmarshal(raw, &v) != nil {
			return rejectedDoc("%s must be a string.", name)
		}
		if name == "audioPreference" && v != "on" && v != "off" {
			return rejectedDoc("audioPreference must be on or off.")
		}
		if name == "languagePreference" && !languageList(v) {
			return rejectedDoc("languagePreference must be a comma-separated list of RFC 5646 language tags.")
		}
	}
	return nil
}

// languageTag is the well-formed syntax of an RFC 5646 language tag
// (section 2.1, case-insensitive): language with extlangs, script,
// region, variants, extensions and private use; or private use alone.
// Grandfathered tags are left out.
var languageTag = regexp.MustCompile(`^(?i:(?:[a-z]{2,3}(?:-[a-z]{3}){0,3}|[a-z]{4,8})(?:-[a-z]{4})?(?:-(?:[a-z]{2}|[0-9]{3}))?` +
	`(?:-(?:[a-z0-9]{5,8}|[0-9][a-z0-9]{3}))*(?:-[0-9a-wy-z](?:-[a-z0-9]{2,8})+)*(?:-x(?:-[a-z0-9]{1,8})+)?|x(?:-[a-z0-9]{1,8})+)$`)

// languageList tells whether s is a non-empty comma-separated list of
// language tags.
func languageList(s string) bool {
	if s == "" {
		return false
	}
	for _, tag := range strings.Split(s, ",") {
		if !languageTag.MatchString(tag) {
			return false
		}
	}
	return true
}
