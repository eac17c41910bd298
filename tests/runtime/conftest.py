"""The glibc fixtures of tests/linking/conftest.py, for the ``hone libswap`` tests here."""

from __future__ import annotations

from tests.linking.conftest import glibc231, glibc241

__all__ = ["glibc231", "glibc241"]
