"""One decision cycle with 64 LLM contestants against a loopback OpenAI-compatible server that
answers every call after 1 s: is the cycle as fast as its slowest call?

The model server runs in a process of its own (as a model's server is never in the arena's
process: its HTTP handling would share the arena's interpreter lock); ``--server thread`` runs
it in the arena's process instead, as the tests do.

Printed: the call phase (from the fan-out of the turns, once the market is built, to the last
answer: the first request's arrival, the spread of the arrivals, the most requests the server
held at once), the whole
cycle's wall and CPU time, the queue time each turn recorded, and the prompt size. Baseline,
measured in the same run on the same lake: the fan-out bounded to 4 threads (``--baseline``
contestants), the command line's default before every call started at once.

    python benchmarks/cycle.py [--contestants 64] [--latency 1.0] [--baseline 32]
                               [--server process|thread]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import statistics
import sys
import tempfile
import threading
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


class Timed(Inline):
    """The command line's runner, noting when the cycle's fan-out of turns started (after the
    market step)."""

    started = 0.0  # Unix seconds: the server's arrivals may be stamped in another process

    def map(self, fn, items, /, *args, **kwargs):  # type: ignore[no-untyped-def]
        self.started = time.time()
        return super().map(fn, items, *args, **kwargs)


def contestants(url: str, count: int, tag: str) -> list[LLMContestant]:
    return [LLMContestant(ContestantSpec(
        name=f"{tag}-{i:02d}", kind="llm", model="openai/stub-model", api_base=url,
        params=Params(temperature=0.2, max_tokens=400, timeout=60, num_retries=0)))
        for i in range(count)]


class Server:
    """The loopback model: answers every call after ``latency`` seconds, noting when each
    request arrived (Unix seconds) and how many it held at once; in a process of its own, or
    (``thread``) on threads of this one."""

    def __init__(self, latency: float, where: str) -> None:
        self.latency, self.where = latency, where

    def __enter__(self) -> Server:
        if self.where == "thread":
            self.arrivals: list[float] = []
            self.lock = threading.Lock()

            def answer(request: object) -> StubResponse:
                with self.lock:
                    self.arrivals.append(time.time())
                return StubResponse.answer(ANSWER, delay=self.latency)

            self.stub = OpenAIStub(handler=answer).__enter__()
            self.url = self.stub.url
        else:
            self.conn, child = multiprocessing.get_context("spawn").Pipe()
            self.process = multiprocessing.get_context("spawn").Process(
                target=serve, args=(child, self.latency), daemon=True)
            self.process.start()
            self.url = self.conn.recv()
        return self

    def read(self) -> tuple[list[float], int]:
        """The arrivals and the most requests held at once since the last read."""
        if self.where == "thread":
            with self.lock:
                out = (list(self.arrivals), self.stub.max_in_flight)
                self.arrivals.clear()
                self.stub.max_in_flight = 0
            return out
        self.conn.send("read")
        return self.conn.recv()

    def __exit__(self, *exc: object) -> None:
        if self.where == "thread":
            self.stub.__exit__(*exc)
        else:
            self.conn.send("stop")
            self.process.join(10)


def serve(conn, latency: float) -> None:  # type: ignore[no-untyped-def]
    """The server process of :class:`Server`."""
    with Server(latency, "thread") as server:
        conn.send(server.url)
        while (message := conn.recv()) != "stop":
            if message == "read":
                conn.send(server.read())


def one_cycle(lake: Lake, universe, server: Server, count: int, tag: str,
              at: pd.Timestamp, runner: Timed, latency: float) -> dict[str, float]:
    server.read()  # from here on
    t0, c0 = time.time(), time.process_time()
    outcomes = run_cycle(lake, "synthetic", universe, contestants(server.url, count, tag), at,
                         ledger=Ledger(lake), runner=runner)
    wall, cpu = time.time() - t0, time.process_time() - c0
    arrivals, in_flight = server.read()
    if len(arrivals) != count:
        raise SystemExit(f"{len(arrivals)} requests for {count} contestants: "
                         f"{sorted({o.status for o in outcomes})}")
    start = runner.started
    first, last = min(arrivals) - start, max(arrivals) - start
    return {"wall": wall, "cpu": cpu, "market": start - t0, "first": first,
            "spread": last - first, "call_phase": last + latency, "in_flight": in_flight,
            "queue_max": max(o.queue_s for o in outcomes),
            "queue_median": statistics.median(o.queue_s for o in outcomes),
            "traded": sum(o.status == "traded" for o in outcomes)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--contestants", type=int, default=64)
    parser.add_argument("--latency", type=float, default=1.0)
    parser.add_argument("--baseline", type=int, default=32,
                        help="contestants of the 4-thread baseline (0: none)")
    parser.add_argument("--server", choices=("process", "thread"), default="process",
                        help="where the loopback model runs (default: a process of its own)")
    args = parser.parse_args()
    prepare_process()  # the process edge: litellm offline
    universe = load_universe().select(None)  # the default season's assets
    load_litellm()
    with tempfile.TemporaryDirectory() as tmp, Server(args.latency, args.server) as server:
        lake = Lake(tmp)
        run_ingest(SyntheticProvider(), universe, start=AT - pd.Timedelta(days=220),
                   end=AT, lake=lake, now=AT)
        wide = one_cycle(lake, universe, server, args.contestants, "wide", AT, Timed(),
                         args.latency)
        narrow = (one_cycle(lake, universe, server, args.baseline, "narrow", AT,
                            Timed(workers=4), args.latency) if args.baseline else None)
        ledger = Ledger(lake)
        prompts = ledger.table("outcome")
        tokens = prompt_tokens(ledger.messages("wide-00", AT)[:2])
        in_flight = wide["in_flight"]
    print(f"{args.contestants} LLM contestants, every call answered after {args.latency:.1f} s "
          f"(loopback server, in {'a process of its own' if args.server == 'process' else 'this process'})")
    print(f"  call phase          {wide['call_phase']:.2f} s (fan-out start to the last answer; "
          f"first request after {wide['first']:.2f} s, arrivals spread over "
          f"{wide['spread']:.2f} s, {in_flight} in the server at once)")
    print(f"  whole cycle         {wide['wall']:.2f} s wall ({wide['market']:.2f} s of it the "
          f"market before the fan-out), {wide['cpu']:.2f} s CPU "
          f"({wide['cpu'] / args.contestants * 1000:.0f} ms per contestant: briefing, call, "
          "parsing, execution, ledger)")
    print(f"  queue time          median {wide['queue_median']:.3f} s, max "
          f"{wide['queue_max']:.3f} s (recorded beside each call's latency)")
    print(f"  trades              {wide['traded']} of {args.contestants}")
    print(f"  prompt size         {tokens:,} tokens per contestant "
          f"({int(prompts['prompt_chars'].iloc[0]):,} characters)")
    if narrow is not None:
        print(f"baseline: {args.baseline} contestants on 4 threads (the former default)")
        print(f"  call phase          {narrow['call_phase']:.2f} s, whole cycle "
              f"{narrow['wall']:.2f} s, queue max {narrow['queue_max']:.2f} s")
        per = (narrow["call_phase"] / args.baseline) / (wide["call_phase"] / args.contestants)
        print(f"  call phase per contestant: {per:.1f}x faster all at once")


if __name__ == "__main__":
    main()
