// Package lrs is the xAPI 1.0.3 Learning Record Store: statements with
// voiding, queries and attachments, the state, activity profile and agent
// profile documents, and about. cmi5 content talks to it with the auth
// token of its launch; a tenant admin uses it as a general LRS. Rules of a
// profile on top of xAPI (cmi5's session rules) plug in through Rules.
package lrs

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/lms-platform/lms/internal/apperr"
)

// Version is the xAPI version the store speaks.
const Version = "1.0.3"

// VerbVoided is the verb that voids the statement its object names.
const VerbVoided = "http://adlnet.gov/expapi/verbs/voided"

// Statement is a statement checked by Parse: its JSON object, and the
// fields the store indexes.
type Statement struct {
	ID           string
	Object       map[string]any // the whole statement
	Verb         string
	ActorKey     string
	ObjectType   string
	ObjectID     string // activity id, or the id a StatementRef names
	ObjectAgent  string // agent key when the object is an agent or group
	Registration string
	Related      []Related
	Attachments  []AttachmentRef
}

// Related is an activity or agent a statement names beyond actor and
// object (related_activities, related_agents filters).
type Related struct {
	Kind  string // activity or agent
	Value string
}

// AttachmentRef is an attachment a statement declares.
type AttachmentRef struct {
	UsageType   string
	SHA2        string
	ContentType string
	Length      int64
	FileURL     string
}

// Verb returns the statement's verb id.
func (s *Statement) VerbID() string { return s.Verb }

func bad(format string, args ...any) error {
	return apperr.New(apperr.BadRequest, fmt.Sprintf(format, args...))
}

