"""Typed errors raised by market-data providers and the lake.

Adapters translate every vendor failure into one of these, so flows can decide what to retry
(transient errors only) and what to report, without knowing any vendor SDK.
"""

from __future__ import annotations

from arena.core.errors import Failed, UnusableInput


class ProviderError(Failed):
    """A provider could not deliver usable bars. Base of every provider failure."""

    transient: bool = False

    def __init__(self, message: str, *, provider: str = "", symbol: str = "") -> None:
        super().__init__(message)
        self.provider = provider
        self.symbol = symbol

    def __str__(self) -> str:
        where = "/".join(p for p in (self.provider, self.symbol) if p)
        return f"[{where}] {self.args[0]}" if where else str(self.args[0])


class NoDataError(ProviderError):
    """The vendor answered successfully but with zero usable rows (an empty "200")."""


class BlockedError(ProviderError):
    """The vendor answered with something that is not data: an HTML page, a bot wall, a geo block."""


class BadSymbolError(ProviderError):
    """The vendor does not know the symbol (delisted, misspelt, not listed on that venue)."""


class RateLimitedError(ProviderError):
    """The vendor throttled us (HTTP 429/418). Worth retrying after a pause."""

    transient = True

    def __init__(self, message: str, *, provider: str = "", symbol: str = "",
                 retry_after: float | None = None) -> None:
        super().__init__(message, provider=provider, symbol=symbol)
        self.retry_after = retry_after


class UnavailableError(ProviderError):
    """The vendor is temporarily unreachable (timeouts, HTTP 5xx). Worth retrying."""

    transient = True


class UnsupportedError(ProviderError):
    """The provider does not serve this asset class or interval. Refused, never substituted."""


def is_transient(exc: BaseException) -> bool:
    """True for failures that a retry with backoff may cure (rate limits, outages)."""
    return isinstance(exc, ProviderError) and exc.transient


class MarketError(UnusableInput):
    """A market-data location the lake cannot use (:mod:`arena.data.market_store`), or a
    market store whose files cannot be read."""


class DamagedFile(Failed):
    """A stored file that exists but cannot be read as what it should be (a truncated or
    corrupt Parquet file, a 0-byte file, bytes that do not decompress). The message names the
    file; nothing is written over it."""

    def __init__(self, path: object, problem: str) -> None:
        super().__init__(f"{path} is damaged: {problem}")
        self.path = str(path)
        self.problem = problem
