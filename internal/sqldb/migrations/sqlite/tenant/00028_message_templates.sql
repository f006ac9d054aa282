-- +goose Up
-- Message templates (internal/notify): a tenant's own text for one event,
-- channel (email or pdf) and recipient (user, or admins for the second
-- e-mail of AccountMustBeEnableByAdmin). A slot without a row uses the
-- built-in default; enabled = FALSE switches the slot off (nothing is
-- sent on that channel for the event).
CREATE TABLE message_templates (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    event TEXT NOT NULL,
    channel TEXT NOT NULL,
    recipient TEXT NOT NULL,
    subject TEXT NOT NULL,
    body_text TEXT NOT NULL,
    body_html TEXT NOT NULL DEFAULT '',
    enabled BOOLEAN NOT NULL DEFAULT TRUE,
    created_at DATETIME NOT NULL,
    updated_at DATETIME NOT NULL,
    UNIQUE (event, channel, recipient)
);

-- The HTML part of a sent mail, beside its text part (body).
ALTER TABLE mail_log ADD COLUMN html TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE mail_log DROP COLUMN html;
DROP TABLE message_templates;
