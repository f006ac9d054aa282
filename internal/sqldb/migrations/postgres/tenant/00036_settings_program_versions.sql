-- +goose Up
-- A setting can change how topics are shown (lms_interactive.enabled off
-- hides the play links of interactive topics), so every change of a
-- setting moves every course's program counter: the programs learning
-- keeps in memory are rendered again. Settings change seldom.
-- +goose StatementBegin
CREATE FUNCTION bump_every_program_version() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE program_versions SET version = version + 1;
    RETURN NULL;
END;
$$;
-- +goose StatementEnd

CREATE TRIGGER settings_program_version AFTER INSERT OR UPDATE OR DELETE ON settings
    FOR EACH STATEMENT EXECUTE FUNCTION bump_every_program_version();

-- +goose Down
DROP TRIGGER settings_program_version ON settings;
DROP FUNCTION bump_every_program_version();
