"""FHIR search parameters that name another resource (explore/fhir_search.py) are references.

The shapes are NHS Booking and Referral 1.4.0's (resources/healthcare): its resource bodies are
external files, so the entities' fields come from the searches.
"""

from __future__ import annotations

from typing import Any

from envfactory.explore import explore

from .conftest import body, ok, openapi, path_param

SERVICE_ID = {"name": "HealthcareService.identifier", "in": "query", "schema": {"type": "string"}}
HAS = {
    "name": "_has",
    "in": "query",
    "description": "The healthcareService you want the Endpoints returned for.\n\n"
    "|HealthcareService Property| Example|\n|-------| --------|\n"
    "|HealthcareService.Identifier| `_has:HealthcareService.Identifier=https://fhir.nhs.uk/Id/dos-service-id\\|1000099999`|\n"
    "|HealthcareService.Id| `_has:HealthcareService.Id=95852b93-d1ab-4c51-8e7d-c24cf9b257a9`|\n",
    "schema": {"type": "string", "enum": ["HealthcareService.Identifier", "HealthcareService.Id"]},
}
SLOT_SERVICE = {
    "name": "Schedule.actor:HealthcareService",
    "in": "query",
    "description": "A single service ID can be provided to indicate the service for which appointment slots "
    "are returned for.",
    "schema": {"type": "string", "example": "2000099999"},
}
SUBJECT = {
    "name": "subject:identifier",
    "in": "query",
    "description": "The URL encoded patient's NHS number.",
    "schema": {"type": "string"},
}
ENDPOINT_ID = {"name": "Endpoint.identifier", "in": "query", "schema": {"type": "string"}}
# the resources and search bundles are external files the document does not carry (as in NHS's)
BUNDLE = {"$ref": "schemas1.4.0/SearchBundle.yaml"}


def _crud(path: str, params: list[dict[str, Any]]) -> dict[str, Any]:
    one = {"$ref": f"schemas1.4.0{path}.yaml"}
    return {
        path: {
            "get": {"parameters": params, "responses": ok(BUNDLE)},
            "post": {"requestBody": body(one), "responses": ok(one)},
        },
        f"{path}/{{id}}": {
            "parameters": [path_param("id")],
            "get": {"responses": ok(one)},
            "put": {"requestBody": body(one), "responses": ok(one)},
            "delete": {"responses": ok(one)},
        },
    }


def _explored():
    paths = {
        **_crud("/HealthcareService", [SERVICE_ID]),
        **_crud("/Endpoint", [HAS, ENDPOINT_ID]),
        **_crud("/DocumentReference", [SUBJECT]),
        "/Slot": {"get": {"parameters": [SLOT_SERVICE], "responses": ok(BUNDLE)}},
    }
    res = explore(openapi(paths, title="Booking and Referral"), domain="healthcare")
    ents = {e.name: e for s in res.envs for e in s.entities}
    tools = {t.name: t for s in res.envs for t in s.tools}
    return ents, tools


def _field(ents, entity: str, name: str):
    return next((f for f in ents[entity].fields if f.name == name), None)


def test_reverse_chained_has_lists_the_endpoints_of_a_healthcare_service():
    ents, tools = _explored()
    f = _field(ents, "endpoint", "healthcare_service_id")
    assert f is not None and f.ref == "healthcare_service"
    assert _field(ents, "endpoint", "has") is None  # no column of the words "HealthcareService.Id"
    has = next(p for p in tools["list_endpoints"].params if p.name == "has")
    assert (has.field, has.op, has.enum) == ("healthcare_service_id", "eq", None)


def test_type_modifier_lists_the_slots_of_a_healthcare_service():
    ents, tools = _explored()
    f = _field(ents, "slot", "healthcare_service_id")
    assert f is not None and f.ref == "healthcare_service"
    p = next(p for p in tools["list_slots"].params if p.name == "schedule_actor_healthcare_service")
    assert p.field == "healthcare_service_id"


def test_a_lower_case_modifier_names_no_resource():
    # ``subject:identifier`` is the patient's NHS number, not a row of an entity here
    ents, tools = _explored()
    assert all(f.ref is None for f in ents["document_reference"].fields)
    p = next(p for p in tools["list_document_references"].params if p.name == "subject_identifier")
    assert p.field == "subject_identifier"