var uuidRe = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[1-8][0-9a-fA-F]{3}-[89abAB][0-9a-fA-F]{3}-[0-9a-fA-F]{12}$`)

// IsUUID tells whether s is an RFC 4122 UUID.
func IsUUID(s string) bool { return uuidRe.MatchString(s) }

// ParseStatement checks one statement object (xAPI 1.0.3 Data, section
// 2.4) and returns it with its indexed fields. Every violation is a 400
// naming the property.
func ParseStatement(raw json.RawMessage) (*Statement, error) {
	var obj map[string]any
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	if err := d.Decode(&obj); err != nil || obj == nil {
		return nil, bad("A statement must be a JSON object.")
	}
	if d.More() {
		return nil, bad("A statement must be one JSON object.")
	}
	s := &Statement{Object: obj}
	if err := checkStatement(s, obj, false); err != nil {
		return nil, err
	}
	return s, nil
}

var statementKeys = set("id", "actor", "verb", "object", "result", "context", "timestamp", "stored", "authority", "version", "attachments", "objectType")

func set(keys ...string) map[string]bool {
	m := map[string]bool{}
	for _, k := range keys {
		m[k] = true
	}
	return m
}

func only(obj map[string]any, allowed map[string]bool, where string) error {
	for k := range obj {
		if !allowed[k] {
			return bad("%s has the property %q, which xAPI does not define.", where, k)
		}
	}
	return nil
}

func checkStatement(s *Statement, obj map[string]any, sub bool) error {
	where := "The statement"
	if sub {
		where = "The sub-statement"
		for _, k := range []string{"id", "stored", "version", "authority"} {
			if _, ok := obj[k]; ok {
				return bad("A sub-statement may not have %s.", k)
			}
		}
	} else if _, ok := obj["objectType"]; ok {
		return bad("A statement has no objectType.")
	}
	if err := only(obj, statementKeys, where); err != nil {
		return err
	}
	if v, ok := obj["id"]; ok {
		id, isStr := v.(string)
		if !isStr || !IsUUID(id) {
			return bad("The statement id must be a UUID.")
		}
		s.ID = strings.ToLower(id)
	}
	actor, ok := obj["actor"]
	if !ok {
		return bad("%s has no actor.", where)
	}
	key, err := agentOrGroup(actor, "actor")
	if err != nil {
		return err
	}
	s.ActorKey = key
	verb, ok := obj["verb"].(map[string]any)
	if !ok {
		return bad("%s needs a verb object.", where)
	}
	if err := only(verb, set("id", "display"), "The verb"); err != nil {
		return err
	}
	vid, ok := verb["id"].(string)
	if !ok || !isIRI(vid) {
		return bad("The verb id must be an IRI.")
	}
	s.Verb = vid
	if d, ok := verb["display"]; ok {
		if err := languageMap(d, "verb.display"); err != nil {
			return err
		}
	}
	object, ok := obj["object"].(map[string]any)
	if !ok {
		return bad("%s needs an object.", where)
	}
	if err := checkObject(s, object, sub); err != nil {
		return err
	}
	if vid == VerbVoided && !sub && s.ObjectType != "StatementRef" {
		return bad("A voiding statement's object must be a StatementRef.")
	}
	if r, ok := obj["result"]; ok {
		if err := checkResult(r); err != nil {
			return err
		}
	}
	if c, ok := obj["context"]; ok {
		if err := checkContext(s, c, s.ObjectType == "Activity"); err != nil {
			return err
		}
	}
	for _, k := range []string{"timestamp", "stored"} {
		if v, ok := obj[k]; ok {
			if ts, isStr := v.(string); !isStr || !isTimestamp(ts) {
				return bad("The %s must be an ISO 8601 time with its zone.", k)
			}
		}
	}
	if v, ok := obj["version"]; ok {
		ver, isStr := v.(string)
		if !isStr || !versionRe.MatchString(ver) {
			return bad("The version must be 1.0.x.")
		}
	}
	if v, ok := obj["authority"]; ok {
		key, err := agentOrGroup(v, "authority")
		if err != nil {
			return err
		}
		// A group authority is the anonymous pair of an OAuth consumer
		// and a user (Data 2.4.9).
		if m, _ := v.(map[string]any); m["objectType"] == "Group" {
			if members, _ := m["member"].([]any); key != "" || len(members) != 2 {
				return bad("An authority that is a group must be an anonymous group of exactly two agents.")
			}
		}
	}
	if v, ok := obj["attachments"]; ok {
		if err := checkAttachments(s, v); err != nil {
			return err
		}
	}
	return nil
}

var versionRe = regexp.MustCompile(`^1\.0(\.[0-9]+)?$`)

func checkObject(s *Statement, o map[string]any, sub bool) error {
	typ := "Activity"
	if v, ok := o["objectType"]; ok {
		t, isStr := v.(string)
		if !isStr {
			return bad("The object's objectType must be a string.")
		}
		typ = t
	}
	s.ObjectType = typ
	switch typ {
	case "Activity":
		if err := only(o, set("objectType", "id", "definition"), "The activity"); err != nil {
			return err
		}
		id, ok := o["id"].(string)
		if !ok || !isIRI(id) {
			return bad("The activity id must be an IRI.")
		}
		s.ObjectID = id
		if d, ok := o["definition"]; ok {
			return checkDefinition(d)
		}
	case "Agent", "Group":
		key, err := agentOrGroup(o, "object")
		if err != nil {
			return err
		}
		s.ObjectAgent = key
	case "StatementRef":
		if err := only(o, set("objectType", "id"), "The StatementRef"); err != nil {
			return err
		}
		id, ok := o["id"].(string)
		if !ok || !IsUUID(id) {
			return bad("A StatementRef's id must be a UUID.")
		}
		s.ObjectID = strings.ToLower(id)
	case "SubStatement":
		if sub {
			return bad("A sub-statement may not hold another sub-statement.")
		}
		inner := &Statement{}
		m := map[string]any{}
		for k, v := range o {
			if k != "objectType" {
				m[k] = v
			}
		}
		if err := checkStatement(inner, m, true); err != nil {
			return err
		}
		s.Related = append(s.Related, Related{"agent", inner.ActorKey})
		if inner.ObjectType == "Activity" {
			s.Related = append(s.Related, Related{"activity", inner.ObjectID})
		} else if inner.ObjectAgent != "" {
			s.Related = append(s.Related, Related{"agent", inner.ObjectAgent})
		}
		s.Related = append(s.Related, inner.Related...)
	default:
		return bad("The objectType %q is not Activity, Agent, Group, StatementRef or SubStatement.", typ)
	}
	return nil
}

var interactionTypes = set("true-false", "choice", "fill-in", "long-fill-in", "matching", "performance", "sequencing", "likert", "numeric", "other")

func checkDefinition(v any) error {
	d, ok := v.(map[string]any)
	if !ok {
		return bad("The activity definition must be an object.")
	}
	if err := only(d, set("name", "description", "type", "moreInfo", "extensions", "interactionType", "correctResponsesPattern",
		"choices", "scale", "source", "target", "steps"), "The activity definition"); err != nil {
		return err
	}
	for _, k := range []string{"name", "description"} {
		if m, ok := d[k]; ok {
			if err := languageMap(m, "definition."+k); err != nil {
				return err
			}
		}
	}
	if t, ok := d["type"]; ok {
		if s, isStr := t.(string); !isStr || !isIRI(s) {
			return bad("The activity type must be an IRI.")
		}
	}
	if t, ok := d["moreInfo"]; ok {
		if s, isStr := t.(string); !isStr || !isIRI(s) {
			return bad("The activity moreInfo must be an IRL.")
		}
	}
	if e, ok := d["extensions"]; ok {
		if err := extensions(e, "definition.extensions"); err != nil {
			return err
		}
	}
	it, hasType := d["interactionType"]
	if hasType {
		s, isStr := it.(string)
		if !isStr || !interactionTypes[s] {
			return bad("The interactionType %v is not an xAPI interaction type.", it)
		}
	}
	if c, ok := d["correctResponsesPattern"]; ok {
		if !hasType {
			return bad("The activity definition has correctResponsesPattern but no interactionType.")
		}
		list, isList := c.([]any)
		if !isList {
			return bad("The correctResponsesPattern must be an array of strings.")
		}
		for _, x := range list {
			if _, isStr := x.(string); !isStr {
				return bad("The correctResponsesPattern must be an array of strings.")
			}
		}
	}
	for _, k := range []string{"choices", "scale", "source", "target", "steps"} {
		c, ok := d[k]
		if !ok {
			continue
		}
		if !hasType {
			return bad("The activity definition has %s but no interactionType.", k)
		}
		list, isList := c.([]any)
		if !isList {
			return bad("The %s must be an array of interaction components.", k)
		}
		seen := map[string]bool{}
		for _, x := range list {
			comp, isObj := x.(map[string]any)
			if !isObj {
				return bad("The %s must be an array of interaction components.", k)
			}
			if err := only(comp, set("id", "description"), "An interaction component"); err != nil {
				return err
			}
			id, isStr := comp["id"].(string)
			if !isStr || id == "" || seen[id] {
				return bad("Each interaction component needs a unique id.")
			}
			seen[id] = true
			if desc, ok := comp["description"]; ok {
				if err := languageMap(desc, k+".description"); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func checkResult(v any) error {
	r, ok := v.(map[string]any)
	if !ok {
		return bad("The result must be an object.")
	}
	if err := only(r, set("score", "success", "completion", "response", "duration", "extensions"), "The result"); err != nil {
		return err
	}
	for _, k := range []string{"success", "completion"} {
		if x, ok := r[k]; ok {
			if _, isBool := x.(bool); !isBool {
				return bad("The result's %s must be true or false.", k)
			}
		}
	}
	if x, ok := r["response"]; ok {
		if _, isStr := x.(string); !isStr {
			return bad("The result's response must be a string.")
		}
	}
	if x, ok := r["duration"]; ok {
		s, isStr := x.(string)
		if _, err := ParseDuration(s); !isStr || err != nil {
			return bad("The result's duration must be an ISO 8601 duration.")
		}
	}
	if x, ok := r["extensions"]; ok {
		if err := extensions(x, "result.extensions"); err != nil {
			return err
		}
	}
	if x, ok := r["score"]; ok {
		return checkScore(x)
	}
	return nil
}

func checkScore(v any) error {
	sc, ok := v.(map[string]any)
	if !ok {
		return bad("The score must be an object.")
	}
	if err := only(sc, set("scaled", "raw", "min", "max"), "The score"); err != nil {
		return err
	}
	nums := map[string]float64{}
	for k, x := range sc {
		n, isNum := x.(json.Number)
		f, err := n.Float64()
		if !isNum || err != nil {
			return bad("The score's %s must be a number.", k)
		}
		nums[k] = f
	}
	if s, ok := nums["scaled"]; ok && (s < -1 || s > 1) {
		return bad("The scaled score must be from -1 to 1.")
	}
	mn, hasMin := nums["min"]
	mx, hasMax := nums["max"]
	raw, hasRaw := nums["raw"]
	if hasMin && hasMax && mn >= mx {
		return bad("The score's min must be below its max.")
	}
	if hasRaw && (hasMin && raw < mn || hasMax && raw > mx) {
		return bad("The raw score must lie between min and max.")
	}
	return nil
}

func checkContext(s *Statement, v any, activity bool) error {
	c, ok := v.(map[string]any)
	if !ok {
		return bad("The context must be an object.")
	}
	if err := only(c, set("registration", "instructor", "team", "contextActivities", "revision", "platform", "language",
		"statement", "extensions"), "The context"); err != nil {
		return err
	}
	if x, ok := c["registration"]; ok {
		r, isStr := x.(string)
		if !isStr || !IsUUID(r) {
			return bad("The context registration must be a UUID.")
		}
		s.Registration = strings.ToLower(r)
	}
	if x, ok := c["instructor"]; ok {
		key, err := agentOrGroup(x, "context.instructor")
		if err != nil {
			return err
		}
		s.Related = append(s.Related, Related{"agent", key})
	}
	if x, ok := c["team"]; ok {
		m, isObj := x.(map[string]any)
		if !isObj || m["objectType"] != "Group" {
			return bad("The context team must be a Group.")
		}
		key, err := agentOrGroup(x, "context.team")
		if err != nil {
			return err
		}
		s.Related = append(s.Related, Related{"agent", key})
	}
	for _, k := range []string{"revision", "platform"} {
		if x, ok := c[k]; ok {
			if _, isStr := x.(string); !isStr {
				return bad("The context %s must be a string.", k)
			}
			if !activity {
				return bad("The context %s is only allowed when the object is an activity.", k)
			}
		}
	}
	if x, ok := c["language"]; ok {
		l, isStr := x.(string)
		if !isStr || !langTagRe.MatchString(l) {
			return bad("The context language must be a language tag.")
		}
	}
	if x, ok := c["statement"]; ok {
		m, isObj := x.(map[string]any)
		id, _ := m["id"].(string)
		if !isObj || m["objectType"] != "StatementRef" || !IsUUID(id) || len(m) != 2 {
			return bad("The context statement must be a StatementRef.")
		}
	}
	if x, ok := c["extensions"]; ok {
		if err := extensions(x, "context.extensions"); err != nil {
			return err
		}
	}
	if x, ok := c["contextActivities"]; ok {
		ca, isObj := x.(map[string]any)
		if !isObj {
			return bad("The contextActivities must be an object.")
		}
		if err := only(ca, set("parent", "grouping", "category", "other"), "The contextActivities"); err != nil {
			return err
		}
		for k, list := range ca {
			items, isList := list.([]any)
			if !isList {
				items = []any{list} // a single activity is allowed and normalized
				ca[k] = items
			}
			for _, a := range items {
				m, isObj := a.(map[string]any)
				if !isObj {
					return bad("The contextActivities %s must hold activities.", k)
				}
				tmp := &Statement{}
				if t, has := m["objectType"]; has && t != "Activity" {
					return bad("The contextActivities %s must hold activities.", k)
				}
				if err := checkObject(tmp, m, true); err != nil {
					return err
				}
				s.Related = append(s.Related, Related{"activity", tmp.ObjectID})
			}
		}
	}
	return nil
}

func checkAttachments(s *Statement, v any) error {
	list, ok := v.([]any)
	if !ok {
		return bad("The attachments must be an array.")
	}
	for _, x := range list {
		a, isObj := x.(map[string]any)
		if !isObj {
			return bad("Each attachment must be an object.")
		}
		if err := only(a, set("usageType", "display", "description", "contentType", "length", "sha2", "fileUrl"), "The attachment"); err != nil {
			return err
		}
		ut, _ := a["usageType"].(string)
		if !isIRI(ut) {
			return bad("The attachment usageType must be an IRI.")
		}
		if err := languageMap(a["display"], "attachment.display"); err != nil {
			return err
		}
		if d, ok := a["description"]; ok {
			if err := languageMap(d, "attachment.description"); err != nil {
				return err
			}
		}
		ct, isStr := a["contentType"].(string)
		if !isStr || ct == "" {
			return bad("The attachment contentType must be a media type.")
		}
		n, isNum := a["length"].(json.Number)
		length, err := n.Int64()
		if !isNum || err != nil || length < 0 {
			return bad("The attachment length must be a whole number.")
		}
		sha, isStr := a["sha2"].(string)
		if !isStr || !sha2Re.MatchString(sha) {
			return bad("The attachment sha2 must be a SHA-2 hash in hex.")
		}
		ref := AttachmentRef{UsageType: ut, SHA2: strings.ToLower(sha), ContentType: ct, Length: length}
		if f, ok := a["fileUrl"]; ok {
			u, isStr := f.(string)
			if !isStr || !isIRI(u) {
				return bad("The attachment fileUrl must be an IRL.")
			}
			ref.FileURL = u
		}
		s.Attachments = append(s.Attachments, ref)
	}
	return nil
}

var sha2Re = regexp.MustCompile(`^[0-9a-fA-F]{56,128}$`)

var langTagRe = regexp.MustCompile(`^[a-zA-Z]{1,8}(-[a-zA-Z0-9]{1,8})*$`)

func languageMap(v any, where string) error {
	m, ok := v.(map[string]any)
	if !ok {
		return bad("The %s must be a language map.", where)
	}
	for k, x := range m {
		if !langTagRe.MatchString(k) {
			return bad("The %s has the key %q, which is not a language tag.", where, k)
		}
		if _, isStr := x.(string); !isStr {
			return bad("The %s must map languages to strings.", where)
		}
	}
	return nil
}

func extensions(v any, where string) error {
	m, ok := v.(map[string]any)
	if !ok {
		return bad("The %s must be an object.", where)
	}
	for k := range m {
		if !isIRI(k) {
			return bad("The %s key %q is not an IRI.", where, k)
		}
	}
	return nil
}

// isIRI tells whether s is an absolute IRI.
func isIRI(s string) bool {
	if s == "" || strings.ContainsAny(s, " \t\n<>\"{}|\\^`") {
		return false
	}
	u, err := url.Parse(s)
	return err == nil && u.Scheme != "" && len(s) > len(u.Scheme)+1
}

