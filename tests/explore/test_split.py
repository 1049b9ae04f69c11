"""Large APIs split into coherent environments of 5-40 tools."""

from __future__ import annotations

from envfactory.explore import explore
from envfactory.runtime import Environment

from .conftest import body, ok, openapi, path_param, ref


def _big_api():
    """30 resources in 3 clusters (a root resource and 9 children each), 4 operations per resource."""
    paths, schemas = {}, {}
    for c, root in enumerate(("store", "clinic", "school")):
        children = [f"{root}{w}" for w in ("alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota")]
        for name in [root, *children]:
            cap = name.capitalize()
            props = {"id": {"type": "string"}, "name": {"type": "string"}, "amount": {"type": "number"}}
            if name != root:
                props[f"{root}_id"] = {"type": "string"}
            schemas[cap] = {"type": "object", "properties": props}
            paths[f"/{name}s"] = {
                "get": {"tags": [root], "responses": ok({"type": "array", "items": ref(cap)})},
                "post": {"tags": [root], "requestBody": body({"type": "object", "properties": {
                    k: v for k, v in props.items() if k != "id"}}), "responses": ok(ref(cap))},
            }
            paths[f"/{name}s/{{{name}Id}}"] = {
                "get": {"tags": [root], "parameters": [path_param(f"{name}Id")], "responses": ok(ref(cap))},
                "delete": {"tags": [root], "parameters": [path_param(f"{name}Id")], "responses": {"204": {"description": "x"}}},
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
