"""Profile-guided builds: instrumented PGO (gcc, clang, rustc), AutoFDO (where LBR
exists), LTO and BOLT for make, cmake and cargo projects — each variant built from a
clean copy, checked for correct output, and measured against the default."""

from __future__ import annotations

from hone.build.pipeline import PgoRun, latest_result, load_result
from hone.build.plan import BuildPlan
from hone.build.recipe import Recipe, parse_mode, parse_modes
from hone.build.scenario import Scenario, scenario_name

__all__ = ["BuildPlan", "PgoRun", "Recipe", "Scenario", "latest_result", "load_result", "parse_mode", "parse_modes",
           "scenario_name"]
