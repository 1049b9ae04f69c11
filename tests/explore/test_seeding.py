"""The seed recipe (explore/seeding.py): rows a delete can remove."""

from __future__ import annotations

from envfactory.explore import explore
from envfactory.verify import verify_and_repair

from .conftest import body, ok, openapi, path_param, ref

FILE = {"type": "object", "properties": {"id": {"type": "string"}, "name": {"type": "string"}}}
COMMENT = {
    "type": "object",
    "properties": {"id": {"type": "string"}, "file_id": {"type": "string"}, "message": {"type": "string"}},
}
TASK = {
    "type": "object",
    "properties": {"id": {"type": "string"}, "file_id": {"type": "string"}, "action": {"type": "string"}},
}


def test_a_deleted_entity_that_others_reference_keeps_rows_no_one_references():
    # Box: every file was referenced by a comment, a task or a version at a tenth of the rows, so
    # DELETE /files/{file_id} failed verification with "no valid call found in the seeded state"
    fid = [path_param("file_id")]
    doc = openapi(
        {
            "/files/{file_id}": {
                "parameters": fid,
                "get": {"responses": ok(ref("File"))},
                "delete": {"summary": "Delete file", "responses": {"204": {"description": "deleted"}}},
            },
            "/files/{file_id}/comments": {
                "parameters": fid,
                "get": {"responses": ok({"type": "array", "items": ref("Comment")})},
            },
            "/files/{file_id}/tasks": {
                "parameters": fid,
                "get": {"responses": ok({"type": "array", "items": ref("Task")})},
            },
            "/comments": {"post": {"requestBody": body(ref("Comment")), "responses": ok(ref("Comment"))}},
        },
        {"File": FILE, "Comment": COMMENT, "Task": TASK},
    )
    spec = explore(doc, domain="files", row_scale=0.1).envs[0]
    seed = spec.seed.entities
    assert seed["file"].spare == max(1, seed["file"].rows // 10)
    assert seed["comment"].spare == 0  # nothing deletes a comment here
    fixed, report = verify_and_repair(spec)
    assert fixed is not None and "delete_file" in {t.name for t in fixed.tools}, report.excluded
