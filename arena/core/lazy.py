"""Heavy libraries imported on first use, so that a command or a job starts without them.

``pd = lazy_import("pandas")`` (after a module's imports) binds ``pd`` to a stand-in; the first
attribute read (``pd.Timestamp``) imports pandas and rebinds ``pd`` in that module to pandas
itself, so every later use is an ordinary module attribute, and a test patching
``pyarrow.parquet.write_table`` reaches the product's calls. Importing a job thus costs the
arena's own modules and a few light libraries (pydantic, filelock, PyYAML):
``tests/app/test_startup.py`` checks that none loads pandas, numpy, pyarrow, matplotlib, ...;
``benchmarks/startup.py`` measures it.

The rule that keeps a library lazy: nothing that runs at import touches it. With
``from __future__ import annotations`` the annotations are never evaluated; a module-level
constant built by the library (a ``pd.Timedelta``, a ``pa.schema``), a default argument, a
class attribute, a pydantic field of its type or an ``isinstance`` at import would load it at
once. Such a constant is a standard-library value the library accepts (``datetime.timedelta``),
or it is built on first use (:class:`LazyMapping`, a cached function).
"""

from __future__ import annotations

import importlib
import sys
import threading
import types
from collections.abc import Callable, Iterator, Mapping
from typing import Any, TypeVar

K = TypeVar("K")
V = TypeVar("V")


class _LazyModule(types.ModuleType):
    """A module not imported yet: the first attribute read imports it and rebinds the names
    of the importing module that hold this stand-in."""

    def __getattr__(self, attr: str) -> Any:
        module = importlib.import_module(self.__name__)
        home = self.__dict__["_home"]
        for key, value in list(home.items()):
            if value is self:
                home[key] = module
        return getattr(module, attr)

    def __repr__(self) -> str:
        return f"<module {self.__name__!r}, imported on first use>"


def lazy_import(name: str) -> types.ModuleType:
    """The module ``name`` (``"pandas"``, ``"pyarrow.parquet"``), imported when first used; the
    module itself when it is imported already. Bind the result at module level, once."""
    if name in sys.modules:
        return sys.modules[name]
    stand_in = _LazyModule(name)
    stand_in.__dict__["_home"] = sys._getframe(1).f_globals
    return stand_in


class LazyMapping(Mapping[K, V]):
    """A read-only mapping built by ``build`` on first use (a table of ``pyarrow`` schemas, say),
    once per process, whichever thread reads it first."""

    def __init__(self, build: Callable[[], Mapping[K, V]]) -> None:
        self._build: Callable[[], Mapping[K, V]] | None = build
        self._items: Mapping[K, V] = {}
        self._lock = threading.Lock()

    def _table(self) -> Mapping[K, V]:
        if self._build is not None:
            with self._lock:
                if self._build is not None:
                    self._items, self._build = dict(self._build()), None
        return self._items

    def __getitem__(self, key: K) -> V:
        return self._table()[key]

    def __iter__(self) -> Iterator[K]:
        return iter(self._table())

    def __len__(self) -> int:
        return len(self._table())

    def __repr__(self) -> str:
        return repr(self._table()) if self._build is None else "<mapping built on first use>"
