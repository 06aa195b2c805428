"""Package attributes imported on first use (PEP 562), so that importing a package does not
import its heavy dependencies (pandas, matplotlib) before a name that needs them is used."""

from __future__ import annotations

import importlib


def lazy_exports(package: str, exports: dict[str, str]):
    """``__getattr__`` and ``__dir__`` for ``package``: ``exports`` maps each public name to
    the submodule that defines it."""
    def __getattr__(name: str):
        if name not in exports:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(f"{package}.{exports[name]}"), name)

    def __dir__():
        return sorted(exports)

    return __getattr__, __dir__
