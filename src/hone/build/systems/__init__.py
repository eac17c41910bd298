"""Build systems: one file per kind behind :class:`~hone.build.systems.base.BuildSystem`."""

from __future__ import annotations

from hone.build.systems.autotools import AutotoolsBuild
from hone.build.systems.base import BuildFlags, BuildLog, BuildSystem
from hone.build.systems.cargo import CargoBuild
from hone.build.systems.cmake import CMakeBuild
from hone.build.systems.make import CommandBuild, MakeBuild
from hone.build.systems.meson import MesonBuild

SYSTEMS: dict[str, type[BuildSystem]] = {
    "make": MakeBuild,
    "cmake": CMakeBuild,
    "cargo": CargoBuild,
    "autotools": AutotoolsBuild,
    "meson": MesonBuild,
    "command": CommandBuild,
}

__all__ = ["SYSTEMS", "AutotoolsBuild", "BuildFlags", "BuildLog", "BuildSystem", "CMakeBuild", "CargoBuild",
           "CommandBuild", "MakeBuild", "MesonBuild"]
