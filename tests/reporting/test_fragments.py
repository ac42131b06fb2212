"""The season report's kept pieces (arena/reporting/fragments.py): a page rendered from pieces
kept by an earlier rendering is the page rendered afresh, byte for byte, whatever changed in
between; only the pieces whose rows or links changed are rendered again."""

from __future__ import annotations

import json

import pandas as pd

from arena.reporting.fragments import Fragments
from arena.reporting.season import season_report
from tests.reporting.tiny_marts import tiny_marts

DAILY = {"2026-10-01": "daily/2026-10-01.html", "2026-10-02": "daily/2026-10-02.html"}


def _render(marts, path, daily=DAILY) -> tuple[str, Fragments]:
    fragments = Fragments(path)
    html = season_report(marts, daily=daily, fragments=fragments)
    fragments.save()
    return html, fragments


def test_kept_pieces_render_the_page_afresh_and_only_changes_render_again(tmp_path):
    path = tmp_path / "_fragments.json"
    marts = tiny_marts()
    first, made = _render(marts, path)
    assert first == season_report(marts, daily=DAILY)  # no fragments at all: the same page
    # 3 cycles of decisions, 2 trade rows, 1 rejection row
    assert made.rendered == 6 and len(json.loads(path.read_text())) == 6

    again, kept = _render(marts, path)
    assert again == first and kept.rendered == 0

    # a later cycle: a decision added to an existing cycle, a trade that closes, a new day
    c3 = pd.Timestamp("2026-10-03 16:00", tz="UTC")
    later = {k: v.copy() for k, v in marts.items()}
    decisions = later["decisions"]
    extra = decisions.iloc[[2]].assign(decision_index=1, action="open_short", symbol="SOL")
    later["decisions"] = pd.concat([decisions, extra, decisions.iloc[[2]].assign(
        cycle_at=c3, action="close", symbol="BTC")], ignore_index=True)
    trades = later["trades"]
    trades.loc[1, ["status", "closed_at", "exit_price", "net_pnl", "closed_by", "exit_cycle_at"]] \
        = ["closed", c3, 51_000.0, 19.5, "decision", c3]
    daily = {**DAILY, "2026-10-03": "daily/2026-10-03.html"}
    changed, made = _render(later, path, daily)
    assert changed == season_report(later, daily=daily)
    # momentum's cycle of C2 (one more decision), its new cycle, its trade (now closed)
    assert made.rendered == 3

    # a daily page appears for a day that had none: that day's cycles link to it now
    fewer = {"2026-10-02": DAILY["2026-10-02"]}
    _render(marts, path, fewer)
    relinked, made = _render(marts, path)
    assert relinked == first
    assert made.rendered == 2  # alpha's cycle of C1 and its trade row (opened on C1)


def test_a_damaged_or_foreign_file_of_pieces_renders_everything(tmp_path):
    marts = tiny_marts()
    expected = season_report(marts, daily=DAILY)
    path = tmp_path / "_fragments.json"
    for damage in (b"", b"{not json", b"[1, 2]", json.dumps({"k": 1}).encode(), b"\xff\xfe"):
        path.write_bytes(damage)
        html, made = _render(marts, path)
        assert html == expected and made.rendered == 6
        assert len(json.loads(path.read_text())) == 6  # and the file is whole again


def test_the_file_keeps_only_the_pieces_of_the_last_rendering(tmp_path):
    path = tmp_path / "_fragments.json"
    _render(tiny_marts(name="alpha"), path)
    before = set(json.loads(path.read_text()))
    _render(tiny_marts(name="beta"), path)  # another contestant: other rows, other anchors
    after = set(json.loads(path.read_text()))
    assert len(after) == 6
    assert before - after and after - before  # alpha's pieces dropped, beta's kept
    assert before & after  # momentum's rows are the same in both seasons: one piece each
    html, made = _render(tiny_marts(name="beta"), path)
    assert made.rendered == 0 and "beta" in html


def test_a_report_written_elsewhere_keeps_no_pieces_in_the_lake(tmp_path):
    """Only the lake's own report keeps pieces (beside it); --out somewhere else renders
    afresh and leaves nothing beside the file it wrote."""
    from arena.data.lake import Lake
    from arena.reporting.fragments import FRAGMENTS_FILE
    from arena.reporting.season import write_season_report

    lake = Lake(tmp_path / "lake")
    marts_dir = lake.root / "marts"
    marts_dir.mkdir(parents=True)
    for name, frame in tiny_marts().items():
        frame.to_parquet(marts_dir / f"{name}.parquet")
    own = write_season_report(lake)
    assert (own.parent / FRAGMENTS_FILE).is_file()
    out = write_season_report(lake, tmp_path / "elsewhere" / "season.html")
    assert not (out.parent / FRAGMENTS_FILE).exists()
    kept = json.loads((own.parent / FRAGMENTS_FILE).read_text())
    again = write_season_report(lake)
    assert again.read_text() == own.read_text()
    assert json.loads((own.parent / FRAGMENTS_FILE).read_text()) == kept
