"""Which catalogue is active: the built-in one, or a user's ``Catalogue`` entered with ``with``.

A user's catalogue keeps its own formulas, symbols, sources and model presets (as pint keeps units in a
``UnitRegistry`` the user owns). While one is active (``with catalogue:``, or inside its own methods), lookups
of a symbol, a source or a preset search it first, then its parents, then the built-in tables; registrations
go to it. The state is a ``ContextVar``: threads and asyncio tasks each see their own.
"""

from __future__ import annotations

from contextvars import ContextVar, Token
from typing import Iterator, Protocol


class Scope(Protocol):
    """What a lookup needs of a user catalogue: its own tables and its parent."""

    parent: "Scope | None"
    symbols: dict
    works: dict
    presets: dict


_ACTIVE: ContextVar[Scope | None] = ContextVar("llm_formulas_catalogue", default=None)


def active() -> Scope | None:
    """The innermost active user catalogue, or None when only the built-in one is."""
    return _ACTIVE.get()


def enter(scope: Scope | None) -> Token:
    """Make ``scope`` the active catalogue (None: the built-in one); ``leave`` undoes it."""
    return _ACTIVE.set(scope)


def leave(token: Token) -> None:
    _ACTIVE.reset(token)


def chain(start: Scope | None = None) -> Iterator[Scope]:
    """The active user catalogue (or ``start``) and its parents, innermost first; the built-in one is not in it."""
    scope = active() if start is None else start
    while scope is not None:
        yield scope
        scope = scope.parent


def find(table: str, key: str) -> object | None:
    """The first entry ``key`` of ``table`` ("symbols", "works", "presets") along the active chain."""
    for scope in chain():
        entry = getattr(scope, table).get(key)
        if entry is not None:
            return entry
    return None
