"""Load and save EnvSpecs as YAML; export the JSON Schema of the format."""

from __future__ import annotations

import hashlib
import json
import os
import re
import tempfile
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from ..errors import SpecError
from .model import EnvSpec

__all__ = [
    "load_spec",
    "save_spec",
    "dump_spec",
    "parse_spec",
    "spec_json_schema",
    "spec_digest",
    "find_specs",
    "load_yaml_bounded",
    "YAML_MIN_EXPANSION_BUDGET",
    "YAML_EXPANSION_FACTOR",
]

SPEC_FILE = "env.yaml"

YAML_EXPANSION_FACTOR = 10
YAML_MIN_EXPANSION_BUDGET = 100_000
"""A YAML document may expand (each alias counted every time it is used) to at most
``max(YAML_MIN_EXPANSION_BUDGET, YAML_EXPANSION_FACTOR x its own node count)`` nodes: a
'billion laughs' document of 655 bytes is refused before anything walks it."""


# Where an alias can start: at a line start or after whitespace, a flow indicator, '?', ':'
# or '-'. A text with no such '*' has no alias, so nothing to measure (most env.yaml files).
_MAY_ALIAS = re.compile(r"(?:^|[\s\[{,?:\-\ufeff])\*", re.M)


def _yaml_loader():
    return getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _expanded_nodes(root: yaml.Node, budget: int) -> int:
    """Nodes of the document with every alias expanded, counted without expanding anything
    (each distinct node once, memoized); stops as soon as ``budget`` is passed."""
    size: dict[int, int] = {}
    on_path: set[int] = set()
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, done = stack.pop()
        key = id(node)
        if done:
            on_path.discard(key)
            if isinstance(node, yaml.MappingNode):
                kids = [x for pair in node.value for x in pair]
            else:
                kids = node.value if isinstance(node, yaml.SequenceNode) else []
            size[key] = min(budget + 1, 1 + sum(size[id(k)] for k in kids))
            if size[key] > budget:
                return size[key]
            continue
        if key in size:
            continue
        if key in on_path:
            raise ValueError("the document refers to itself through an alias (a recursive structure)")
        on_path.add(key)
        stack.append((node, True))
        if isinstance(node, yaml.MappingNode):
            stack.extend((x, False) for pair in node.value for x in pair if id(x) not in size)
        elif isinstance(node, yaml.SequenceNode):
            stack.extend((x, False) for x in node.value if id(x) not in size)
    return size.get(id(root), 0)


def _distinct_nodes(root: yaml.Node) -> int:
    seen: set[int] = set()
    stack = [root]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, yaml.MappingNode):
            stack.extend(x for pair in node.value for x in pair)
        elif isinstance(node, yaml.SequenceNode):
            stack.extend(node.value)
    return len(seen)


def load_yaml_bounded(text: str, loader: Any = None) -> Any:
    """``yaml.load`` with a (safe) ``loader`` that refuses alias bombs: a ``ValueError`` when
    the document expands past its budget (see ``YAML_EXPANSION_FACTOR``) or refers to itself.

    Parse errors are ``yaml.YAMLError`` as usual. The document is composed to nodes (aliases
    are shared there), measured, and only then constructed."""
    ld = (loader or _yaml_loader())(text)
    try:
        root = ld.get_single_node()
        if root is None:
            return None
        if not _MAY_ALIAS.search(text):
            return ld.construct_document(root)
        budget = max(YAML_MIN_EXPANSION_BUDGET, YAML_EXPANSION_FACTOR * _distinct_nodes(root))
        if _expanded_nodes(root, budget) > budget:
            raise ValueError(
                f"the document expands through aliases to more than {budget:,} nodes "
                "(an alias bomb?); refused"
            )
        return ld.construct_document(root)
    finally:
        ld.dispose()


