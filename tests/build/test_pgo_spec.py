"""The spec's build: section and the quick form's argument checks."""

from __future__ import annotations

from pathlib import Path

import pytest

from hone.build.systems import AutotoolsBuild, BuildFlags, CMakeBuild, MesonBuild
from hone.cli._pgo import parse_scenario, plan_from_spec
from hone.core.errors import HoneError, SpecError
from hone.spec import load_spec


def _spec(tmp_path: Path, build: str) -> Path:
    p = tmp_path / "hone.yaml"
    p.write_text("benchmark: {command: 'true'}\nbuild:\n" + build)
    return p


def test_a_scenario_without_binary_fails_validation_with_its_line(tmp_path: Path) -> None:
    p = _spec(tmp_path, "  binary: prog\n  train:\n    - {command: './prog 10'}\n")
    with pytest.raises(SpecError) as exc:
        load_spec(p)
    assert "hone.yaml:" in exc.value.message and "{binary}" in exc.value.message


def test_unknown_build_keys_are_refused(tmp_path: Path) -> None:
    p = _spec(tmp_path, "  binary: prog\n  trian: []\n  train: [{command: '{binary}'}]\n")
    with pytest.raises(SpecError, match="unknown key"):
        load_spec(p)


def test_plan_from_spec_resolves_paths_and_modes(tmp_path: Path) -> None:
    (tmp_path / "proj").mkdir()
    p = _spec(tmp_path, "  dir: proj\n  binary: out/prog\n  modes: [instr-gcc+lto, bolt]\n"
                        "  train: [{command: '{binary} small', weight: 3}]\n")
    plan = plan_from_spec(str(p))
    assert plan.project == (tmp_path / "proj").resolve()
    assert [r.name for r in plan.recipes] == ["instr-gcc+lto", "bolt"]
    assert plan.train[0].weight == 3 and plan.base_cflags == ["-O2"]
    # No evaluate scenarios: the spec's benchmark is the evaluate scenario.
    assert [s.name for s in plan.evaluate] == ["benchmark"]


def test_quick_form_scenarios_take_name_and_weight() -> None:
    taken: set[str] = set()
    s = parse_scenario("@fib:2.5 {binary} fib.lua 30", taken)
    assert (s.name, s.weight, s.command) == ("fib", 2.5, "{binary} fib.lua 30")
    t = parse_scenario("{binary} bench/fib.lua 25", taken)
    assert t.name == "fib-2" and t.weight == 1.0
    with pytest.raises(HoneError):
        parse_scenario("@fib {binary} x", taken)


def test_quick_form_needs_binary_placeholder_and_one_project(hone, tmp_path: Path) -> None:
    res = hone("pgo", "--make", tmp_path, "--binary", "x", "--train", "./x 1", "--evaluate", "{binary} 2")
    assert res.code == 2 and "{binary}" in res.err
    res = hone("pgo", "--make", tmp_path, "--cargo", tmp_path, "--binary", "x")
    assert res.code == 2 and "exactly one" in res.err
    res = hone("pgo", "--make", tmp_path, "--binary", "x", "--train", "{binary}", "--evaluate", "{binary}",
               "--mode", "instr-gcc+lto-thin")
    assert res.code == 2 and "clang" in res.err


def test_configure_arguments_reach_the_configure_step_of_the_systems_that_have_one(tmp_path: Path) -> None:
    (tmp_path / "proj").mkdir()
    p = _spec(tmp_path, "  system: autotools\n  dir: proj\n  binary: objs/prog\n"
                        "  configure: [--without-pcre, '--with-cc-opt=-DX=1 -DY']\n  train: [{command: '{binary}'}]\n")
    plan = plan_from_spec(str(p))
    assert plan.configure_args == ["--without-pcre", "--with-cc-opt=-DX=1 -DY"]
    flags = BuildFlags(cc="gcc")
    tree = tmp_path / "proj"
    (tree / "configure").write_text("")
    steps = AutotoolsBuild(binary="prog", configure_args=plan.configure_args).steps(tree, flags)
    assert steps[0][0] == ["sh", "./configure", "--without-pcre", "--with-cc-opt=-DX=1 -DY"]
    cmake = CMakeBuild(binary="prog", configure_args=["-DFOO=ON"]).steps(tree, flags)[0][0]
    assert cmake[:3] == ["cmake", "-S", "."] and cmake[-1] == "-DFOO=ON"  # after hone's: a user's -D wins
    assert MesonBuild(binary="prog", configure_args=["-Dfoo=true"]).steps(tree, flags)[0][0][-1] == "-Dfoo=true"


def test_configure_arguments_are_refused_where_there_is_no_configure_step(hone, tmp_path: Path) -> None:
    p = _spec(tmp_path, "  system: make\n  binary: prog\n  configure: [--x]\n  train: [{command: '{binary}'}]\n")
    with pytest.raises(SpecError, match="configure: arguments of a configure step") as exc:
        load_spec(p)
    assert "system is make" in exc.value.message
    res = hone("pgo", "--make", tmp_path, "--binary", "prog", "--train", "{binary}", "--configure", "--x")
    assert res.code == 2 and "--configure: only --cmake, --autotools and --meson" in res.err


def test_cpu_per_names_a_metric_of_a_service_hone_starts(tmp_path: Path) -> None:
    p = tmp_path / "hone.yaml"
    head = ("benchmark: {command: 'true'}\nmetrics: [{name: rps, extract: {regex: 'r: ([0-9.]+)'}}]\n"
            "service: {start: ['{binary}'], ready: {tcp: '127.0.0.1:1'}}\n")
    p.write_text(head + "build: {binary: srv, train: [{command: 'true'}], cpu_per: tps}\n")
    with pytest.raises(SpecError, match=r"build\.cpu_per: expected the name of a throughput metric, one of rps"):
        load_spec(p)
    p.write_text(head + "build: {binary: srv, train: [{command: 'true'}], cpu_per: rps}\n")
    assert plan_from_spec(str(p)).cpu_per == "rps"
    p.write_text("benchmark: {command: '{binary}'}\nbuild: {binary: srv, train: [{command: '{binary}'}],"
                 " cpu_per: cpu_time}\n")
    with pytest.raises(SpecError, match="needs a service hone starts"):
        load_spec(p)
