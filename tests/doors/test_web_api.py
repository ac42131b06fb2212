"""``arena web``'s JSON API as its OpenAPI document describes it: every endpoint names the model
it answers with and documents every other status it can answer (404, 400, 422, 503), each an
ApiError; what it answers fits the document (a season not yet published: the API has nothing
to serve but the list of seasons); and schemathesis, on requests generated from the served
document, finds no answer the document does not name."""

from __future__ import annotations

import dataclasses
import json

import pytest
import schemathesis
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from schemathesis import GenerationMode

from arena.core.marts import LEAGUE_MARTS
from arena.doors.web import API_MARTS, build_app
from arena.doors.web.api import ApiError, SeasonListed
from arena.reporting.site import Season
from tests.doors import test_web

API = {"/api/seasons", "/api/seasons/{season_id}/version", "/api/seasons/{season_id}/{mart}",
       "/api/league/{mart}", "/api/leaderboard"}
ANSWERS_404 = API - {"/api/seasons"}  # the list of seasons is never missing
TAKES_PARAMETERS = {"/api/seasons/{season_id}/version", "/api/seasons/{season_id}/{mart}",
                    "/api/league/{mart}"}  # and can answer 422
READS_A_SEASON = API - {"/api/league/{mart}"}  # and can answer 503 (a publication unreadable)


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


def test_every_endpoint_names_its_model_and_documents_its_errors(client):
    spec = client.get("/openapi.json").json()
    assert set(spec["paths"]) == API  # the pages are no part of the API's document
    models = {}
    for path, methods in spec["paths"].items():
        responses = methods["get"]["responses"]
        models[path] = _model(responses["200"]["content"]["application/json"]["schema"], spec)
        for status, answers in (("404", ANSWERS_404), ("422", TAKES_PARAMETERS),
                                ("503", READS_A_SEASON)):
            if path not in answers:
                assert status not in responses, (path, status)
                continue
            error = responses[status]
            assert error["description"], (path, status)
            assert _model(error["content"]["application/json"]["schema"], spec) == "ApiError"
    assert "HTTPValidationError" not in spec["components"]["schemas"]  # FastAPI's own 422
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


@pytest.mark.parametrize("query,named", [
    ("limit=0", "query limit: Input should be greater than or equal to 1"),
    ("limit=50001", "query limit: Input should be less than or equal to 50000"),
    ("offset=-1", "query offset: Input should be greater than or equal to 0"),
    ("offset=ten", "query offset: Input should be a valid integer"),
])
def test_a_parameter_out_of_its_range_is_a_documented_422_naming_it(client, query, named):
    """An ApiError as every other refusal of the API (before: FastAPI's own ``detail`` list),
    and a page, not JSON, for a page's parameter."""
    answer = client.get(f"/api/seasons/s1/leaderboard?{query}")
    assert answer.status_code == 422
    assert named in ApiError.model_validate(answer.json()).error
    page = client.get("/seasons/s1/trades/alice/ETH/first")
    assert page.status_code == 422 and page.headers["content-type"].startswith("text/html")
    assert "path trip: Input should be a valid integer" in page.text


def test_a_listed_season_has_the_fields_of_the_sites_season():
    assert list(SeasonListed.model_fields) == [f.name for f in dataclasses.fields(Season)]


# --- schemathesis against the site served as `arena web` serves it, over a published season --
stub, live, site = test_web.stub, test_web.live, test_web.site  # the published live season
# A request the document allows may still filter a mart on a column it lacks (the documented
# 400, "a filter on a column the mart does not have"): an answer to valid data, as a 404 is.
ACCEPTED = ["2xx", "3xx", "400", "404"]
CONFIG = schemathesis.Config.from_dict(
    {"checks": {"positive_data_acceptance": {"expected-statuses": ACCEPTED}}})


@pytest.mark.parametrize("mode", list(GenerationMode), ids=lambda m: m.value)
def test_every_answer_is_one_the_document_names(site, live, mode):
    """schemathesis' checks on requests generated from the served OpenAPI document, a bounded
    number per endpoint (valid ones, and invalid ones), some with random path parameters and
    some reaching the season's marts: no server error; every status, content type, header and
    body as the document says; valid data answered, invalid parameters refused (422)."""
    schema = schemathesis.openapi.from_url(site + "/openapi.json", config=CONFIG)
    operations = [result.ok() for result in schema.get_all_operations()]
    assert {op.path for op in operations} == API

    for operation in operations:
        if mode is GenerationMode.NEGATIVE and not _typed(operation):
            continue  # only free text (or nothing) to send: no request is invalid
        @given(case=_requests(operation, mode, test_web.season_id(live)))
        @settings(max_examples=40, deadline=None, database=None,
                  suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
        def answers_as_documented(case) -> None:
            case.call_and_validate()

        answers_as_documented()


def _typed(operation) -> bool:
    """Whether an operation takes a parameter that is not free text (a number, a range)."""
    return any(p.definition.get("schema", {}).get("type") not in (None, "string")
               for p in operation.iter_parameters())


def _requests(operation, mode: GenerationMode, season: str) -> st.SearchStrategy:
    """An operation's requests: its path parameters random, or the served season and a mart
    (one the API serves, or not), so that the generated queries reach the marts' rows."""
    named = {p.name for p in operation.iter_parameters() if p.location == "path"}
    if not named:
        return operation.as_strategy(generation_mode=mode)

    def reaching(mart: str) -> st.SearchStrategy:
        given = {"season_id": season, "mart": mart}
        return operation.as_strategy(generation_mode=mode, path_parameters={
            k: v for k, v in given.items() if k in named})

    marts = st.sampled_from(sorted({*API_MARTS, *LEAGUE_MARTS, "secrets"}))
    return st.one_of(operation.as_strategy(generation_mode=mode), marts.flatmap(reaching))
