"""Prometheus's HTTP API answers, as both stores give them (the in-cluster Prometheus, an AMP workspace).

A module of its own so that the AMP seam (`amp`) and the samples check (`samples`) share it without importing
each other.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["QueryError", "prometheus_answer"]


class QueryError(Exception):
    """The store refused or failed the query: the message says which (HTTP status, Prometheus's `error`)."""


def prometheus_answer(text: str) -> list[dict[str, Any]]:
    """The result vector of a Prometheus API answer; `QueryError` naming Prometheus's error otherwise."""
    try:
        doc = json.loads(text)
    except ValueError:
        raise QueryError(f"not a Prometheus API answer: {text[:200]!r}") from None
    if not isinstance(doc, dict):
        raise QueryError(f"not a Prometheus API answer: {text[:200]!r}")
    if doc.get("status") != "success":
        raise QueryError(f"Prometheus answered {doc.get('errorType', 'an error')}: {doc.get('error', text[:200])}")
    data = doc.get("data")
    return list(data.get("result") or []) if isinstance(data, dict) else []
