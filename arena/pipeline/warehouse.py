"""The analysts' warehouse: dbt builds the marts over the lake, then they are published.

``dbt build`` (dbt-duckdb, ``dbt_project/``) reads the ledger (its rows gathered into a few
Parquet parts first, each record copied once: :mod:`arena.pipeline.ledger_tables`) and the
season's analytics, and writes a private database, ``<lake>/dbt/warehouse.duckdb``. After a successful build, with
every test passed, the marts are published twice:

* ``<lake>/warehouse.duckdb`` - a copy of the whole database, swapped in with one
  ``os.replace``: the marts in the schema ``marts`` (``select * from marts.leaderboard``), the
  layers below them in ``staging`` and ``intermediate``, the universe seed in ``main``; every
  model's and column's description is a comment there (dbt's ``persist_docs``:
  ``duckdb_tables()``, ``duckdb_views()`` and ``duckdb_columns()`` show it). DuckDB lets no
  other process open a file that one process holds read-write, so analysts never open the file
  dbt writes: an analyst's read-only session on the copy does not block the next build, and the
  next publication does not disturb it (the open file keeps its old contents until it is
  closed).
* ``<lake>/marts/<mart>.parquet`` - every mart as a Parquet file, the directory swapped whole,
  with ``_digests.json``: the SHA-256 of each mart and of the warehouse copy, sealed
  (:func:`arena.pipeline.season_files.sealed_json`), published in the same swap as the marts it
  names. The warehouse is replaced right after that swap; :func:`check_published` (``arena
  season verify``) holds both to those digests, and a warehouse that is still the previous
  publication's (a publication stopped between its two steps) is copied again from dbt's
  database when that still is the one the marts name, else named with the command that
  publishes it again.

A failed build (a model error or a failing data test) publishes nothing: analysts keep the last
good warehouse. The dbt runner is injectable, so the Prefect flow passes prefect-dbt's runner
(each model and test a task in the UI) and the command line dbt's own.

Every dbt command line comes from :func:`dbt_args`: the lake reaches dbt as the var ``lake``, and
its bars folder as the var ``bars`` (no environment variable, nothing in ``os.environ`` changes;
a market on object storage is first copied whole into ``<lake>/dbt/market/``, see
:func:`bars_dir`), usage statistics are off by flag, and
dbt's profiles, target and logs directories are all in ``<lake>/dbt/``: dbt writes nothing into
the project folder, which may be installed read-only. (Run by hand, ``cd dbt_project && dbt
build``, the project takes the lake from ``$ARENA_LAKE`` instead; see its ``profiles.yml``.)
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import duckdb

from arena.core import resources
from arena.core.errors import Failed
from arena.core.marts import SEASON_MARTS
from arena.core.runner import INLINE, Runner
from arena.data.lake import Lake, swap_dir
from arena.data.market_store import ObjectMarket
from arena.ledger.chain import BrokenChain, file_sha256
from arena.ledger.store import Ledger
from arena.pipeline.ledger_tables import gather
from arena.pipeline.season_files import check_sealed, sealed_json

log = logging.getLogger(__name__)
DBT_PROJECT = resources.DBT_PROJECT
MARTS = SEASON_MARTS  # the season's marts a publication copies (arena.core.marts names them)
MARTS_SCHEMA = "marts"  # the marts' schema in dbt's database and the published warehouse
Invoke = Callable[[list[str]], Any]  # dbtRunner().invoke or PrefectDbtRunner().invoke
DIGESTS = "_digests.json"  # in the published marts: each mart's and the warehouse's SHA-256
WAREHOUSE = "warehouse.duckdb"
# The DuckDB storage the warehouse is written in (profiles.yml's config_options): DuckDB 1.2 and
# later read it, where the default storage of DuckDB 2 is read by 2.x alone. Its number in the
# file's header; a build database of another storage is removed before the build that makes it
# again (it is derived: every model is built from the lake each time).
WAREHOUSE_STORAGE, WAREHOUSE_STORAGE_NUMBER = "v1.2.0", 65
REPUBLISH = "arena season publish (the marts and the warehouse are built again from the ledger)"


class MartsError(Failed, RuntimeError):
    """dbt failed (a model error or a failing test): nothing was published."""


@dataclass(frozen=True)
class NodeResult:
    name: str
    kind: str  # model, test, seed, unit_test
    status: str
    seconds: float
    message: str | None = None


@dataclass
class BuildResult:
    nodes: list[NodeResult] = field(default_factory=list)
    seconds: float = 0.0
    warehouse: Path | None = None
    marts: Path | None = None

    def count(self, kind: str) -> int:
        return sum(n.kind == kind for n in self.nodes)


def build_dir(lake: Lake) -> Path:
    """dbt's own directory in ``lake``, absolute: dbt resolves a relative ``--target-path``
    against the project folder, so a relative lake would put dbt's files in ``dbt_project/``."""
    return lake.root.resolve() / "dbt"


