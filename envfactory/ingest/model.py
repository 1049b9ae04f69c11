"""ApiDoc: one normalized model of an API's documentation, whatever format it came in.

Readers (OpenAPI/Swagger, Markdown, HTML) all produce this; explorers consume it.
Schemas are kept as plain JSON Schema dicts with local ``$ref``s already resolved
(cycles are cut and marked with ``{"x-cycle": "<ref>"}``).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

__all__ = ["ApiDoc", "Operation", "Parameter", "Response"]

HttpMethod = Literal["get", "post", "put", "patch", "delete", "head", "options", "trace"]


class Parameter(BaseModel):
    name: str
    location: Literal["path", "query", "header", "cookie", "body"] = "query"
    description: str = ""
    required: bool = False
    schema_: dict[str, Any] = Field(default_factory=dict, alias="schema")
    example: Any = None

    model_config = {"populate_by_name": True}

    @property
    def type(self) -> str | None:
        t = self.schema_.get("type")
        return t if isinstance(t, str) else None

    @property
    def enum(self) -> list[Any] | None:
        return self.schema_.get("enum")


class Response(BaseModel):
    status: str  # "200", "201", "default", ...
    description: str = ""
    schema_: dict[str, Any] | None = Field(default=None, alias="schema")
    example: Any = None

    model_config = {"populate_by_name": True}


class Operation(BaseModel):
    method: HttpMethod
    path: str
    operation_id: str | None = None
    summary: str = ""
    description: str = ""
    tags: list[str] = Field(default_factory=list)
    parameters: list[Parameter] = Field(default_factory=list)
    request_body: dict[str, Any] | None = None  # JSON Schema of the JSON body
    request_example: Any = None
    responses: list[Response] = Field(default_factory=list)
    deprecated: bool = False

    @property
    def key(self) -> str:
        return f"{self.method.upper()} {self.path}"

    def success_response(self) -> Response | None:
        for r in sorted(self.responses, key=lambda r: r.status):
            if r.status.startswith("2"):
                return r
        return None


class ApiDoc(BaseModel):
    """Everything the explorers need from one document (or one crawled site)."""

    title: str
    version: str = ""
    description: str = ""
    source: str  # path or URL it was read from
    format: Literal["openapi3", "openapi31", "swagger2", "markdown", "html"]
    base_url: str | None = None
    operations: list[Operation] = Field(default_factory=list)
    schemas: dict[str, dict[str, Any]] = Field(default_factory=dict)  # named components
    warnings: list[str] = Field(default_factory=list)