func isTimestamp(s string) bool {
	// ISO 8601 forbids the negative zero offset.
	if strings.HasSuffix(s, "-00:00") || strings.HasSuffix(s, "-0000") || strings.HasSuffix(s, "-00") {
		return false
	}
	if _, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return true
	}
	// ISO 8601 also allows the zone without a colon.
	_, err := time.Parse("2006-01-02T15:04:05.999999999Z0700", s)
	return err == nil
}

var durationRe = regexp.MustCompile(`^P(?:(\d+(?:\.\d+)?)Y)?(?:(\d+(?:\.\d+)?)M)?(?:(\d+(?:\.\d+)?)W)?(?:(\d+(?:\.\d+)?)D)?(?:T(?:(\d+(?:\.\d+)?)H)?(?:(\d+(?:\.\d+)?)M)?(?:(\d+(?:\.\d+)?)S)?)?$`)

// ParseDuration reads an ISO 8601 duration (years and months counted as
// 365 and 30 days).
func ParseDuration(s string) (time.Duration, error) {
	m := durationRe.FindStringSubmatch(s)
	if m == nil || s == "P" || strings.HasSuffix(s, "T") {
		return 0, fmt.Errorf("not an ISO 8601 duration: %q", s)
	}
	// Weeks are a form of their own (PnW), not combined with the others.
	if m[3] != "" && strings.TrimSuffix(s, "W") != "P"+m[3] {
		return 0, fmt.Errorf("not an ISO 8601 duration (weeks stand alone): %q", s)
	}
	units := []float64{365 * 86400, 30 * 86400, 7 * 86400, 86400, 3600, 60, 1}
	var secs float64
	for i, u := range units {
		if m[i+1] == "" {
			continue
		}
		var f float64
		fmt.Sscan(m[i+1], &f)
		secs += f * u
	}
	return time.Duration(secs * float64(time.Second)), nil
}

