"""One decision cycle with 16 LLM contestants against a loopback OpenAI-compatible server that
answers every call after 2 s: the cycle's wall time, its ratio to the sum of call latencies, the
engine overhead beyond the slowest call, and the prompt size per contestant.

    python benchmarks/cycle.py [--contestants 16] [--latency 2.0]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd

from arena.agents.llm import LLMContestant, load_litellm
from arena.agents.roster import ContestantSpec, Params
from arena.core.runner import Inline
from arena.core.settings import prepare_process
from arena.core.universe import load_universe
from arena.data.ingest import run_ingest
from arena.data.lake import Lake
from arena.data.providers.synthetic import SyntheticProvider
from arena.ledger.store import Ledger
from arena.market.prompts import prompt_tokens
from arena.pipeline.cycle import run_cycle

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the loopback server of the tests
from tests.agents.openai_stub import OpenAIStub, StubResponse

AT = pd.Timestamp("2026-10-28 16:00", tz="UTC")  # a Wednesday
ANSWER = json.dumps({"reasoning": "Stay patient.", "decisions": [
    {"action": "open_long", "symbol": "ETH", "percent_of_equity": 10, "confidence": 0.85,
     "invalidation_price": 1.0, "thesis": "trend", "invalidation": "breaks down"}]})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--contestants", type=int, default=16)
    parser.add_argument("--latency", type=float, default=2.0)
    args = parser.parse_args()
    prepare_process()  # the process edge: litellm offline
    universe = load_universe()
    load_litellm()
    with tempfile.TemporaryDirectory() as tmp, \
            OpenAIStub(default=StubResponse.answer(ANSWER, delay=args.latency)) as stub:
        lake = Lake(tmp)
        run_ingest(SyntheticProvider(), universe, start=AT - pd.Timedelta(days=220),
                   end=AT, lake=lake, now=AT)
        contestants = [LLMContestant(ContestantSpec(
            name=f"llm-{i:02d}", kind="llm", model="openai/stub-model", api_base=stub.url,
            params=Params(temperature=0.2, max_tokens=400, timeout=30, num_retries=1)))
            for i in range(args.contestants)]
        t0 = time.perf_counter()
        outcomes = run_cycle(lake, "synthetic", universe, contestants, AT, ledger=Ledger(lake),
                             runner=Inline(workers=args.contestants))
        wall = time.perf_counter() - t0
        ledger = Ledger(lake)
        prompts = ledger.table("outcome")
        tokens = [prompt_tokens(ledger.messages(o.contestant, AT)[:2]) for o in outcomes[:1]]
    latencies = [o.latency_s for o in outcomes]
    print(f"{len(outcomes)} LLM contestants, {args.latency:.1f} s per call (loopback server)")
    print(f"  cycle wall time     {wall:.2f} s")
    print(f"  sum of latencies    {sum(latencies):.2f} s -> wall / sum = {wall / sum(latencies):.3f}")
    print(f"  slowest call        {max(latencies):.2f} s -> engine overhead {wall - max(latencies):.2f} s "
          "(market, briefings, parsing, execution, ledger)")
    print(f"  statuses            {sorted({o.status for o in outcomes})}, "
          f"fills {sum(o.fills for o in outcomes)}")
    print(f"  prompt size         {tokens[0]:,} tokens per contestant "
          f"({int(prompts['prompt_chars'].iloc[0]):,} characters)")


if __name__ == "__main__":
    main()