def parse_spec(data: Any, *, source: str = "<spec>") -> EnvSpec:
    """Validate a plain dict (as read from YAML/JSON) into an EnvSpec."""
    if not isinstance(data, dict):
        raise SpecError(f"{source}: an environment spec must be a mapping, got {type(data).__name__}")
    try:
        return EnvSpec.model_validate(data)
    except RecursionError:
        raise SpecError(f"{source}: the spec is nested too deeply") from None
    except ValidationError as e:
        first = e.errors()[0]
        loc = ".".join(str(x) for x in first["loc"])
        more = f" (+{e.error_count() - 1} more)" if e.error_count() > 1 else ""
        raise SpecError(f"{source}: {loc}: {first['msg']}{more}") from e


def load_spec(path: str | os.PathLike) -> EnvSpec:
    """Read ``env.yaml`` (or a folder holding one) into an EnvSpec."""
    p = Path(path)
    if p.is_dir():
        p = p / SPEC_FILE
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as e:
        raise SpecError(f"{p}: cannot read spec: {e.strerror or e}") from e
    try:
        data = load_yaml_bounded(text)
    except yaml.YAMLError as e:
        raise SpecError(f"{p}: malformed YAML: {str(e).splitlines()[0]}") from e
    except (ValueError, RecursionError) as e:
        raise SpecError(f"{p}: {str(e).splitlines()[0] if str(e) else 'nested too deeply'}") from e
    return parse_spec(data, source=str(p))


def dump_spec(spec: EnvSpec) -> str:
    data = spec.model_dump(mode="json", exclude_defaults=True)
    data = {"spec_version": spec.spec_version, **data}
    # ``set: null`` is a real effect (clear a field); keep it although null is the default.
    for tool, tdata in zip(spec.tools, data.get("tools", [])):
        for ef, edata in zip(tool.effects, tdata.get("effects", [])):
            if ef.uses_set and "set" not in edata:
                edata["set"] = None
    return yaml.dump(data, Dumper=_dumper(data), sort_keys=False, allow_unicode=True, width=100)


# libyaml's emitter (``yaml.CSafeDumper``) writes the same text as PyYAML's pure-Python one
# (tests/spec/test_io_emitters.py compares them), several times faster, except for the
# characters the two judge differently: libyaml escapes characters outside the BMP (emoji),
# NEL, and cannot encode a lone surrogate; U+2028/9 are line breaks to both but handled by
# separate code. A spec holding any of them is written by the pure emitter, so the bytes
# never depend on whether libyaml is installed.
_C_DUMPER = getattr(yaml, "CSafeDumper", None)
_EMITTERS_DISAGREE = re.compile(r"[\x85\u2028\u2029\ud800-\udfff\U00010000-\U0010ffff]")


def _dumper(data: Any) -> Any:
    if _C_DUMPER is None or _EMITTERS_DISAGREE.search(json.dumps(data, ensure_ascii=False)):
        return yaml.SafeDumper
    return _C_DUMPER


def save_spec(spec: EnvSpec, path: str | os.PathLike) -> Path:
    """Write the spec as YAML atomically (to ``path/env.yaml`` if ``path`` is a folder)."""
    p = Path(path)
    if p.suffix not in (".yaml", ".yml"):
        p = p / SPEC_FILE
    p.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=p.parent, prefix=".env-", suffix=".yaml.tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(dump_spec(spec))
        os.replace(tmp, p)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return p


def spec_digest(spec: EnvSpec) -> str:
    """A stable digest of the spec's content (used to key template databases)."""
    blob = json.dumps(spec.model_dump(mode="json"), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def spec_json_schema() -> dict:
    """The JSON Schema (draft 2020-12) of the env.yaml format."""
    schema = EnvSpec.model_json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = "envfactory EnvSpec"
    return schema


def find_specs(root: str | os.PathLike) -> list[Path]:
    """Every ``env.yaml`` under ``root`` (a domain folder or the domains/ folder), sorted.

    Dot-folders are skipped: a build works in ``.<domain>.build-*`` and a killed one may
    leave it behind (the next build removes it)."""
    r = Path(root)
    if (r / SPEC_FILE).is_file():
        return [r / SPEC_FILE]
    return sorted(
        p for p in r.rglob(SPEC_FILE) if not any(part.startswith(".") for part in p.relative_to(r).parts)
    )
