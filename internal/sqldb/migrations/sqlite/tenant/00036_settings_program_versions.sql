-- +goose Up
-- A setting can change how topics are shown (lms_interactive.enabled off
-- hides the play links of interactive topics), so every change of a
-- setting moves every course's program counter: the programs learning
-- keeps in memory are rendered again. Settings change seldom.
-- +goose StatementBegin
CREATE TRIGGER settings_program_insert AFTER INSERT ON settings BEGIN
    UPDATE program_versions SET version = version + 1;
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER settings_program_update AFTER UPDATE ON settings BEGIN
    UPDATE program_versions SET version = version + 1;
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER settings_program_delete AFTER DELETE ON settings BEGIN
    UPDATE program_versions SET version = version + 1;
END;
-- +goose StatementEnd

-- +goose Down
DROP TRIGGER settings_program_delete;
DROP TRIGGER settings_program_update;
DROP TRIGGER settings_program_insert;
