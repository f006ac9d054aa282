package settings

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/lms-platform/lms/internal/sqldb"
)

// storedValues reads every value the tenant has set.
func storedValues(ctx context.Context, q sqldb.Querier) (map[string]any, error) {
	rows, err := q.QueryContext(ctx, `SELECT key, value FROM settings`)
	if err != nil {
		return nil, fmt.Errorf("settings: read: %w", err)
	}
	defer rows.Close()
	out := map[string]any{}
	for rows.Next() {
		var key, raw string
		if err := rows.Scan(&key, &raw); err != nil {
			return nil, fmt.Errorf("settings: read: %w", err)
		}
		var v any
		if err := json.Unmarshal([]byte(raw), &v); err != nil {
			return nil, fmt.Errorf("settings: decode %s: %w", key, err)
		}
		out[key] = v
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("settings: read: %w", err)
	}
	return out, nil
}

// storeValue writes the tenant's value of key, replacing an earlier one.
func storeValue(ctx context.Context, q sqldb.Querier, key string, v any, now time.Time) error {
	raw, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("settings: encode %s: %w", key, err)
	}
	_, err = q.ExecContext(ctx, `INSERT INTO settings (key, value, updated_at) VALUES ($1, $2, $3)
		ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`,
		key, string(raw), now.UTC())
	if err != nil {
		return fmt.Errorf("settings: write %s: %w", key, err)
	}
	return nil
}
