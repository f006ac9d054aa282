package web

import (
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/lms-platform/lms/client"
)

// settingField is one setting of the settings form.
type settingField struct {
	Key string
	// Kind is how it is typed: bool (a choice), text, json (lists and
	// objects), secret (never shown; empty keeps it).
	Kind   string
	Value  string
	Errors []string
}

type settingGroup struct {
	Name   string
	Fields []settingField
}

type settingsPage struct {
	Groups []settingGroup
}

// flattenSettings turns GET /api/config's nested answer into dotted keys
// and their values. The demo group is read-only and not shown.
func flattenSettings(prefix string, m map[string]any, out map[string]any) {
	for k, v := range m {
		key := k
		if prefix != "" {
			key = prefix + "." + k
		}
		if key == "lms_demo" {
			continue
		}
		if sub, ok := v.(map[string]any); ok && len(sub) > 0 {
			flattenSettings(key, sub, out)
			continue
		}
		out[key] = v
	}
}

// secretSetting tells whether a key holds a credential: its value is
// not put in the page. A publishable key is public by design.
func secretSetting(key string) bool {
	last := strings.ToLower(key[strings.LastIndex(key, ".")+1:])
	if strings.Contains(last, "secret") || strings.Contains(last, "password") {
		return true
	}
	switch last {
	case "token", "api_key", "key", "crc", "private_key":
		return true
	}
	return false
}

func settingKind(key string, v any) string {
	switch v.(type) {
	case bool:
		return "bool"
	case []any, map[string]any:
		return "json"
	}
	if secretSetting(key) {
		return "secret"
	}
	return "text"
}

// settingText is a value as its field shows it.
func settingText(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case bool:
		return strconv.FormatBool(x)
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	default:
		b, _ := json.Marshal(x)
		return string(b)
	}
}

func buildSettings(values map[string]any, typed map[string]string, errs map[string][]string) settingsPage {
	keys := make([]string, 0, len(values))
	for k := range values {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var d settingsPage
	for _, k := range keys {
		f := settingField{Key: k, Kind: settingKind(k, values[k]), Errors: errs[k]}
		if f.Kind != "secret" {
			f.Value = settingText(values[k])
		}
		if t, ok := typed[k]; ok && f.Kind != "secret" {
			f.Value = t
		}
		group, _, _ := strings.Cut(k, ".")
		if n := len(d.Groups); n == 0 || d.Groups[n-1].Name != group {
			d.Groups = append(d.Groups, settingGroup{Name: group})
		}
		g := &d.Groups[len(d.Groups)-1]
		g.Fields = append(g.Fields, f)
	}
	return d
}

func (c *adminCall) settings() (map[string]any, error) {
	cfg, err := c.api.GetConfig(c.r.Context())
	if err != nil {
		return nil, err
	}
	values := map[string]any{}
	flattenSettings("", cfg, values)
	return values, nil
}

func (h *Handler) adminSettings(c *adminCall) {
	values, err := c.settings()
	if err != nil {
		h.adminFailed(c, err)
		return
	}
	c.notice()
	h.adminPage(c, http.StatusOK, "settings", "settings.title", buildSettings(values, nil, nil))
}

// adminSettingsSave sends the settings whose field changed, all at once:
// the API checks every one and changes all or none, and its messages are
// shown next to their fields.
func (h *Handler) adminSettingsSave(c *adminCall) {
	values, err := c.settings()
	if err != nil {
		h.adminFailed(c, err)
		return
	}
	typed := map[string]string{}
	errs := map[string][]string{}
	var items []client.Item
	for key, old := range values {
		field := "s." + key
		if _, sent := c.r.PostForm[field]; !sent {
			continue
		}
		text := strings.TrimSpace(c.r.PostFormValue(field))
		kind := settingKind(key, old)
		if kind == "secret" {
			if text != "" {
				items = append(items, client.Item{Key: key, Value: text})
			}
			continue
		}
		typed[key] = text
		if text == settingText(old) {
			continue
		}
		switch {
		case kind == "json":
			var v any
			if json.Unmarshal([]byte(text), &v) != nil {
				errs[key] = []string{c.v.T("err.json")}
				continue
			}
			items = append(items, client.Item{Key: key, Value: v})
		case text == "" && old == nil:
		case text == "":
			items = append(items, client.Item{Key: key, Value: nil})
		default:
			items = append(items, client.Item{Key: key, Value: text})
		}
	}
	if len(errs) > 0 {
		c.v.Error = c.v.T("err.form")
		h.adminPage(c, http.StatusUnprocessableEntity, "settings", "settings.title", buildSettings(values, typed, errs))
		return
	}
	if len(items) == 0 {
		c.done("/admin/settings", "done.nochange")
		return
	}
	_, err = c.api.PostAdminConfig(c.r.Context(), client.UpdateInputBody{Config: items})
	if c.invalid(err) {
		h.adminPage(c, http.StatusUnprocessableEntity, "settings", "settings.title", buildSettings(values, typed, c.v.Errors))
		return
	}
	if err != nil {
		h.adminFailed(c, err)
		return
	}
	c.done("/admin/settings", "done.saved")
}
