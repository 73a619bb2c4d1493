"""Errors of the case layer: all are `core.errors.PontualError` (exit 2 with a hint)."""

from __future__ import annotations

from core.errors import PontualError


class CaseError(PontualError):
    """A case operation the law or the case's state does not allow (illegal transition,
    missing art. 68 §1 field, a deadline passed)."""


class AccessDenied(PontualError):
    """An account asked for something its role does not allow."""


class AccountError(PontualError):
    """An unknown account, a wrong password, a bad role or operator."""
