"""Every build measures its fidelity to the documents (issue 14) and writes it into build.json."""

from __future__ import annotations

import json

from envfactory.pipelines import build_source

DOC = {
    "openapi": "3.0.0",
    "info": {"title": "Notes", "version": "1"},
    "paths": {
        "/notes": {
            "get": {
                "responses": {
                    "200": {
                        "description": "ok",
                        "content": {
                            "application/json": {
                                "schema": {"type": "array", "items": {"$ref": "#/components/schemas/Note"}}
                            }
                        },
                    }
                }
            },
            "post": {
                "requestBody": {
                    "content": {
                        "application/json": {
                            "schema": {
                                "type": "object",
                                "required": ["title"],
                                "properties": {
                                    "title": {"type": "string"},
                                    "body": {"type": "string"},
                                    "color": {"type": "string", "enum": ["RED", "BLUE"]},
                                },
                            }
                        }
                    }
                },
                "responses": {
                    "201": {
                        "description": "created",
                        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Note"}}},
                    }
                },
            },
        },
        "/notes/{note_id}": {
            "parameters": [{"name": "note_id", "in": "path", "required": True, "schema": {"type": "string"}}],
            "get": {
                "responses": {
                    "200": {
                        "description": "ok",
                        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Note"}}},
                    }
                }
            },
        },
        "/callbacks": {"post": {"responses": {"201": {"description": "created"}}}},
    },
    "components": {
        "schemas": {
            "Note": {
                "type": "object",
                "required": ["id", "title"],
                "properties": {
                    "id": {"type": "string"},
                    "title": {"type": "string"},
                    "body": {"type": "string"},
                    "color": {"type": "string", "enum": ["RED", "BLUE"]},
                },
            }
        }
    },
}


def test_build_json_holds_the_fidelity_report(tmp_path):
    src = tmp_path / "notes.json"
    src.write_text(json.dumps(DOC))
    report = build_source(src, out_dir=tmp_path / "out", row_scale=0.2)
    fid = json.loads((tmp_path / "out" / "build.json").read_text())["fidelity"]
    t = fid["totals"]
    assert t["operations"] == 4
    assert t["verified"] == sum(e.tools for e in report.envs) == 3
    assert (t["body_documented"], t["body_kept"], t["required_agree"]) == (3, 3, 3)
    assert (t["enums_documented"], t["enums_kept"], t["enums_invented"]) == (1, 1, 0)
    [doc] = fid["documents"]
    assert [(d["operation"], d["stage"]) for d in doc["dropped"]] == [("POST /callbacks", "explore")]
    assert all(d["reason"] for d in doc["dropped"])
