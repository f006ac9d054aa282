package notify

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/lms-platform/lms/internal/apperr"
	"github.com/lms-platform/lms/internal/clock"
	"github.com/lms-platform/lms/internal/platform"
	"github.com/lms-platform/lms/internal/sqldb"
)

// Templates keeps the tenants' own message templates (message_templates)
// beside the built-in defaults.
type Templates struct {
	Clock clock.Clock
}

var errTemplateNotFound = apperr.New(apperr.NotFound, "Template not found.")

const templateColumns = `id, event, channel, recipient, subject, body_text, body_html, enabled, created_at, updated_at`

// Effective returns the template a slot sends with: the tenant's own, or
// the default. A slot switched off comes back with Enabled false.
func (ts *Templates) Effective(ctx context.Context, q sqldb.Querier, s Slot) (Template, error) {
	row := q.QueryRowContext(ctx, `SELECT `+templateColumns+` FROM message_templates
		WHERE event = $1 AND channel = $2 AND recipient = $3`, s.Event, s.Channel, s.Recipient)
	tpl, err := scanTemplate(row)
	if sqldb.NotFound(err) {
		d, ok := Default(s)
		if !ok {
			return Template{}, fmt.Errorf("notify: no template for %s", s)
		}
		return d, nil
	}
	return tpl, err
}

// List returns the effective template of every slot, in the order of the
// Events table.
func (ts *Templates) List(ctx context.Context, t *platform.Tenant) ([]Template, error) {
	out := []Template{}
	for _, s := range Slots() {
		tpl, err := ts.Effective(ctx, t.DB, s)
		if err != nil {
			return nil, err
		}
		out = append(out, tpl)
	}
	return out, nil
}

// Get returns one of the tenant's own templates.
func (ts *Templates) Get(ctx context.Context, t *platform.Tenant, id int64) (Template, error) {
	tpl, err := scanTemplate(t.DB.QueryRowContext(ctx, `SELECT `+templateColumns+` FROM message_templates WHERE id = $1`, id))
	if sqldb.NotFound(err) {
		return Template{}, errTemplateNotFound
	}
	return tpl, err
}

// Create saves the tenant's own template of a slot, which replaces the
// default from then on. A slot has at most one (Conflict).
func (ts *Templates) Create(ctx context.Context, t *platform.Tenant, tpl Template) (Template, error) {
	if err := Check(tpl); err != nil {
		return Template{}, err
	}
	now := ts.Clock.Now()
	var id int64
	err := t.DB.QueryRowContext(ctx, `INSERT INTO message_templates
		(event, channel, recipient, subject, body_text, body_html, enabled, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8) RETURNING id`,
		tpl.Event, tpl.Channel, tpl.Recipient, tpl.Subject, tpl.Text, tpl.HTML, tpl.Enabled, now).Scan(&id)
	if sqldb.IsUniqueViolation(err) {
		return Template{}, apperr.New(apperr.Conflict, "This event and channel already have a template of the tenant: update it instead.")
	}
	if err != nil {
		return Template{}, fmt.Errorf("notify: create template %s: %w", tpl.Slot, err)
	}
	return ts.Get(ctx, t, id)
}

// Update replaces the texts and the enabled flag of one of the tenant's
// templates; its slot stays.
func (ts *Templates) Update(ctx context.Context, t *platform.Tenant, id int64, in Template) (Template, error) {
	cur, err := ts.Get(ctx, t, id)
	if err != nil {
		return Template{}, err
	}
	in.Slot = cur.Slot
	if err := Check(in); err != nil {
		return Template{}, err
	}
	_, err = t.DB.ExecContext(ctx, `UPDATE message_templates SET subject = $1, body_text = $2, body_html = $3,
		enabled = $4, updated_at = $5 WHERE id = $6`, in.Subject, in.Text, in.HTML, in.Enabled, ts.Clock.Now(), id)
	if err != nil {
		return Template{}, fmt.Errorf("notify: update template %d: %w", id, err)
	}
	return ts.Get(ctx, t, id)
}

// Delete removes one of the tenant's templates: its slot sends the
// default again.
func (ts *Templates) Delete(ctx context.Context, t *platform.Tenant, id int64) (Template, error) {
	cur, err := ts.Get(ctx, t, id)
	if err != nil {
		return Template{}, err
	}
	if _, err := t.DB.ExecContext(ctx, `DELETE FROM message_templates WHERE id = $1`, id); err != nil {
		return Template{}, fmt.Errorf("notify: delete template %d: %w", id, err)
	}
	d, _ := Default(cur.Slot)
	return d, nil
}

// RestoreDefault puts the default's texts into one of the tenant's
// templates and enables it, keeping the template (and its id) to edit
// further from the default.
func (ts *Templates) RestoreDefault(ctx context.Context, t *platform.Tenant, id int64) (Template, error) {
	cur, err := ts.Get(ctx, t, id)
	if err != nil {
		return Template{}, err
	}
	d, _ := Default(cur.Slot)
	return ts.Update(ctx, t, id, d)
}

func scanTemplate(s scanner) (Template, error) {
	var tpl Template
	var created, updated sql.NullTime
	err := s.Scan(&tpl.ID, &tpl.Event, &tpl.Channel, &tpl.Recipient, &tpl.Subject, &tpl.Text, &tpl.HTML,
		&tpl.Enabled, &created, &updated)
	if err != nil {
		return Template{}, err
	}
	tpl.Custom = true
	c, u := created.Time.UTC(), updated.Time.UTC()
	tpl.CreatedAt, tpl.UpdatedAt = &c, &u
	return tpl, nil
}
