-- +goose Up
-- Who holds access to a course right now, as the access rule of package
-- courses last computed it. A change of assignments, of group membership
-- or an ended assignment recomputes the rule for the users and courses it
-- touches and compares with these rows: a row added is CourseAccessStarted,
-- a row removed CourseAccessFinished. The comparison makes each transition
-- recorded once, whichever path (request, event listener, scheduled job,
-- redelivery) finds it first.
CREATE TABLE course_access (
    course_id BIGINT NOT NULL REFERENCES courses(id) ON DELETE CASCADE,
    user_id BIGINT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    PRIMARY KEY (course_id, user_id)
);
CREATE INDEX course_access_user ON course_access(user_id);

-- Who holds access when this migration runs.
INSERT INTO course_access (course_id, user_id)
WITH RECURSIVE assigned_groups(course_id, id) AS (
    SELECT course_id, group_id FROM course_groups WHERE end_date IS NULL OR end_date > CURRENT_TIMESTAMP
    UNION
    SELECT a.course_id, g.id FROM user_groups g JOIN assigned_groups a ON g.parent_id = a.id
)
SELECT course_id, user_id FROM course_users WHERE end_date IS NULL OR end_date > CURRENT_TIMESTAMP
UNION
SELECT a.course_id, m.user_id FROM user_group_members m JOIN assigned_groups a ON a.id = m.group_id;

-- +goose Down
DROP TABLE course_access;
