"""core.lazy: a library bound with lazy_import is imported at its first use, once, whichever
thread uses it first, and the importing module's name then holds the library itself."""

from __future__ import annotations

import sys
import textwrap
import threading

import pytest

from arena.core.lazy import LazyMapping, lazy_import

THREADS = 8


@pytest.fixture
def probe(tmp_path, monkeypatch):
    """A library nobody imported yet (``probe_lib``, counting its executions) and a module that
    binds it lazily (``probe_user``, as the arena's modules do)."""
    (tmp_path / "probe_lib.py").write_text(textwrap.dedent("""
        import builtins
        import time
        builtins.probe_executions = getattr(builtins, "probe_executions", 0) + 1
        time.sleep(0.2)  # threads using it meanwhile wait for the whole module
        def answer():
            return 42
    """))
    (tmp_path / "probe_user.py").write_text(textwrap.dedent("""
        from arena.core.lazy import lazy_import
        lib = lazy_import("probe_lib")
        def ask():
            return lib.answer()
    """))
    monkeypatch.syspath_prepend(str(tmp_path))
    import builtins
    monkeypatch.setattr(builtins, "probe_executions", 0, raising=False)
    yield
    for name in ("probe_lib", "probe_user"):
        sys.modules.pop(name, None)


def test_the_library_is_imported_at_first_use_and_the_name_rebound(probe):
    import builtins

    import probe_user

    assert "probe_lib" not in sys.modules and builtins.probe_executions == 0
    assert probe_user.ask() == 42
    assert builtins.probe_executions == 1
    assert probe_user.lib is sys.modules["probe_lib"]  # the library itself from now on
    assert probe_user.ask() == 42 and builtins.probe_executions == 1


def test_a_patch_of_the_library_reaches_the_module_that_bound_it(probe, monkeypatch):
    import probe_lib
    import probe_user

    assert probe_user.ask() == 42
    monkeypatch.setattr(probe_lib, "answer", lambda: 7)
    assert probe_user.ask() == 7


def test_threads_using_it_first_at_once_share_one_import(probe):
    import builtins

    import probe_user

    barrier = threading.Barrier(THREADS, timeout=30)
    answers, modules = [], []

    def first_use():
        barrier.wait()
        answers.append(probe_user.lib.answer())
        modules.append(sys.modules["probe_lib"])

    threads = [threading.Thread(target=first_use) for _ in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert answers == [42] * THREADS
    assert builtins.probe_executions == 1 and len({id(m) for m in modules}) == 1


def test_a_library_imported_already_is_returned_as_it_is():
    import json

    assert lazy_import("json") is json


def test_an_unknown_library_fails_at_first_use_by_its_name():
    missing = lazy_import("arena_no_such_library")
    with pytest.raises(ModuleNotFoundError, match="arena_no_such_library"):
        missing.anything  # noqa: B018


def test_a_lazy_mapping_is_built_once_at_first_use_by_any_thread():
    builds = []
    barrier = threading.Barrier(THREADS, timeout=30)

    def build():
        builds.append(1)
        return {"a": 1, "b": 2}

    table = LazyMapping(build)
    assert builds == []
    seen = []

    def read():
        barrier.wait()
        seen.append(dict(table))

    threads = [threading.Thread(target=read) for _ in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert builds == [1] and seen == [{"a": 1, "b": 2}] * THREADS
    assert table["b"] == 2 and "a" in table and len(table) == 2 and list(table.items()) == [
        ("a", 1), ("b", 2)]
    with pytest.raises(KeyError):
        table["c"]
    with pytest.raises(TypeError):
        table["c"] = 3  # type: ignore[index]
