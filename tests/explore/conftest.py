"""Helpers: small inline OpenAPI documents read through the real reader."""

from __future__ import annotations

import json
from typing import Any

import pytest

from envfactory.ingest import ApiDoc, load_apidoc


def openapi(paths: dict[str, Any], schemas: dict[str, Any] | None = None, title: str = "Test API") -> ApiDoc:
    doc = {
        "openapi": "3.0.3",
        "info": {"title": title, "version": "1"},
        "paths": paths,
        "components": {"schemas": schemas or {}},
    }
    return load_apidoc(json.dumps(doc).encode(), source=f"{title}.json")


def ok(schema: dict[str, Any]) -> dict[str, Any]:
    return {"200": {"description": "ok", "content": {"application/json": {"schema": schema}}}}


def ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/components/schemas/{name}"}


def body(schema: dict[str, Any]) -> dict[str, Any]:
    return {"required": True, "content": {"application/json": {"schema": schema}}}


def path_param(name: str) -> dict[str, Any]:
    return {"name": name, "in": "path", "required": True, "schema": {"type": "string"}}


def query(name: str, schema: dict[str, Any]) -> dict[str, Any]:
    return {"name": name, "in": "query", "schema": schema}


HOTEL = {
    "type": "object",
    "required": ["id", "name", "city"],
    "properties": {
        "id": {"type": "string"},
        "name": {"type": "string", "example": "Grand Hotel"},
        "city": {"type": "string"},
        "stars": {"type": "integer", "minimum": 1, "maximum": 5},
        "rating": {"type": "number"},
        "created_at": {"type": "string", "format": "date-time"},
    },
}
BOOKING = {
    "type": "object",
    "required": ["id", "hotel_id", "guest_name", "check_in"],
    "properties": {
        "id": {"type": "string"},
        "hotel_id": {"type": "string"},
        "guest_name": {"type": "string"},
        "check_in": {"type": "string", "format": "date"},
        "nights": {"type": "integer"},
        "status": {"type": "string", "enum": ["pending", "confirmed", "cancelled", "completed"]},
        "cancelled_at": {"type": "string", "format": "date-time", "nullable": True},
        "total": {"type": "number"},
    },
}


def hotel_api() -> ApiDoc:
    bk_in = {
        "type": "object",
        "required": ["hotel_id", "guest_name", "check_in"],
        "properties": {k: BOOKING["properties"][k] for k in ("hotel_id", "guest_name", "check_in", "nights")},
    }
    return openapi(
        {
            "/v1/hotels": {
                "get": {
                    "operationId": "listHotels",
                    "summary": "Search hotels.",
                    "parameters": [
                        query("city", {"type": "string"}),
                        query("min_rating", {"type": "number"}),
                        query("q", {"type": "string"}),
                        query("limit", {"type": "integer"}),
                        query("offset", {"type": "integer"}),
                        query("sort", {"type": "string"}),
                    ],
                    "responses": ok(
                        {
                            "type": "object",
                            "properties": {
                                "data": {"type": "array", "items": ref("Hotel")},
                                "total": {"type": "integer"},
                            },
                        }
                    ),
                }
            },
            "/v1/hotels/{hotelId}": {
                "get": {"parameters": [path_param("hotelId")], "responses": ok(ref("Hotel"))}
            },
            "/v1/hotels/{hotelId}/offers": {
                "get": {
                    "parameters": [path_param("hotelId")],
                    "responses": ok(
                        {
                            "type": "array",
                            "items": {
                                "type": "object",
                                "properties": {"id": {"type": "string"}, "price": {"type": "number"}},
                            },
                        }
                    ),
                }
            },
            "/v1/bookings": {
                "get": {
                    "parameters": [
                        query(
                            "status",
                            {
                                "type": "array",
                                "items": {
                                    "type": "string",
                                    "enum": ["pending", "confirmed", "cancelled", "completed"],
                                },
                            },
                        )
                    ],
                    "responses": ok(
                        {
                            "type": "object",
                            "properties": {"items": {"type": "array", "items": ref("Booking")}},
                        }
                    ),
                },
                "post": {
                    "requestBody": body(bk_in),
                    "responses": {
                        "201": {
                            "description": "created",
                            "content": {"application/json": {"schema": ref("Booking")}},
                        }
                    },
                },
            },
            "/v1/bookings/{bookingId}": {
                "get": {"parameters": [path_param("bookingId")], "responses": ok(ref("Booking"))},
                "patch": {
                    "parameters": [path_param("bookingId")],
                    "requestBody": body({"type": "object", "properties": {"nights": {"type": "integer"}}}),
                    "responses": ok(ref("Booking")),
                },
                "delete": {
                    "parameters": [path_param("bookingId")],
                    "responses": {"204": {"description": "gone"}},
                },
            },
            "/v1/bookings/{bookingId}/cancel": {
                "post": {"parameters": [path_param("bookingId")], "responses": ok(ref("Booking"))}
            },
            "/v1/bookings/{bookingId}/confirm": {
                "post": {"parameters": [path_param("bookingId")], "responses": ok(ref("Booking"))}
            },
            "/health": {"get": {"responses": ok({"type": "object"})}},
            "/oauth/token": {"post": {"responses": ok({"type": "object"})}},
            "/callbacks": {"post": {"responses": ok({"type": "object"})}},
            "/files/upload": {"post": {"responses": ok({"type": "object"})}},
        },
        {"Hotel": HOTEL, "Booking": BOOKING},
        title="Hotel Booking API",
    )


@pytest.fixture
def hotel_doc() -> ApiDoc:
    return hotel_api()
