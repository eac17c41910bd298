"""What ``hone pgo`` is asked to do, from a spec's ``build:`` section or the quick form."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from hone.build.recipe import Recipe
from hone.build.scenario import Scenario
from hone.spec.loader import LoadedSpec

# Default layout perturbations for the noise floor: the same code, placed differently.
NOISE_CFLAGS = (["-falign-functions=64"], ["-falign-functions=32", "-falign-loops=32"],
                ["-falign-functions=16", "-falign-jumps=16"])
NOISE_RUSTFLAGS = (["-Cllvm-args=-align-all-functions=6"], ["-Cllvm-args=-align-all-nofallthru-blocks=5"],
                   ["-Cllvm-args=-align-all-functions=5"])


@dataclass
class BuildPlan:
    """A project, how to build it, its scenarios and the variants to try.

    ``binary`` is relative to ``project``. ``base_cflags``/``base_ldflags``/``base_rustflags``
    go into every build (the default's flags; ``-O2`` for make/cmake quick forms).
    ``rounds`` are interleaved measured rounds per evaluate scenario; ``noise_builds``
    rebuilt defaults with alignment perturbations; timeouts in seconds.
    """

    system: str
    project: Path
    binary: str
    recipes: list[Recipe]
    train: list[Scenario]
    evaluate: list[Scenario]
    build_command: list[str] | None = None
    #: Extra arguments of the configure step (autotools' ./configure, cmake -S/-B, meson setup).
    configure_args: list[str] = field(default_factory=list)
    base_cflags: list[str] = field(default_factory=lambda: ["-O2"])
    base_ldflags: list[str] = field(default_factory=list)
    base_rustflags: list[str] = field(default_factory=list)
    check: str | None = None
    rounds: int = 7
    warmup: int = 1
    noise_builds: int = 2
    counts: bool = True
    jobs: int = 2
    build_timeout: float = 1800.0
    run_timeout: float = 600.0
    threads: bool = False
    partial_training: bool = False
    name: str = ""
    workdir: Path | None = None
    keep_trees: bool = False
    seed: int = 0
    scenario_dir: Path | None = None
    #: A spec whose ``service:`` starts the program as ``{binary}``: every variant runs as that
    #: server and each scenario is its load (:mod:`hone.build.service`); compared on the spec's
    #: metrics and the server's CPU time.
    service: LoadedSpec | None = None
    #: A service's throughput metric: its CPU time is also judged per unit of it (build.cpu_per).
    cpu_per: str | None = None

    @property
    def scenario_cwd(self) -> Path:
        """Where scenarios run: the spec's directory (spec form), the current directory
        (quick form), else the project directory."""
        return self.scenario_dir or self.project

    def overlap_warning(self) -> str | None:
        """A warning when train and evaluate scenarios are the same commands."""
        same = sorted({t.command for t in self.train} & {e.command for e in self.evaluate})
        if not same:
            return None
        return ("train and evaluate scenarios are the same (" + "; ".join(same) + "): the gain measured is the gain"
                " on the training input, an upper bound for unseen inputs")
