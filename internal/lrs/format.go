package lrs

import (
	"bytes"
	"encoding/json"
	"sort"
	"strconv"
	"strings"
)

// formatted applies the format parameter of GET statements (Communication
// 2.1.3) to a stored statement: exact returns it as stored; ids reduces
// agents and groups to their identifiers (an anonymous group to its
// members'), and activities and verbs to their ids; canonical keeps one
// language of each language map of the verbs and activity definitions,
// chosen by the Accept-Language preferences langs.
func formatted(body json.RawMessage, format string, langs []string) json.RawMessage {
	if format != "ids" && format != "canonical" {
		return body
	}
	var m map[string]any
	d := json.NewDecoder(bytes.NewReader(body))
	d.UseNumber()
	if d.Decode(&m) != nil {
		return body
	}
	if format == "ids" {
		idsOnly(m)
	} else {
		canonical(m, langs)
	}
	out, err := json.Marshal(m)
	if err != nil {
		return body
	}
	return out
}

func idsOnly(st map[string]any) {
	for _, k := range []string{"actor", "authority"} {
		if a, ok := st[k].(map[string]any); ok {
			st[k] = agentIDs(a)
		}
	}
	if v, ok := st["verb"].(map[string]any); ok {
		st["verb"] = map[string]any{"id": v["id"]}
	}
	if o, ok := st["object"].(map[string]any); ok {
		switch o["objectType"] {
		case "Agent", "Group":
			st["object"] = agentIDs(o)
		case "SubStatement":
			idsOnly(o)
		case "StatementRef":
		default:
			st["object"] = map[string]any{"id": o["id"]}
		}
	}
	if c, ok := st["context"].(map[string]any); ok {
		for _, k := range []string{"instructor", "team"} {
			if a, ok := c[k].(map[string]any); ok {
				c[k] = agentIDs(a)
			}
		}
		eachContextActivity(c, func(list []any, i int, a map[string]any) { list[i] = map[string]any{"id": a["id"]} })
	}
}

// agentIDs is an agent or group by its identifier: an identified group
// without its members, an anonymous one with its members' identifiers.
func agentIDs(a map[string]any) map[string]any {
	out := map[string]any{}
	identified := false
	for _, k := range []string{"objectType", "mbox", "mbox_sha1sum", "openid", "account"} {
		if v, ok := a[k]; ok {
			out[k] = v
			identified = identified || k != "objectType"
		}
	}
	if members, ok := a["member"].([]any); ok && !identified {
		list := make([]any, len(members))
		for i, m := range members {
			if mm, ok := m.(map[string]any); ok {
				list[i] = agentIDs(mm)
			}
		}
		out["member"] = list
	}
	return out
}

func eachContextActivity(c map[string]any, fn func(list []any, i int, a map[string]any)) {
	ca, ok := c["contextActivities"].(map[string]any)
	if !ok {
		return
	}
	for _, v := range ca {
		list, _ := v.([]any)
		for i, a := range list {
			if am, ok := a.(map[string]any); ok {
				fn(list, i, am)
			}
		}
	}
}

// canonical keeps one language in the verb's display and in the language
// maps of every activity definition of a statement (and its
// sub-statement).
func canonical(st map[string]any, langs []string) {
	if v, ok := st["verb"].(map[string]any); ok {
		oneLanguage(v, "display", langs)
	}
	if o, ok := st["object"].(map[string]any); ok {
		switch o["objectType"] {
		case nil, "Activity":
			canonicalActivity(o, langs)
		case "SubStatement":
			canonical(o, langs)
		}
	}
	if c, ok := st["context"].(map[string]any); ok {
		eachContextActivity(c, func(_ []any, _ int, a map[string]any) { canonicalActivity(a, langs) })
	}
}

func canonicalActivity(a map[string]any, langs []string) {
	d, ok := a["definition"].(map[string]any)
	if !ok {
		return
	}
	oneLanguage(d, "name", langs)
	oneLanguage(d, "description", langs)
	for _, k := range []string{"choices", "scale", "source", "target", "steps"} {
		list, _ := d[k].([]any)
		for _, c := range list {
			if cm, ok := c.(map[string]any); ok {
				oneLanguage(cm, "description", langs)
			}
		}
	}
}

// oneLanguage replaces the language map obj[key] by its entry in the
// language the preferences choose.
func oneLanguage(obj map[string]any, key string, langs []string) {
	m, ok := obj[key].(map[string]any)
	if !ok || len(m) <= 1 {
		return
	}
	tag := chooseLanguage(m, langs)
	obj[key] = map[string]any{tag: m[tag]}
}

// chooseLanguage picks the key of a language map that the first
// preference it can meet names: the same tag, or a tag the preference is
// a prefix of ("en" takes "en-GB", RFC 2616 14.4), or any for "*". When
// no preference is met, the map still answers one language: the first
// of its tags in order.
func chooseLanguage(m map[string]any, langs []string) string {
	tags := make([]string, 0, len(m))
	for k := range m {
		tags = append(tags, k)
	}
	sort.Strings(tags)
	for _, want := range langs {
		if want == "*" {
			return tags[0]
		}
		for _, t := range tags {
			if strings.EqualFold(t, want) {
				return t
			}
		}
		for _, t := range tags {
			if len(t) > len(want) && strings.EqualFold(t[:len(want)], want) && t[len(want)] == '-' {
				return t
			}
		}
	}
	return tags[0]
}

// acceptLanguages reads an Accept-Language header into its language
// ranges, most preferred first; ranges with q=0 are left out.
func acceptLanguages(h string) []string {
	type pref struct {
		tag string
		q   float64
	}
	var prefs []pref
	for _, part := range strings.Split(h, ",") {
		tag, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		tag = strings.TrimSpace(tag)
		if tag == "" {
			continue
		}
		q := 1.0
		for _, p := range strings.Split(params, ";") {
			name, val, ok := strings.Cut(strings.TrimSpace(p), "=")
			if ok && strings.TrimSpace(name) == "q" {
				if f, err := strconv.ParseFloat(strings.TrimSpace(val), 64); err == nil {
					q = f
				}
			}
		}
		if q > 0 {
			prefs = append(prefs, pref{tag, q})
		}
	}
	sort.SliceStable(prefs, func(i, j int) bool { return prefs[i].q > prefs[j].q })
	out := make([]string, len(prefs))
	for i, p := range prefs {
		out[i] = p.tag
	}
	return out
}
