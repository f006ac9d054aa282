package lmsctl

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"
)

// printer writes answers as JSON (for programs) or as a table (for a
// person at a terminal).
type printer struct {
	w    io.Writer
	json bool
}

func (p printer) print(v any) error {
	raw, err := json.Marshal(v)
	if err != nil {
		return err
	}
	if p.json {
		var pretty any
		_ = json.Unmarshal(raw, &pretty)
		enc := json.NewEncoder(p.w)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		return enc.Encode(pretty)
	}
	var doc any
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil {
		return err
	}
	// A page prints its items, then where it is in the list.
	if m, ok := doc.(map[string]any); ok && len(m) == 2 && m["meta"] != nil {
		if items, ok := m["data"].([]any); ok {
			if err := table(p.w, items); err != nil {
				return err
			}
			meta, _ := m["meta"].(map[string]any)
			_, err := fmt.Fprintf(p.w, "page %v of %v (%v in all)\n", meta["current_page"], meta["last_page"], meta["total"])
			return err
		}
	}
	switch d := doc.(type) {
	case []any:
		return table(p.w, d)
	case map[string]any:
		return record(p.w, d)
	case nil:
		_, err := fmt.Fprintln(p.w, "ok")
		return err
	default:
		_, err := fmt.Fprintln(p.w, scalar(d))
		return err
	}
}

// leading are the columns a person looks for first.
var leading = []string{"id", "name", "title", "email", "status", "kind"}

const maxColumns = 7

// table prints a list of records with their scalar fields as columns.
func table(w io.Writer, items []any) error {
	if len(items) == 0 {
		_, err := fmt.Fprintln(w, "(none)")
		return err
	}
	first, ok := items[0].(map[string]any)
	if !ok {
		for _, it := range items {
			if _, err := fmt.Fprintln(w, scalar(it)); err != nil {
				return err
			}
		}
		return nil
	}
	var cols []string
	for _, k := range leading {
		if v, ok := first[k]; ok && isScalar(v) {
			cols = append(cols, k)
		}
	}
	rest := make([]string, 0, len(first))
	for k, v := range first {
		if isScalar(v) && !slices.Contains(cols, k) {
			rest = append(rest, k)
		}
	}
	sort.Strings(rest)
	cols = append(cols, rest...)
	if len(cols) > maxColumns {
		cols = cols[:maxColumns]
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, strings.ToUpper(strings.Join(cols, "\t")))
	for _, it := range items {
		m, _ := it.(map[string]any)
		cells := make([]string, len(cols))
		for i, c := range cols {
			cells[i] = cell(m[c])
		}
		fmt.Fprintln(tw, strings.Join(cells, "\t"))
	}
	return tw.Flush()
}

// record prints one object as "field  value" lines.
func record(w io.Writer, m map[string]any) error {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, k := range keys {
		fmt.Fprintf(tw, "%s\t%s\n", k, cell(m[k]))
	}
	return tw.Flush()
}

func isScalar(v any) bool {
	switch v.(type) {
	case map[string]any, []any:
		return false
	}
	return true
}

func scalar(v any) string {
	if v == nil {
		return "-"
	}
	return fmt.Sprint(v)
}

// cell shows a value on one line, nested values as short JSON.
func cell(v any) string {
	if isScalar(v) {
		s := strings.ReplaceAll(scalar(v), "\n", " ")
		return truncate(s, 60)
	}
	raw, _ := json.Marshal(v)
	return truncate(string(raw), 60)
}

func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