var sha1Re = regexp.MustCompile(`^[0-9a-fA-F]{40}$`)

// agentOrGroup checks an Agent or Group and returns its key ("" for an
// anonymous group).
func agentOrGroup(v any, where string) (string, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return "", bad("The %s must be an Agent or Group.", where)
	}
	typ, _ := m["objectType"].(string)
	if t, has := m["objectType"]; has && t != "Agent" && t != "Group" {
		return "", bad("The %s's objectType must be Agent or Group.", where)
	}
	if typ == "Group" {
		if err := only(m, set("objectType", "name", "member", "mbox", "mbox_sha1sum", "openid", "account"), "The group"); err != nil {
			return "", err
		}
		if x, ok := m["member"]; ok {
			list, isList := x.([]any)
			if !isList {
				return "", bad("A group's member must be an array of agents.")
			}
			for _, a := range list {
				am, isObj := a.(map[string]any)
				if !isObj || am["objectType"] == "Group" {
					return "", bad("A group's members must be agents.")
				}
				if _, err := agentOrGroup(a, where+".member"); err != nil {
					return "", err
				}
			}
		}
		key, n, err := ifi(m)
		if err != nil {
			return "", err
		}
		if n == 0 {
			if list, _ := m["member"].([]any); len(list) == 0 {
				return "", bad("An anonymous group needs its members.")
			}
		}
		return key, nil
	}
	if err := only(m, set("objectType", "name", "mbox", "mbox_sha1sum", "openid", "account"), "The agent"); err != nil {
		return "", err
	}
	key, n, err := ifi(m)
	if err != nil {
		return "", err
	}
	if n == 0 {
		return "", bad("The %s needs exactly one of mbox, mbox_sha1sum, openid or account.", where)
	}
	return key, nil
}

