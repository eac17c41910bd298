"""Errors of the config-file formats (:mod:`hone.knobs._config_formats`); ``FileDriver``
turns them into one-line :class:`~hone.core.errors.KnobError` messages naming the file."""

from __future__ import annotations


class ConfigError(ValueError):
    """The file cannot be read in its format, or the key/value does not fit it."""


class MissingBlock(ConfigError):
    """A block or table on the key's path does not exist (reading: the key is absent)."""
