"""Registers the preload-aware heuristics (``flexnn``, ``no_preload``) of
:mod:`optplan.preload.flexnn`; modules here are auto-imported by the registry."""

import optplan.preload.flexnn  # noqa: F401
