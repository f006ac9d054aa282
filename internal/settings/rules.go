package settings

import (
	"fmt"
	"math"
	"net/url"
	"strconv"
	"strings"
)

// Rule checks the value of one setting. Check returns the value to store
// (numbers given as numeric strings become numbers, "true"/"false" become
// booleans) and, when the value breaks the rule, a message naming the key
// and the rule. Null never reaches a rule: Key.Validate handles it.
type Rule struct {
	// Doc describes the rule for people, e.g. "one of: enabled, disabled".
	Doc   string
	check func(key string, v any) (any, string)
}

// Check validates v for the setting key.
func (r Rule) Check(key string, v any) (any, string) {
	if r.check == nil {
		return v, ""
	}
	return r.check(key, v)
}

func oneOf(values ...string) Rule {
	list := strings.Join(values, ", ")
	return Rule{Doc: "string, one of: " + list, check: func(key string, v any) (any, string) {
		s, ok := v.(string)
		if ok {
			for _, allowed := range values {
				if s == allowed {
					return s, ""
				}
			}
		}
		return v, fmt.Sprintf("The %s must be one of: %s.", key, list)
	}}
}

func boolean() Rule {
	return Rule{Doc: "boolean", check: func(key string, v any) (any, string) {
		switch b := v.(type) {
		case bool:
			return b, ""
		case string:
			switch b {
			case "true", "1":
				return true, ""
			case "false", "0":
				return false, ""
			}
		case float64:
			switch b {
			case 1:
				return true, ""
			case 0:
				return false, ""
			}
		}
		return v, fmt.Sprintf("The %s must be true or false.", key)
	}}
}

// number returns v as a finite number, accepting numeric strings.
func number(v any) (float64, bool) {
	var f float64
	switch n := v.(type) {
	case float64:
		f = n
	case string:
		p, err := strconv.ParseFloat(strings.TrimSpace(n), 64)
		if err != nil {
			return 0, false
		}
		f = p
	default:
		return 0, false
	}
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, false
	}
	return f, true
}

// integer accepts whole numbers; min, when given, is the smallest allowed.
func integer(min ...int) Rule {
	doc := "integer"
	if len(min) > 0 {
		doc += fmt.Sprintf(", minimum %d", min[0])
	}
	return Rule{Doc: doc, check: func(key string, v any) (any, string) {
		f, ok := number(v)
		if !ok || f != math.Trunc(f) || math.Abs(f) > 1<<53 {
			return v, fmt.Sprintf("The %s must be an integer.", key)
		}
		if len(min) > 0 && f < float64(min[0]) {
			return v, fmt.Sprintf("The %s must be at least %d.", key, min[0])
		}
		return f, ""
	}}
}

// numeric accepts any finite number; min, when given, is the smallest allowed.
func numeric(min ...float64) Rule {
	doc := "numeric"
	if len(min) > 0 {
		doc += ", minimum " + strconv.FormatFloat(min[0], 'f', -1, 64)
	}
	return Rule{Doc: doc, check: func(key string, v any) (any, string) {
		f, ok := number(v)
		if !ok {
			return v, fmt.Sprintf("The %s must be a number.", key)
		}
		if len(min) > 0 && f < min[0] {
			return v, fmt.Sprintf("The %s must be at least %s.", key, strconv.FormatFloat(min[0], 'f', -1, 64))
		}
		return f, ""
	}}
}

func str() Rule {
	return Rule{Doc: "string", check: func(key string, v any) (any, string) {
		if s, ok := v.(string); ok {
			return s, ""
		}
		return v, fmt.Sprintf("The %s must be a string.", key)
	}}
}

// link accepts an absolute URL: a scheme and a host, no spaces. Any scheme
// is allowed so that apps can use their own (myapp://callback).
func link() Rule {
	return Rule{Doc: "url", check: func(key string, v any) (any, string) {
		s, ok := v.(string)
		if ok && !strings.ContainsAny(s, " \t\r\n") {
			if u, err := url.Parse(s); err == nil && u.Scheme != "" && u.Host != "" {
				return s, ""
			}
		}
		return v, fmt.Sprintf("The %s must be a valid URL.", key)
	}}
}

// currency accepts an ISO 4217 code: three upper-case letters.
func currency() Rule {
	return Rule{Doc: "currency (ISO 4217, three upper-case letters)", check: func(key string, v any) (any, string) {
		s, ok := v.(string)
		if ok && len(s) == 3 && isUpper(s[0]) && isUpper(s[1]) && isUpper(s[2]) {
			return s, ""
		}
		return v, fmt.Sprintf("The %s must be a currency code of three upper-case letters (ISO 4217).", key)
	}}
}

func isUpper(c byte) bool { return c >= 'A' && c <= 'Z' }

func array() Rule {
	return Rule{Doc: "array", check: func(key string, v any) (any, string) {
		if a, ok := v.([]any); ok {
			return a, ""
		}
		return v, fmt.Sprintf("The %s must be an array.", key)
	}}
}
