package accounts

import (
	"context"
	"fmt"
	"regexp"
	"unicode/utf8"

	"github.com/lms-platform/lms/internal/access"
	"github.com/lms-platform/lms/internal/platform"
	"github.com/lms-platform/lms/internal/sqldb"
)

// Personal settings are free key/value strings a user (or an admin for
// them) keeps, such as interface preferences of a frontend.

const (
	maxSettingValue = 4096
	maxSettings     = 100
)

var settingKey = regexp.MustCompile(`^[a-z0-9_.-]{1,64}$`)

// SettingsChange says how a map of settings changes the stored ones.
type SettingsChange int

const (
	// MergeSettings writes the given keys; an empty value removes its key.
	MergeSettings SettingsChange = iota
	// ReplaceSettings makes the given map the whole set.
	ReplaceSettings
)

// Settings returns a user's personal settings.
func (s *Service) Settings(ctx context.Context, t *platform.Tenant, p *access.Principal, userID int64) (map[string]string, error) {
	if err := allow(canReadSettings(p, userID)); err != nil {
		return nil, err
	}
	if _, err := ByID(ctx, t.DB, userID); err != nil {
		return nil, err
	}
	return settingsOf(ctx, t.DB, userID)
}

// UpdateSettings merges or replaces a user's personal settings. Keys match
// ^[a-z0-9_.-]{1,64}$, values have at most 4096 characters and a user has
// at most 100 settings; a broken rule is a 422 keyed by the setting's key
// and stores nothing.
func (s *Service) UpdateSettings(ctx context.Context, t *platform.Tenant, p *access.Principal, userID int64,
	in map[string]string, how SettingsChange) (map[string]string, error) {
	if err := allow(canUpdateSettings(p, userID)); err != nil {
		return nil, err
	}
	probs := problems{}
	for k, v := range in {
		if !settingKey.MatchString(k) {
			probs.add(k, "The setting key must be 1 to 64 lower-case letters, digits, '_', '.' or '-'.")
		}
		if utf8.RuneCountInString(v) > maxSettingValue {
			probs.add(k, fmt.Sprintf("The setting value may not be greater than %d characters.", maxSettingValue))
		}
	}
	if err := probs.err(); err != nil {
		return nil, err
	}
	var out map[string]string
	err := t.Tx(ctx, func(tx *sqldb.Tx) error {
		if _, err := ByID(ctx, tx, userID); err != nil {
			return err
		}
		if how == ReplaceSettings {
			if _, err := tx.ExecContext(ctx, `DELETE FROM user_settings WHERE user_id = $1`, userID); err != nil {
				return fmt.Errorf("accounts: clear settings: %w", err)
			}
		}
		for k, v := range in {
			if err := putSetting(ctx, tx, userID, k, v); err != nil {
				return err
			}
		}
		var err error
		if out, err = settingsOf(ctx, tx, userID); err != nil {
			return err
		}
		if len(out) > maxSettings {
			probs.add("settings", fmt.Sprintf("A user may have at most %d settings.", maxSettings))
			return probs.err()
		}
		return nil
	})
	return out, err
}

// putSetting stores one setting; an empty value removes it.
func putSetting(ctx context.Context, q sqldb.Querier, userID int64, key, value string) error {
	if _, err := q.ExecContext(ctx, `DELETE FROM user_settings WHERE user_id = $1 AND key = $2`, userID, key); err != nil {
		return fmt.Errorf("accounts: write setting: %w", err)
	}
	if value == "" {
		return nil
	}
	if _, err := q.ExecContext(ctx, `INSERT INTO user_settings (user_id, key, value) VALUES ($1, $2, $3)`,
		userID, key, value); err != nil {
		return fmt.Errorf("accounts: write setting: %w", err)
	}
	return nil
}

func settingsOf(ctx context.Context, q sqldb.Querier, userID int64) (map[string]string, error) {
	rows, err := q.QueryContext(ctx, `SELECT key, value FROM user_settings WHERE user_id = $1`, userID)
	if err != nil {
		return nil, fmt.Errorf("accounts: load settings: %w", err)
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var k, v string
		if err := rows.Scan(&k, &v); err != nil {
			return nil, err
		}
		out[k] = v
	}
	return out, rows.Err()
}