// ifi checks an agent's inverse functional identifier: at most one.
func ifi(m map[string]any) (string, int, error) {
	if x, ok := m["name"]; ok {
		if _, isStr := x.(string); !isStr {
			return "", 0, bad("An agent's name must be a string.")
		}
	}
	var key string
	n := 0
	if x, ok := m["mbox"]; ok {
		n++
		s, isStr := x.(string)
		if !isStr || !strings.HasPrefix(s, "mailto:") || !strings.Contains(s, "@") {
			return "", 0, bad("An mbox must be a mailto: IRI.")
		}
		key = "mbox:" + s
	}
	if x, ok := m["mbox_sha1sum"]; ok {
		n++
		s, isStr := x.(string)
		if !isStr || !sha1Re.MatchString(s) {
			return "", 0, bad("An mbox_sha1sum must be a SHA-1 hash in hex.")
		}
		key = "sha1:" + strings.ToLower(s)
	}
	if x, ok := m["openid"]; ok {
		n++
		s, isStr := x.(string)
		if !isStr || !isIRI(s) {
			return "", 0, bad("An openid must be a URI.")
		}
		key = "openid:" + s
	}
	if x, ok := m["account"]; ok {
		n++
		a, isObj := x.(map[string]any)
		if !isObj {
			return "", 0, bad("An account must be an object.")
		}
		if err := only(a, set("homePage", "name"), "The account"); err != nil {
			return "", 0, err
		}
		hp, _ := a["homePage"].(string)
		name, isStr := a["name"].(string)
		if !isIRI(hp) || !isStr {
			return "", 0, bad("An account needs a homePage IRL and a name.")
		}
		key = "account:" + hp + "|" + name
	}
	if n > 1 {
		return "", 0, bad("An agent may have only one of mbox, mbox_sha1sum, openid or account.")
	}
	return key, n, nil
}

// AgentKey checks an agent given as a query parameter or document key and
// returns its key.
func AgentKey(raw string) (string, map[string]any, error) {
	var m map[string]any
	d := json.NewDecoder(strings.NewReader(raw))
	d.UseNumber()
	if err := d.Decode(&m); err != nil {
		return "", nil, bad("The agent parameter must be an Agent as JSON.")
	}
	key, err := agentOrGroup(m, "agent")
	if err != nil {
		return "", nil, err
	}
	if key == "" {
		return "", nil, bad("The agent parameter must identify an agent.")
	}
	return key, m, nil
}
