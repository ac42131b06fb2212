"""A language model in the demo's first run (issue 46, item 1): ``arena demo --model
PROVIDER/MODEL [--api-base URL]`` adds one LLM contestant to the house rules, called through
litellm over real HTTP (here a loopback OpenAI-compatible server), ranks it, and says what to
open; a model that cannot be called is one line before anything is played."""

from __future__ import annotations

import json
import socket

import pytest
import yaml

from arena.app.demo_model import model_name, model_roster
from arena.cli import main
from arena.core.errors import BadArgument
from tests.agents.openai_stub import OpenAIStub, RecordedRequest, StubResponse

SMALL = ["--days", "2", "--players", "200", "--symbols", "BTC,ETH,SOL,SPY,AAPL"]


def wait(_request: RecordedRequest) -> StubResponse:
    return StubResponse.answer(json.dumps({"reasoning": "waiting", "decisions": []}))


def test_a_loopback_model_plays_the_demo_and_is_ranked(tmp_path, capsys):
    lake = tmp_path / "demo"
    with OpenAIStub(handler=wait) as stub:
        code = main(["demo", "--model", "openai/Local-Model", "--api-base", stub.url, *SMALL,
                     "--lake", str(lake)])
        calls = len(stub.requests)
    out, err = capsys.readouterr()
    assert code == 0, err
    assert calls == 2  # one call a cycle, over HTTP through litellm
    board = out.split("season played", 1)[-1]
    assert "(6 contestants)" in out and "local-model" in board
    assert "no contestant played this season" not in out
    assert f"open the site: arena web --lake {lake}" in out
    assert "to see a language model play" not in out
    kept = yaml.safe_load((lake / "season" / "roster.yaml").read_text())
    [entry] = [c for c in kept["contestants"] if c["name"] == "local-model"]
    assert (entry["model"], entry["api_base"]) == ("openai/Local-Model", stub.url)


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.parametrize(("args", "said"), [
    (["--model", "openai/x", "--api-base", "http://127.0.0.1:{port}/v1"],
     "no server answers at http://127.0.0.1:{port}/v1"),
    (["--model", "openai/gpt-4o-mini"], "needs OPENAI_API_KEY in the environment"),
    (["--model", "gpt-4o-mini"], "give PROVIDER/MODEL"),
    (["--api-base", "http://127.0.0.1:{port}/v1"], "give --model PROVIDER/MODEL"),
])
def test_a_model_that_cannot_be_called_is_one_line_and_nothing_is_played(
        args, said, tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    port = _closed_port()
    lake = tmp_path / "demo"
    code = main(["demo", *(a.format(port=port) for a in args), *SMALL, "--lake", str(lake)])
    out, err = capsys.readouterr()
    assert code == 2 and "Traceback" not in out + err
    assert said.format(port=port) in err and len(err.strip().splitlines()) == 1
    assert not lake.exists()


def test_the_model_joins_the_roster_under_its_own_name(tmp_path):
    assert model_name("ollama/llama3.2") == "llama3-2"
    assert model_name("openai/gpt-4o-mini") == "gpt-4o-mini"
    path = model_roster(None, "ollama/llama3.2", "http://127.0.0.1:11434", tmp_path / "r.yaml")
    roster = yaml.safe_load(path.read_text())
    assert [c["name"] for c in roster["contestants"]][-1] == "llama3-2"
    assert roster["contestants"][-1]["prices"] == {"input_per_mtok": 0.0, "output_per_mtok": 0.0}
    with pytest.raises(BadArgument, match="already has a contestant named 'llama3-2'"):
        model_roster(path, "ollama/llama3.2", None, tmp_path / "again.yaml")
