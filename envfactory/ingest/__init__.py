"""Ingest: read API documentation (OpenAPI/Swagger, Markdown, HTML) into ApiDocs, and
fetch it (crawl a site, copy a folder) into ``resources/<domain>/``."""

from envfactory.ingest.crawl import CrawlResult, crawl, ingest
from envfactory.ingest.infer import infer_schema
from envfactory.ingest.model import ApiDoc, Operation, Parameter, Response
from envfactory.ingest.reader import document_files, load_apidoc, load_apidocs

__all__ = [
    "ApiDoc",
    "Operation",
    "Parameter",
    "Response",
    "load_apidoc",
    "load_apidocs",
    "document_files",
    "crawl",
    "ingest",
    "CrawlResult",
    "infer_schema",
]
