"""Large APIs split into coherent environments of 5-40 tools."""

from __future__ import annotations

from envfactory.explore import explore
from envfactory.runtime import Environment

from .conftest import body, ok, openapi, path_param, ref


def _big_api():
    """30 resources in 3 clusters (a root resource and 9 children each), 4 operations per resource."""
    paths, schemas = {}, {}
    for root in ("store", "clinic", "school"):
        children = [
            f"{root}{w}"
            for w in ("alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota")
        ]
        for name in [root, *children]:
            cap = name.capitalize()
            props = {"id": {"type": "string"}, "name": {"type": "string"}, "amount": {"type": "number"}}
            if name != root:
                props[f"{root}_id"] = {"type": "string"}
            schemas[cap] = {"type": "object", "properties": props}
            paths[f"/{name}s"] = {
                "get": {"tags": [root], "responses": ok({"type": "array", "items": ref(cap)})},
                "post": {
                    "tags": [root],
                    "requestBody": body(
                        {"type": "object", "properties": {k: v for k, v in props.items() if k != "id"}}
                    ),
                    "responses": ok(ref(cap)),
                },
            }
            paths[f"/{name}s/{{{name}Id}}"] = {
                "get": {"tags": [root], "parameters": [path_param(f"{name}Id")], "responses": ok(ref(cap))},
                "delete": {
                    "tags": [root],
                    "parameters": [path_param(f"{name}Id")],
                    "responses": {"204": {"description": "x"}},
                },
            }
    return openapi(paths, schemas, title="Giant Platform API")


def test_120_operations_split_into_three_coherent_envs():
    doc = _big_api()
    assert len(doc.operations) == 120
    res = explore(doc, domain="test", seed=0)
    assert len(res.envs) == 3
    for spec in res.envs:
        assert 5 <= len(spec.tools) <= 40
        roots = {e.name for e in spec.entities if e.name in ("store", "clinic", "school")}
        assert len(roots) == 1, roots  # each cluster stays together
        root = roots.pop()
        assert all(t.entity.startswith(root) for t in spec.tools)
        assert spec.name.startswith("giant_platform_")
    assert len({s.name for s in res.envs}) == 3


def test_split_is_deterministic_and_envs_materialize():
    a = explore(_big_api(), domain="test", seed=1)
    b = explore(_big_api(), domain="test", seed=1)
    assert [s.model_dump() for s in a.envs] == [s.model_dump() for s in b.envs]
    env = Environment.from_spec(a.envs[0])
    assert sum(env.row_counts().values()) > 0


def test_max_envs_keeps_the_largest():
    res = explore(_big_api(), domain="test", max_envs=1)
    assert len(res.envs) == 1


def _cluster_doc(root: str, n: int, extra_ref: str | None = None):
    """One document: a root resource and n children, 4 operations each; optionally every child
    also references ``extra_ref`` (an entity of another document)."""
    paths, schemas = {}, {}
    for name in [root, *(f"{root}{w}" for w in ("alpha", "beta", "gamma", "delta", "epsilon", "zeta")[:n])]:
        cap = name.capitalize()
        props = {"id": {"type": "string"}, "name": {"type": "string"}}
        if name != root:
            props[f"{root}_id"] = {"type": "string"}
            if extra_ref:
                props[f"{extra_ref}_id"] = {"type": "string"}
        schemas[cap] = {"type": "object", "properties": props}
        paths[f"/{name}s"] = {
            "get": {"responses": ok({"type": "array", "items": ref(cap)})},
            "post": {
                "requestBody": body(
                    {"type": "object", "properties": {k: v for k, v in props.items() if k != "id"}}
                ),
                "responses": ok(ref(cap)),
            },
        }
        paths[f"/{name}s/{{{name}Id}}"] = {
            "get": {"parameters": [path_param(f"{name}Id")], "responses": ok(ref(cap))},
            "delete": {"parameters": [path_param(f"{name}Id")], "responses": {"204": {"description": "x"}}},
        }
    return openapi(paths, schemas, title=f"{root.capitalize()} API")


def test_merged_domain_splits_across_documents_and_shares_finders():
    # 3 documents, 7 resources x 4 tools each = 84 tools; the clinic children reference a store
    docs = [_cluster_doc("store", 6), _cluster_doc("clinic", 6, extra_ref="store"), _cluster_doc("school", 6)]
    res = explore(docs, domain="city")
    assert len(res.envs) >= 3
    for spec in res.envs:
        assert 5 <= len(spec.tools) <= 40
        assert spec.name.startswith("city_")
        Environment.from_spec(spec)
    clinic = next(s for s in res.envs if any(t.entity.startswith("clinic") for t in s.tools))
    assert clinic.entity("clinicalpha").field("store_id").ref == "store"  # resolved across documents
    assert clinic.sources == [docs[0].source, docs[1].source]
    # the store's read tools come along, so create_clinicalpha(store_id=...) can be fed
    assert {"list_stores", "get_store"} <= {t.name for t in clinic.tools}
    assert not any(t.kind.value in ("create", "delete") and t.entity == "store" for t in clinic.tools)
    again = explore(list(docs), domain="city")
    assert [s.model_dump() for s in again.envs] == [s.model_dump() for s in res.envs]
