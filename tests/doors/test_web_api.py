"""``arena web``'s JSON API as its OpenAPI document describes it: every endpoint names the model
it answers with and documents the 404 it can answer, and what it answers fits the document (a
season not yet published: the API has nothing to serve but the list of seasons)."""

from __future__ import annotations

import dataclasses
import json

import pytest
from fastapi.testclient import TestClient

from arena.doors.web import build_app
from arena.doors.web.api import ApiError, SeasonListed
from arena.reporting.site import Season

API = {"/api/seasons", "/api/seasons/{season_id}/version", "/api/seasons/{season_id}/{mart}",
       "/api/league/{mart}", "/api/leaderboard"}
ANSWERS_404 = API - {"/api/seasons"}  # the list of seasons is never missing


@pytest.fixture
def client(tmp_path):
    (tmp_path / "season").mkdir()
    (tmp_path / "season" / "season.json").write_text(json.dumps({"id": "s1"}), encoding="utf-8")
    return TestClient(build_app(tmp_path))


def _model(schema: dict, spec: dict) -> str:
    """The component a response schema names (an array's items for a list)."""
    ref = schema.get("$ref") or schema.get("items", {}).get("$ref")
    assert ref, schema
    name = ref.removeprefix("#/components/schemas/")
    assert name in spec["components"]["schemas"]
    return name


def test_every_endpoint_names_its_model_and_documents_its_404(client):
    spec = client.get("/openapi.json").json()
    assert set(spec["paths"]) == API  # the pages are no part of the API's document
    models = {}
    for path, methods in spec["paths"].items():
        responses = methods["get"]["responses"]
        models[path] = _model(responses["200"]["content"]["application/json"]["schema"], spec)
        if path in ANSWERS_404:
            missing = responses["404"]
            assert missing["description"]
            assert _model(missing["content"]["application/json"]["schema"], spec) == "ApiError"
        else:
            assert "404" not in responses
    assert models == {"/api/seasons": "SeasonListed",
                      "/api/seasons/{season_id}/version": "Publication",
                      "/api/seasons/{season_id}/{mart}": "MartRows",
                      "/api/league/{mart}": "LeagueRows", "/api/leaderboard": "MartRows"}
    assert "400" in spec["paths"]["/api/seasons/{season_id}/{mart}"]["get"]["responses"]


def test_the_answers_fit_the_document(client):
    seasons = client.get("/api/seasons").json()
    assert [SeasonListed.model_validate(s).id for s in seasons] == ["s1"]
    assert seasons[0]["state"] == "not published"
    for path in ("/api/seasons/nope/version", "/api/seasons/s1/leaderboard",
                 "/api/seasons/s1/secrets", "/api/league/league_verdict", "/api/leaderboard"):
        answer = client.get(path)
        assert answer.status_code == 404, path
        assert ApiError.model_validate(answer.json()).error, path


def test_a_listed_season_has_the_fields_of_the_sites_season():
    assert list(SeasonListed.model_fields) == [f.name for f in dataclasses.fields(Season)]
