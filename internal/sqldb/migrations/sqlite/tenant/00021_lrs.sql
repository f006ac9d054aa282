-- +goose Up
-- xAPI statements (internal/lrs). seq orders statements as stored (the
-- order of queries and of more links); body is the statement as the LRS
-- returns it (JSON with id, stored, authority, version). The other columns
-- are the query filters: actor_key and object_agent_key are the agents'
-- canonical identifiers, object_id the activity id or the id of the
-- statement a StatementRef names.
CREATE TABLE lrs_statements (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    stored DATETIME NOT NULL,
    verb TEXT NOT NULL,
    actor_key TEXT NOT NULL,
    object_type TEXT NOT NULL,
    object_id TEXT NOT NULL,
    object_agent_key TEXT NOT NULL DEFAULT '',
    registration TEXT NOT NULL DEFAULT '',
    voided BOOLEAN NOT NULL DEFAULT FALSE,
    body TEXT NOT NULL
);
CREATE INDEX lrs_statements_registration ON lrs_statements(registration, seq);
CREATE INDEX lrs_statements_actor ON lrs_statements(actor_key, seq);
CREATE INDEX lrs_statements_object ON lrs_statements(object_id, seq);

-- Other activities and agents a statement names (context, sub-statement),
-- for the related_activities and related_agents filters.
CREATE TABLE lrs_statement_related (
    seq INTEGER NOT NULL REFERENCES lrs_statements(seq) ON DELETE CASCADE,
    kind TEXT NOT NULL,
    value TEXT NOT NULL,
    PRIMARY KEY (seq, kind, value)
);
CREATE INDEX lrs_statement_related_value ON lrs_statement_related(kind, value);

-- Attachment contents by their SHA-256.
CREATE TABLE lrs_attachments (
    sha2 TEXT PRIMARY KEY,
    content_type TEXT NOT NULL,
    body BLOB NOT NULL
);

-- State, activity profile and agent profile documents. kind is state,
-- activity or agent; the unused key parts are ''.
CREATE TABLE lrs_documents (
    kind TEXT NOT NULL,
    activity_id TEXT NOT NULL,
    agent_key TEXT NOT NULL,
    registration TEXT NOT NULL,
    doc_id TEXT NOT NULL,
    content_type TEXT NOT NULL,
    body BLOB NOT NULL,
    etag TEXT NOT NULL,
    updated DATETIME NOT NULL,
    PRIMARY KEY (kind, activity_id, agent_key, registration, doc_id)
);

-- +goose Down
DROP TABLE lrs_documents;
DROP TABLE lrs_attachments;
DROP TABLE lrs_statement_related;
DROP TABLE lrs_statements;
