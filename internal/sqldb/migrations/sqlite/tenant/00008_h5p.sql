-- +goose Up
-- Libraries installed in this tenant. library_json is the library.json of
-- the installed patch version; the files live in the blob store under
-- h5p/libraries/<machine_name>-<major>.<minor>/.
CREATE TABLE h5p_libraries (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    machine_name TEXT NOT NULL,
    major_version INTEGER NOT NULL,
    minor_version INTEGER NOT NULL,
    patch_version INTEGER NOT NULL,
    title TEXT NOT NULL DEFAULT '',
    runnable BOOLEAN NOT NULL DEFAULT FALSE,
    restricted BOOLEAN NOT NULL DEFAULT FALSE,
    library_json TEXT NOT NULL,
    created_at DATETIME NOT NULL,
    updated_at DATETIME NOT NULL,
    UNIQUE (machine_name, major_version, minor_version)
);

-- What a library needs: preloaded, dynamic or editor.
CREATE TABLE h5p_library_dependencies (
    library_id INTEGER NOT NULL REFERENCES h5p_libraries(id) ON DELETE CASCADE,
    required_library_id INTEGER NOT NULL REFERENCES h5p_libraries(id),
    dependency_type TEXT NOT NULL,
    PRIMARY KEY (library_id, required_library_id, dependency_type)
);
CREATE INDEX h5p_library_dependencies_required ON h5p_library_dependencies(required_library_id);

-- H5P contents. user_id is the creator and never changes; metadata is the
-- package descriptor (h5p.json), parameters is content.json.
CREATE TABLE h5p_contents (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    title TEXT NOT NULL DEFAULT '',
    library_id INTEGER NOT NULL REFERENCES h5p_libraries(id),
    user_id INTEGER NOT NULL,
    parameters TEXT NOT NULL,
    metadata TEXT NOT NULL,
    created_at DATETIME NOT NULL,
    updated_at DATETIME NOT NULL
);
CREATE INDEX h5p_contents_user ON h5p_contents(user_id);
CREATE INDEX h5p_contents_library ON h5p_contents(library_id);

-- Every library a content uses: its main library and their closure.
CREATE TABLE h5p_content_libraries (
    content_id INTEGER NOT NULL REFERENCES h5p_contents(id) ON DELETE CASCADE,
    library_id INTEGER NOT NULL REFERENCES h5p_libraries(id),
    dependency_type TEXT NOT NULL,
    PRIMARY KEY (content_id, library_id)
);
CREATE INDEX h5p_content_libraries_library ON h5p_content_libraries(library_id);

-- State the H5P player saves per content, user, data type, sub-content and
-- context ('' = no context).
CREATE TABLE h5p_content_user_data (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    content_id INTEGER NOT NULL REFERENCES h5p_contents(id) ON DELETE CASCADE,
    user_id INTEGER NOT NULL,
    data_type TEXT NOT NULL,
    sub_content_id INTEGER NOT NULL DEFAULT 0,
    context_id TEXT NOT NULL DEFAULT '',
    user_state TEXT NOT NULL,
    preload BOOLEAN NOT NULL DEFAULT FALSE,
    invalidate BOOLEAN NOT NULL DEFAULT FALSE,
    updated_at DATETIME NOT NULL,
    UNIQUE (content_id, user_id, data_type, sub_content_id, context_id)
);
CREATE INDEX h5p_content_user_data_user ON h5p_content_user_data(user_id);

-- One result per content and user.
CREATE TABLE h5p_results (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    content_id INTEGER NOT NULL REFERENCES h5p_contents(id) ON DELETE CASCADE,
    user_id INTEGER NOT NULL,
    score INTEGER NOT NULL DEFAULT 0,
    max_score INTEGER NOT NULL DEFAULT 0,
    opened_at DATETIME,
    finished_at DATETIME,
    completion_time INTEGER NOT NULL DEFAULT 0,
    UNIQUE (content_id, user_id)
);
CREATE INDEX h5p_results_user ON h5p_results(user_id);

-- Files uploaded in the editor and not yet saved into a content.
CREATE TABLE h5p_temp_files (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    path TEXT NOT NULL UNIQUE,
    user_id INTEGER NOT NULL,
    created_at DATETIME NOT NULL
);
CREATE INDEX h5p_temp_files_created ON h5p_temp_files(created_at);

-- +goose Down
DROP TABLE h5p_temp_files;
DROP TABLE h5p_results;
DROP TABLE h5p_content_user_data;
DROP TABLE h5p_content_libraries;
DROP TABLE h5p_contents;
DROP TABLE h5p_library_dependencies;
DROP TABLE h5p_libraries;