def profiles_dir(lake: Lake) -> Path:
    """``<lake>/dbt/profiles/``, holding a copy of the project's ``profiles.yml`` (created or
    refreshed here): dbt writes into its profiles directory (``.user.yml``), and the project
    folder may be read-only (installed in site-packages), so dbt never gets that folder."""
    directory = build_dir(lake) / "profiles"
    directory.mkdir(parents=True, exist_ok=True)
    text = (DBT_PROJECT / "profiles.yml").read_text()
    target = directory / "profiles.yml"
    if not target.is_file() or target.read_text() != text:
        partial = directory / f".profiles.{os.getpid()}.{uuid.uuid4().hex[:8]}.yml"
        partial.write_text(text)
        os.replace(partial, target)
    return directory


def dbt_args(lake: Lake, command: str = "build", *extra: str,
             more_vars: dict[str, str] | None = None) -> list[str]:
    """The dbt command line for ``lake``: the lake's absolute root as the var ``lake`` (read by
    the profile and the sources), usage statistics off, and every directory dbt writes to (its
    profiles, target and logs; see :func:`profiles_dir`) in ``<lake>/dbt/``, absolute. No
    environment variable is needed or set. ``command`` may be two words (``"docs generate"``)."""
    return [*command.split(), "--project-dir", str(DBT_PROJECT),
            "--profiles-dir", str(profiles_dir(lake)),
            "--target-path", str(build_dir(lake) / "target"),
            "--log-path", str(build_dir(lake) / "logs"),
            "--vars", json.dumps({"lake": str(lake.root.resolve()), "bars": str(bars_dir(lake)),
                                  **(more_vars or {})}),
            "--no-send-anonymous-usage-stats", *extra]


SIGNALS_TAG = "signals"


def bars_dir(lake: Lake) -> Path:
    """The folder dbt reads the bars from, absolute: the market's own when it is on this
    machine, else the snapshot :func:`snapshot_market` keeps in ``<lake>/dbt/market/``."""
    local = lake.market.local_dir()
    if local is not None:
        return local.resolve() / "bars"
    return build_dir(lake) / "market" / "bars"


def snapshot_market(lake: Lake) -> int:
    """A market on object storage: copy the current version of every bar partition into
    ``<lake>/dbt/market/`` (swapped in whole, so dbt reads one publication) before dbt runs;
    returns how many files (0, and nothing copied, for a market on this machine)."""
    market = lake.market
    if not isinstance(market, ObjectMarket):
        return 0
    final = build_dir(lake) / "market"
    staging = final.with_name(f".market.{uuid.uuid4().hex[:8]}.tmp")
    try:
        copied = market.download("bars", staging)
        (staging / "bars").mkdir(parents=True, exist_ok=True)
        swap_dir(staging, final)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return copied


def _nodes(result: Any) -> list[NodeResult]:
    out = []
    for r in getattr(getattr(result, "result", None), "results", None) or []:
        node = r.node
        out.append(NodeResult(node.name, str(node.resource_type), str(r.status),
                              float(r.execution_time or 0.0), r.message))
    return out


def dbt_invoke() -> Invoke:
    """dbt's own in-process runner (dbt is imported here: it is slow to import)."""
    from dbt.cli.main import dbtRunner

    return dbtRunner().invoke


PARSE_FILE = "partial_parse.msgpack"  # dbt's saved parse, in its target folder
_ahead: dict[Path, subprocess.Popen[bytes]] = {}
_ahead_lock = threading.Lock()


