"""Reader for OpenAPI 3.0 / 3.1 and Swagger 2.0 documents (already parsed to dicts).

Local ``$ref``s are inlined. Three rules keep this safe on 400-operation giants:
- a ref being resolved that is met again inside itself is cut: ``{"x-cycle": ref}``;
- a ref met deeper than ``max_depth`` schema levels is cut: ``{"x-truncated": ref}``
  (plus ``type`` when the target has one), so no inlined schema grows without bound;
- a resolved ref is memoized per (ref, depth) and the result object is shared, so a
  schema used by 300 operations is resolved once.
Broken and external refs are not fatal: they become ``{"x-broken-ref": ref}`` /
``{"x-external-ref": ref}`` and one line each in ``ApiDoc.warnings``.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import unquote

from envfactory.errors import IngestError
from envfactory.ingest.infer import infer_schema
from envfactory.ingest.model import ApiDoc, Operation, Parameter, Response

__all__ = ["read_openapi", "MAX_SCHEMA_DEPTH"]

MAX_SCHEMA_DEPTH = 6
_METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")
_SCHEMA_MAPS = ("properties", "patternProperties", "definitions", "$defs", "dependentSchemas")
_SCHEMA_ONE = (
    "items",
    "additionalProperties",
    "not",
    "contains",
    "additionalItems",
    "propertyNames",
    "if",
    "then",
    "else",
    "unevaluatedProperties",
    "unevaluatedItems",
)
_SCHEMA_LISTS = ("allOf", "anyOf", "oneOf", "prefixItems")
_PARAM_SCHEMA_KEYS = (
    "type",
    "format",
    "items",
    "enum",
    "default",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "minLength",
    "maxLength",
    "pattern",
    "minItems",
    "maxItems",
    "uniqueItems",
    "multipleOf",
    "collectionFormat",
)


def _json_media(content: Any) -> tuple[str | None, dict[str, Any] | None]:
    """Pick the media type a client would send/expect: JSON first, then forms."""
    if not isinstance(content, dict) or not content:
        return None, None
    for pred in (
        lambda m: m.split(";")[0].strip() == "application/json",
        lambda m: "json" in m,
        lambda m: m.startswith("application/x-www-form-urlencoded"),
        lambda m: m.startswith("multipart/form-data"),
        lambda m: True,
    ):
        for mime, media in content.items():
            if isinstance(mime, str) and pred(mime.lower()):
                return mime, media if isinstance(media, dict) else {}
    return None, None


class _Resolver:
    def __init__(
        self, doc: dict[str, Any], max_depth: int, *, inline_free_refs: int = 1, max_nested_nodes: int = 150
    ):
        self.doc = doc
        self.max_depth = max_depth
        self.inline_free_refs = inline_free_refs
        self.max_nested_nodes = max_nested_nodes
        self.warnings: list[str] = []
        self._warned: set[str] = set()
        self._memo: dict[tuple[str, int, int], tuple[Any, int]] = {}
        self._stack: list[str] = []
        self._lookups: dict[str, Any] = {}

    def warn(self, key: str, message: str) -> None:
        if key not in self._warned:
            self._warned.add(key)
            self.warnings.append(message)

    _MISSING = object()

    def lookup(self, ref: str) -> Any:
        """The raw target of a ref, or _MISSING (warned) when it is external or broken."""
        if ref in self._lookups:
            return self._lookups[ref]
        target: Any = self._MISSING
        if not ref.startswith("#"):
            self.warn(ref, f"external $ref not followed: {ref}")
        else:
            node: Any = self.doc
            for raw in ref[1:].split("/")[1:] if ref != "#" else []:
                part = unquote(raw).replace("~1", "/").replace("~0", "~")
                if isinstance(node, dict) and part in node:
                    node = node[part]
                elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
                    node = node[int(part)]
                else:
                    node = self._MISSING
                    break
            if node is self._MISSING:
                self.warn(ref, f"broken $ref: {ref}")
            target = node
        self._lookups[ref] = target
        return target

    def deref(self, node: Any) -> Any:
        """Follow a chain of $refs on a non-schema object (parameter, response ...)."""
        seen: set[str] = set()
        while isinstance(node, dict) and isinstance(node.get("$ref"), str):
            ref = node["$ref"]
            if ref in seen:
                self.warn(ref, f"cyclic $ref chain: {ref}")
                return {}
            seen.add(ref)
            target = self.lookup(ref)
            if target is self._MISSING:
                return None
            node = target
        return node

    def schema(self, node: Any, depth: int = 0) -> Any:
        """``node`` with local refs inlined (see the module docstring for the limits)."""
        return self._s(node, depth)[0]

    # Each step returns (resolved, size): size counts the dict nodes a tree walk of the
    # result would visit, so we can refuse to inline a nested ref that is too big.
    def _s(self, node: Any, depth: int) -> tuple[Any, int]:
        if isinstance(node, list):
            items = [self._s(n, depth) for n in node]
            return [x for x, _ in items], sum(n for _, n in items)
        if not isinstance(node, dict):
            return node, 0
        ref = node.get("$ref")
        if isinstance(ref, str):
            out, size = self._ref(ref, depth)
            if len(node) > 1 and isinstance(out, dict):
                # 3.1 allows siblings next to $ref (description, nullable ...)
                rest, n = self._walk({k: v for k, v in node.items() if k != "$ref"}, depth)
                out, size = {**out, **rest}, size + n
            return out, size
        return self._walk(node, depth)

    def _ref(self, ref: str, depth: int) -> tuple[Any, int]:
        if ref in self._stack:
            return {"x-cycle": ref}, 1
        nested = min(len(self._stack), self.inline_free_refs)
        key = (ref, depth, nested)
        if key in self._memo:
            out, size = self._memo[key]
        else:
            target = self.lookup(ref)
            if target is self._MISSING:
                return {"x-external-ref" if not ref.startswith("#") else "x-broken-ref": ref}, 1
            if depth >= self.max_depth:
                return self._cut(ref, target), 1
            self._stack.append(ref)
            try:
                out, size = self._s(target, depth)
            finally:
                self._stack.pop()
            self._memo[key] = (out, size)
        if nested >= self.inline_free_refs and size > self.max_nested_nodes:
            # a big schema nested in other refs: name it instead of copying it again;
            # its full shape is in ApiDoc.schemas
            return self._cut(ref, self.lookup(ref)), 1
        return out, size

    @staticmethod
    def _cut(ref: str, target: Any) -> dict[str, Any]:
        out: dict[str, Any] = {"x-truncated": ref}
        if isinstance(target, dict) and isinstance(target.get("type"), str):
            out["type"] = target["type"]
        return out

    def _walk(self, node: dict[str, Any], depth: int) -> tuple[dict[str, Any], int]:
        out: dict[str, Any] = {}
        size = 1
        for k, v in node.items():
            if k in _SCHEMA_MAPS and isinstance(v, dict):
                m = {}
                for name, sub in v.items():
                    m[name], n = self._s(sub, depth + 1)
                    size += n
                out[k] = m
            elif k in _SCHEMA_ONE and isinstance(v, (dict, list)):
                out[k], n = self._s(v, depth + 1)
                size += n
            elif k in _SCHEMA_LISTS and isinstance(v, list):
                out[k], n = self._s(v, depth + 1)
                size += n
            else:
                out[k] = v
        t = out.get("type")
        if isinstance(t, list):  # OpenAPI 3.1: ["string", "null"] -> "string" + nullable
            non_null = [x for x in t if x != "null"]
            if len(non_null) < len(t):
                out["nullable"] = True
            if len(non_null) == 1:
                out["type"] = non_null[0]
            elif non_null:
                out["type"] = non_null
            else:
                out["type"] = "null"
        for comb in ("anyOf", "oneOf"):
            branches = out.get(comb)
            if isinstance(branches, list) and len(branches) >= 2:
                real = [b for b in branches if not (isinstance(b, dict) and b.get("type") == "null")]
                if len(real) == 1 and isinstance(real[0], dict):
                    # anyOf [X, null] is "nullable X"; flatten so consumers see X's shape
                    rest = {k: v for k, v in out.items() if k != comb}
                    out = {**real[0], **rest, "nullable": True}
        return out, size


def _param_schema(p: dict[str, Any], r: _Resolver) -> dict[str, Any]:
    if isinstance(p.get("schema"), dict):
        return r.schema(p["schema"])
    _, media = _json_media(p.get("content"))
    if media and isinstance(media.get("schema"), dict):
        return r.schema(media["schema"])
    return {k: r.schema(p[k]) if k == "items" else p[k] for k in _PARAM_SCHEMA_KEYS if k in p}


def _first_example(media: dict[str, Any], r: _Resolver) -> Any:
    if "example" in media:
        return media["example"]
    examples = media.get("examples")
    if isinstance(examples, dict):
        for ex in examples.values():
            ex = r.deref(ex)
            if isinstance(ex, dict) and "value" in ex:
                return ex["value"]
    return None


def _schema_example(schema: Any) -> Any:
    if isinstance(schema, dict):
        if "example" in schema:
            return schema["example"]
        if isinstance(schema.get("examples"), list) and schema["examples"]:
            return schema["examples"][0]
    return None


def _bare(schema: Any) -> bool:
    """A body documented as just ``{"type": "object"}`` (or not at all): no property is stated."""
    if not isinstance(schema, dict):
        return schema is None
    return schema.get("type", "object") == "object" and not any(
        schema.get(k)
        for k in ("properties", "items", "allOf", "oneOf", "anyOf", "additionalProperties", "$ref")
    )


def _example_schema(body: dict[str, Any] | None, example: dict[str, Any]) -> dict[str, Any]:
    """The schema an example shows, for a body that documents only the example (Clubhouse
    ``POST /get_club`` with ``{"type": "object"}`` and the example ``{"club_id": 1234}``). The
    example is one call: it says which properties exist and their types, not which are required."""
    inferred = infer_schema(example)
    inferred.pop("required", None)
    return {**(body or {}), **inferred}


def _body_params(body: dict[str, Any] | None, known: set[str]) -> list[Parameter]:
    """Top-level fields of a JSON body, as location='body' parameters."""
    if not isinstance(body, dict) or not isinstance(body.get("properties"), dict):
        return []
    required = set(body.get("required") or []) if isinstance(body.get("required"), list) else set()
    out = []
    for name, s in body["properties"].items():
        if name in known or not isinstance(s, dict):
            continue
        out.append(
            Parameter(
                name=str(name),
                location="body",
                required=name in required,
                description=str(s.get("description") or ""),
                schema=s,
                example=_schema_example(s),
            )
        )
    return out


_AWS_RPC = re.compile(r"/?#(X-Amz-Target|Action)=([A-Za-z][\w.-]*)")


def _rpc_path(path: str, info: dict[str, Any], item: dict, r: _Resolver) -> tuple[str, frozenset[str], str]:
    """AWS's RPC operations as APIs.guru writes them, ``/#X-Amz-Target=DynamoDB_20120810.CreateTable``
    (JSON protocol: the target header names the method) or ``/#Action=CreateTable`` (query
    protocol): (the method as a dotted RPC path, ``/DynamoDB.CreateTable`` or
    ``/<x-serviceName>.CreateTable``; the selector parameters, constants, to leave out; a method to
    skip: the query protocol's POST twin, the same action with an XML body, when a GET documents
    its parameters). Any other path: (the path, nothing, "")."""
    m = _AWS_RPC.fullmatch(path)
    if m is None:
        return path, frozenset(), ""
    key, target = m.groups()
    if key == "X-Amz-Target":
        r.warn(
            "aws-rpc",
            "AWS RPC paths '/#X-Amz-Target=T' read as RPC methods '/S.M' (S.M: the target header, without its date)",
        )
        service, _, method = target.rpartition(".")
        service = re.sub(r"_\d{8}$", "", service) or "api"  # DynamoDB_20120810: the API version goes
        return f"/{service}.{method}", frozenset({"X-Amz-Target"}), ""
    service = re.sub(r"[^\w-]", "_", str(info.get("x-serviceName") or "api"))
    r.warn(
        "aws-rpc",
        f"AWS query paths '/#Action=A' read as RPC methods '/{service}.A' (A: the Action parameter)",
    )
    twin = "post" if isinstance(item.get("get"), dict) else ""
    return f"/{service}.{target}", frozenset({"Action", "Version"}), twin


def _text(v: Any) -> str:
    return v if isinstance(v, str) else ""


class _Reader:
    def __init__(self, doc: dict[str, Any], source: str, max_depth: int):
        self.doc = doc
        self.source = source
        self.swagger2 = str(doc.get("swagger", "")).startswith("2")
        self.r = _Resolver(doc, max_depth)

    def read(self) -> ApiDoc:
        doc = self.doc
        raw_info = doc.get("info")
        info: dict[str, Any] = raw_info if isinstance(raw_info, dict) else {}
        openapi = str(doc.get("openapi", ""))
        fmt = "swagger2" if self.swagger2 else ("openapi31" if openapi.startswith("3.1") else "openapi3")
        paths = doc.get("paths")
        if not isinstance(paths, dict):
            paths = {}
        ops: list[Operation] = []
        for path, item in paths.items():
            item = self.r.deref(item)
            if not isinstance(item, dict):
                continue
            path, drop, skip = _rpc_path(str(path), info, item, self.r)
            for method in _METHODS:
                raw = item.get(method)
                if isinstance(raw, dict) and method != skip:
                    try:
                        ops.append(self._operation(path, method, item, raw, drop))
                    except (TypeError, ValueError, AttributeError) as e:
                        self.r.warn(f"op:{method}{path}", f"{method.upper()} {path} skipped: {e}")
        if self.swagger2:
            named = doc.get("definitions")
            prefix = "#/definitions/"
        else:
            raw_comps = doc.get("components")
            comps: dict[str, Any] = raw_comps if isinstance(raw_comps, dict) else {}
            named = comps.get("schemas")
            prefix = "#/components/schemas/"
        schemas = {}
        if isinstance(named, dict):
            for name in named:
                ref = prefix + str(name).replace("~", "~0").replace("/", "~1")
                s = self.r.schema({"$ref": ref})
                if isinstance(s, dict):
                    schemas[str(name)] = s
        return ApiDoc(
            title=_text(info.get("title")) or self.source.rsplit("/", 1)[-1],
            version=str(info.get("version", "") or ""),
            description=_text(info.get("description")),
            source=self.source,
            format=fmt,
            base_url=self._base_url(),
            operations=ops,
            schemas=schemas,
            warnings=self.r.warnings,
        )

    def _base_url(self) -> str | None:
        doc = self.doc
        if self.swagger2:
            host = doc.get("host")
            if not isinstance(host, str) or not host:
                return None
            raw_schemes = doc.get("schemes")
            schemes: list[Any] = raw_schemes if isinstance(raw_schemes, list) else []
            scheme = "https" if "https" in schemes or not schemes else str(schemes[0])
            return f"{scheme}://{host}{_text(doc.get('basePath')).rstrip('/')}"
        servers = doc.get("servers")
        if isinstance(servers, list) and servers and isinstance(servers[0], dict):
            url = servers[0].get("url")
            return url if isinstance(url, str) else None
        return None

    def _operation(
        self, path: str, method: str, item: dict, raw: dict, drop: frozenset = frozenset()
    ) -> Operation:
        r = self.r
        merged: dict[tuple[str, str], dict] = {}
        for plist in (item.get("parameters"), raw.get("parameters")):
            for p in plist if isinstance(plist, list) else []:
                p = r.deref(p)
                if isinstance(p, dict) and isinstance(p.get("name"), str) and p["name"] not in drop:
                    merged[(p["name"], str(p.get("in", "query")))] = p  # operation overrides path level
        params: list[Parameter] = []
        body: dict[str, Any] | None = None
        example: Any = None
        form: dict[str, Any] = {}
        form_required: list[str] = []
        for (name, loc), p in merged.items():
            if loc == "body":  # Swagger 2
                body = r.schema(p.get("schema") or {})
                example = p.get("x-example", p.get("example"))
                if example is None:
                    example = _schema_example(body)
                continue
            schema = _param_schema(p, r)
            if loc == "formData":  # Swagger 2 form fields are body fields
                s = dict(schema)
                if p.get("description"):
                    s.setdefault("description", p["description"])
                form[name] = s
                if p.get("required"):
                    form_required.append(name)
                continue
            if loc not in ("path", "query", "header", "cookie"):
                continue
            ex = p.get("example", p.get("x-example"))
            if ex is None and isinstance(p.get("examples"), dict):
                ex = _first_example({"examples": p["examples"]}, r)
            params.append(
                Parameter(
                    name=name,
                    location=loc,
                    description=_text(p.get("description")),
                    required=bool(p.get("required")) or loc == "path",
                    schema=schema if isinstance(schema, dict) else {},
                    example=ex if ex is not None else _schema_example(schema),
                )
            )
        if form and body is None:
            body = {"type": "object", "properties": form}
            if form_required:
                body["required"] = form_required
        rb = r.deref(raw.get("requestBody")) if "requestBody" in raw else None
        if isinstance(rb, dict):
            _, media = _json_media(rb.get("content"))
            if media is not None:
                media_schema = media.get("schema")
                body = r.schema(media_schema) if isinstance(media_schema, dict) else {}
                example = _first_example(media, r)
                if example is None:
                    example = _schema_example(body)
        if _bare(body) and isinstance(example, dict) and example:
            body = _example_schema(body, example)
        params += _body_params(body, {p.name for p in params})
        return Operation(
            method=method,
            path=path,
            operation_id=raw.get("operationId") if isinstance(raw.get("operationId"), str) else None,
            summary=_text(raw.get("summary")),
            description=_text(raw.get("description")),
            tags=[str(t) for t in raw.get("tags") or [] if isinstance(t, (str, int))],
            parameters=params,
            request_body=body if isinstance(body, dict) else None,
            request_example=example,
            responses=self._responses(raw.get("responses")),
            deprecated=bool(raw.get("deprecated")),
        )

    def _responses(self, raw: Any) -> list[Response]:
        out = []
        for status, resp in raw.items() if isinstance(raw, dict) else []:
            resp = self.r.deref(resp)
            if not isinstance(resp, dict):
                resp = {}
            schema = example = None
            if self.swagger2:
                if isinstance(resp.get("schema"), dict):
                    schema = self.r.schema(resp["schema"])
                exs = resp.get("examples")
                if isinstance(exs, dict) and exs:
                    _, example = next(
                        ((m, v) for m, v in exs.items() if "json" in str(m)), next(iter(exs.items()))
                    )
            else:
                _, media = _json_media(resp.get("content"))
                if media is not None:
                    if isinstance(media.get("schema"), dict):
                        schema = self.r.schema(media["schema"])
                    example = _first_example(media, self.r)
            if example is None:
                example = _schema_example(schema)
            out.append(
                Response(
                    status=str(status),
                    description=_text(resp.get("description")),
                    schema=schema if isinstance(schema, dict) else None,
                    example=example,
                )
            )
        return out


def read_openapi(doc: Any, source: str, *, max_depth: int = MAX_SCHEMA_DEPTH) -> ApiDoc:
    """Normalize a parsed OpenAPI 3.x / Swagger 2.0 document into an ApiDoc.

    Raises IngestError when ``doc`` is not such a document or has no operations.
    """
    if not isinstance(doc, dict) or not ("openapi" in doc or "swagger" in doc):
        raise IngestError(f"{source}: not an OpenAPI/Swagger document (no 'openapi' or 'swagger' key)")
    version = str(doc.get("openapi") or doc.get("swagger"))
    if not (version.startswith("3") or version.startswith("2")):
        raise IngestError(f"{source}: unsupported OpenAPI/Swagger version {version!r}")
    try:
        api = _Reader(doc, source, max_depth).read()
    except RecursionError as e:  # a pathological document; never let it escape as a crash
        raise IngestError(f"{source}: document nests too deeply to read") from e
    if not api.operations:
        raise IngestError(f"{source}: OpenAPI document has no operations under 'paths'")
    return api