def parse_ahead(lake: Lake) -> bool:
    """Start dbt's parse of the project for ``lake`` in a process of its own, when the lake has
    no saved parse yet (a new lake): the build that follows (:func:`run_dbt`, which waits for
    it) then reads the saved parse instead of parsing again, and the parse ran beside the work
    before the build (a replay's days) on another core; not in a process that has loaded dbt
    already (a long-lived worker), where it would only add dbt's import. Returns whether it
    started. Its log is ``<lake>/dbt/logs/parse-ahead.log``; a parse that fails costs nothing
    but itself (the build parses in full, as it would have)."""
    if (build_dir(lake) / "target" / PARSE_FILE).is_file():
        return False
    if "dbt.cli.main" in sys.modules:  # dbt is loaded here: a process of its own would load it
        return False                   # again, costing more than the parse it moves
    key = lake.root.resolve()
    with _ahead_lock:
        if key in _ahead:
            return False
        logs = build_dir(lake) / "logs"
        logs.mkdir(parents=True, exist_ok=True)
        with open(logs / "parse-ahead.log", "wb") as out:
            _ahead[key] = subprocess.Popen(
                [sys.executable, "-m", "dbt.cli.main", *dbt_args(lake, "parse", "--quiet")],
                stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT)
    return True


def _wait_for_parse(lake: Lake, timeout: float = 600.0) -> None:
    """Wait for :func:`parse_ahead`'s process of ``lake``, if one was started (killed after
    ``timeout`` seconds: the build then parses in full)."""
    with _ahead_lock:
        process = _ahead.pop(lake.root.resolve(), None)
    if process is None:
        return
    try:
        code = process.wait(timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
        code = None
    if code != 0:
        log.warning("dbt's parse ahead of the build of %s ended with %s (see %s): the build "
                    "parses the project itself", lake.root, code,
                    build_dir(lake) / "logs" / "parse-ahead.log")


def invoke_build(invoke: Invoke, args: list[str], what: str = "dbt build") -> BuildResult:
    """Run one dbt build (``args`` from :func:`dbt_args`) and its nodes' results; a run that
    raised, or a node that errored or failed, is a :class:`MartsError` naming ``what`` and the
    first failed nodes (nothing is published then)."""
    t0 = time.perf_counter()
    try:
        result = invoke(args)
    except Exception as exc:  # prefect-dbt raises on a failed node
        raise MartsError(f"{what} failed: {exc}") from exc
    outcome = BuildResult(_nodes(result), time.perf_counter() - t0)
    failed = [n for n in outcome.nodes if n.status in ("error", "fail")]
    if failed or not getattr(result, "success", False):
        shown = "; ".join(f"{n.kind} {n.name}: {n.status} ({(n.message or '').strip()[:200]})"
                          for n in failed[:5])
        why = shown or f"{getattr(result, 'exception', None)}"
        raise MartsError(f"{what} failed, nothing published: {why}")
    return outcome


def run_dbt(lake: Lake, invoke: Invoke | None = None, *extra: str) -> BuildResult:
    """``dbt build`` the marts of ``lake``; :class:`MartsError` names what failed."""
    invoke = invoke or dbt_invoke()
    try:
        gathered = gather(Ledger(lake), lake.root)  # the new records' rows, copied once
    except BrokenChain as exc:
        raise MartsError(f"the ledger is damaged, nothing published: {exc} (arena season "
                         "verify tells how to restore it)") from exc
    if gathered.rebuilt:
        log.warning("the ledger's tables for dbt were gathered again: %s", gathered.rebuilt)
    _readable_storage(build_dir(lake) / WAREHOUSE)
    snapshot_market(lake)
    _wait_for_parse(lake)
    # the signal server's models read its own store, a league's its seasons: never a season's
    return invoke_build(invoke, dbt_args(lake, "build", "--exclude", f"tag:{SIGNALS_TAG}",
                                         "tag:league", *extra))


def open_built(database: Path) -> Any:
    """A read-write connection to a database dbt built, with the configuration dbt's own
    in-process connection has (DuckDB refuses a second one with another configuration)."""
    return duckdb.connect(str(database),
                          config={"storage_compatibility_version": WAREHOUSE_STORAGE})


def storage_number(path: Path) -> int | None:
    """The storage version number in a DuckDB file's header (None: not a DuckDB file)."""
    with open(path, "rb") as f:
        head = f.read(20)
    return int.from_bytes(head[12:20], "little") if head[8:12] == b"DUCK" else None


def _readable_storage(database: Path) -> None:
    """Remove dbt's database when its storage is not :data:`WAREHOUSE_STORAGE` (one written
    before the setting, by DuckDB 2's default): the build about to run makes it whole again, in
    the storage analysts' tools read."""
    if not database.is_file() or storage_number(database) == WAREHOUSE_STORAGE_NUMBER:
        return
    log.info("%s is in another DuckDB storage than %s: built anew", database, WAREHOUSE_STORAGE)
    for path in (database, database.with_name(database.name + ".wal")):
        path.unlink(missing_ok=True)


def publish(lake: Lake, marts: Sequence[str] = MARTS) -> tuple[Path, Path]:
    """Publish the built database as ``<lake>/warehouse.duckdb`` and the marts (schema
    :data:`MARTS_SCHEMA`) as Parquet. A database built before the marts had their schema also
    holds its old copies in ``main``, which no build refreshes any more: they are dropped first,
    so a query that does not name the schema fails instead of reading a stale table."""
    source = build_dir(lake) / "warehouse.duckdb"
    if not source.is_file():
        raise MartsError(f"{source} does not exist: build the marts first")
    token = f"{os.getpid()}.{uuid.uuid4().hex[:8]}"
    parquet_dir = lake.root / f".marts.{token}"
    parquet_dir.mkdir(parents=True)
    try:
        # no read_only: dbt's in-process handle on the same file may still be open
        with open_built(source) as con:
            _drop_stale_marts(con, marts)
            con.execute("checkpoint")  # everything in the file itself before it is copied
            for mart in marts:
                target = str(parquet_dir / f"{mart}.parquet").replace("'", "''")
                con.execute(f"copy (select * from {MARTS_SCHEMA}.{mart}) to '{target}' "
                            "(format parquet, compression zstd)")
        copy = lake.root / f".warehouse.{token}.duckdb"
        shutil.copyfile(source, copy)
        digests = {"marts": {f"{m}.parquet": file_sha256(parquet_dir / f"{m}.parquet")
                             for m in marts}, "warehouse": file_sha256(copy)}
        (parquet_dir / DIGESTS).write_text(sealed_json(digests), encoding="utf-8")
        swap_dir(parquet_dir, lake.root / "marts")  # the marts and the digests, at once
        os.replace(copy, lake.root / "warehouse.duckdb")  # then the warehouse they name
    except BaseException:
        shutil.rmtree(parquet_dir, ignore_errors=True)
        for leftover in lake.root.glob(f".warehouse.{token}.duckdb"):
            leftover.unlink()
        raise
    return lake.root / "warehouse.duckdb", lake.root / "marts"


@dataclass(frozen=True)
class Published:
    """What :func:`check_published` found: the files checked, each problem (one line naming
    the file), what was healed, and whether the publication carries digests at all."""

    files: int = 0
    problems: tuple[str, ...] = ()
    healed: tuple[str, ...] = ()
    sealed: bool = True


def _digests(folder: Path) -> dict[str, Any] | None:
    """A publication's digests (None: it has none, or they cannot be read)."""
    try:
        return json.loads((folder / DIGESTS).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def check_published(lake: Lake) -> Published:
    """The published marts and warehouse against the digests their publication recorded
    (:data:`DIGESTS`); a warehouse left one publication behind (see the module docstring) is
    copied again from dbt's database when that still hashes as the marts say."""
    folder = lake.root / "marts"
    if not (folder / DIGESTS).is_file():  # nothing published, or published before digests
        return Published(sealed=not folder.exists() and not (lake.root / WAREHOUSE).exists())
    seal = check_sealed(folder / DIGESTS)
    digests = _digests(folder)
    if seal.problem is not None or digests is None:
        return Published(1, (seal.problem or f"{folder / DIGESTS} cannot be read",))
    problems = [p for name, digest in sorted(digests["marts"].items())
                if (p := _file_problem(folder / name, digest)) is not None]
    healed, warehouse = _check_warehouse(lake, str(digests["warehouse"]))
    problems += [warehouse] if warehouse else []
    return Published(len(digests["marts"]) + 2, tuple(problems), healed)


def _file_problem(path: Path, recorded: str, what: str = "the publication") -> str | None:
    try:
        actual = file_sha256(path)
    except FileNotFoundError:
        return f"{path} is missing (published with {what})"
    except OSError as exc:
        return f"{path} cannot be read: {exc.strerror or exc}"
    if actual != recorded:
        return (f"{path} has changed since it was published (its SHA-256 is {actual[:12]}..., "
                f"{what} recorded {recorded[:12]}...)")
    return None


def _check_warehouse(lake: Lake, recorded: str) -> tuple[tuple[str, ...], str | None]:
    """(what was healed, the warehouse's problem or None)."""
    path = lake.root / WAREHOUSE
    problem = _file_problem(path, recorded)
    if problem is None:
        return (), None
    previous = _previous_digests(lake.root / "marts")
    if previous is None or _file_problem(path, str(previous.get("warehouse"))) is not None:
        return (), problem
    built = build_dir(lake) / WAREHOUSE
    copy = lake.root / f".warehouse.{os.getpid()}.{uuid.uuid4().hex[:8]}.duckdb"
    try:
        if _file_problem(built, recorded) is None:
            shutil.copyfile(built, copy)
            if _file_problem(copy, recorded) is None:
                os.replace(copy, path)
                return (f"{path} was the previous publication's (a publication stopped before "
                        "replacing it): copied again from dbt's database, as the marts name "
                        "it",), None
    except OSError as exc:  # a lake this user cannot write: named below
        log.warning("the warehouse of %s is not copied again: %s", lake.root, exc)
    finally:
        copy.unlink(missing_ok=True)
    return (), (f"{path} is the previous publication's (a publication stopped before replacing "
                "it; nothing was lost)")


def _previous_digests(marts: Path) -> dict[str, Any] | None:
    """The digests of the publication before the current one (kept beside it by the swap)."""
    try:
        current = marts.resolve().name
    except OSError:
        return None
    older = [v for v in sorted(marts.parent.glob(f".{marts.name}.v-*")) if v.name != current]
    return _digests(older[-1]) if older else None


def _drop_stale_marts(con: Any, marts: Sequence[str]) -> None:
    """Drop ``main.<mart>`` where ``marts.<mart>`` exists too: the table an older build left
    in ``main`` (the marts' schema before they had one of their own)."""
    both = con.execute(
        "select table_name from duckdb_tables() where database_name = current_database() "
        "and schema_name = 'main' and table_name in (select table_name from duckdb_tables() "
        "where database_name = current_database() and schema_name = ?)",
        [MARTS_SCHEMA]).fetchall()
    for (name,) in both:
        if name in marts:
            log.warning("dropping main.%s, left by a build before the marts had their schema "
                        "(%s.%s)", name, MARTS_SCHEMA, name)
            con.execute(f'drop table main."{name}"')


def build_marts(lake: Lake, invoke: Invoke | None = None, *, quiet: bool = False,
                runner: Runner = INLINE) -> BuildResult:
    """Build (:func:`run_dbt`: ``invoke`` runs dbt, and prefect-dbt's runner makes every dbt node
    a task of its own) and publish (:func:`publish`, a step of ``runner``) the marts of ``lake``;
    ``quiet`` keeps dbt's own log off the console (errors still raise)."""
    result = run_dbt(lake, invoke, *(["--quiet"] if quiet else []))
    result.warehouse, result.marts = runner.run(publish, lake)
    return result


def generate_docs(lake: Lake, invoke: Invoke | None = None) -> Path:
    """``dbt docs generate --static`` over the marts built in ``lake`` (their columns come from
    dbt's database there): one self-contained HTML file, ``<lake>/dbt/target/static_index.html``,
    opening on the project's overview (``dbt_project/models/overview.md``), with the models,
    their descriptions and tests, the exposures (the reports and the site that read the marts)
    and the lineage graph; the manifest beside it, ``<lake>/dbt/target/manifest.json``. Nothing
    is written into the dbt project."""
    if not (build_dir(lake) / "warehouse.duckdb").is_file():
        raise MartsError(f"{build_dir(lake) / 'warehouse.duckdb'} does not exist: build the marts "
                         "first (make run)")
    invoke = invoke or dbt_invoke()
    snapshot_market(lake)
    # a season's models only: the signal server's and the league's are built elsewhere
    result = invoke(dbt_args(lake, "docs generate", "--static", "--quiet", "--exclude",
                             f"tag:{SIGNALS_TAG}", "tag:league"))
    page = build_dir(lake) / "target" / "static_index.html"
    if not getattr(result, "success", False) or not page.is_file():
        raise MartsError(f"dbt docs generate failed: {getattr(result, 'exception', None)}")
    return page
