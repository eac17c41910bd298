"""``hone doctor``: profile → (flame) → rules → ranked findings → (experiments → verdicts).

The result is ``doctor.json`` (format ``hone-doctor/1``, docs/formats.md) in the output directory; the
Markdown and HTML reports are rendered from it by :mod:`hone.diagnose.report_markdown` and
:mod:`hone.diagnose.report_html`.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hone.core.errors import HoneError
from hone.diagnose.capabilities import Capabilities
from hone.diagnose.experiment import DoctorExperimentResult, run_doctor_experiment
from hone.diagnose.flame import DiffResult, FlameResult, diff_flame, record_flame
from hone.diagnose.profile import ProfileResult, profile_command
from hone.diagnose.rules import RULES, DoctorContext, Finding, Rule, Target
from hone.run.benchmark import benchmark_cwd, bind_command
from hone.run.configure import Configurator
from hone.run.metrics import extract
from hone.spec.loader import LoadedSpec
from hone.stats.paired import min_rounds_for_alpha

DOCTOR_FORMAT = "hone-doctor/1"


@dataclass
class DoctorReport:
    """Everything one doctor session found, ran and wrote (paths relative to ``out_dir``)."""

    target: Target
    caps: Capabilities
    profile: ProfileResult
    findings: list[Finding]
    not_evaluated: dict[str, dict[str, str]]
    out_dir: Path
    flame: FlameResult | None = None
    experiments: list[DoctorExperimentResult] = field(default_factory=list)
    variant_flames: dict[str, FlameResult] = field(default_factory=dict)
    diffs: dict[str, DiffResult] = field(default_factory=dict)
    rounds: int = 10
    started: float = field(default_factory=time.time)
    elapsed_s: float = 0.0
    files: dict[str, str] = field(default_factory=dict)

    def rel(self, path: Path) -> str:
        try:
            return str(path.relative_to(self.out_dir))
        except ValueError:
            return str(path)

    def to_json(self) -> dict[str, Any]:
        def flame_json(f: FlameResult) -> dict[str, Any]:
            return {"name": f.name, "kind": f.kind, "svg": self.rel(f.svg), "folded": self.rel(f.folded),
                    "speedscope": self.rel(f.speedscope), "samples": f.samples, "kernel_share": f.kernel_share,
                    "hottest": f.hottest}

        return {
            "format": DOCTOR_FORMAT,
            "command": self.target.argv,
            "spec": self.target.spec_path,
            "metric": {"name": self.target.metric, "goal": self.target.goal, "unit": self.target.unit},
            "started": self.started,
            "elapsed_s": self.elapsed_s,
            "capabilities": self.caps.to_json(),
            "profile": self.profile.to_json(),
            "findings": [f.to_json(self.target, self.rounds) for f in self.findings],
            "not_evaluated": self.not_evaluated,
            "flame": flame_json(self.flame) if self.flame else None,
            "variant_flames": {k: flame_json(f) for k, f in self.variant_flames.items()},
            "diffs": {k: {"svg": self.rel(d.svg), "svg_reverse": self.rel(d.svg_reverse),
                          "folded": self.rel(d.folded),
                          "deltas": [[x.function, x.before, x.after] for x in d.deltas[:10]]}
                      for k, d in self.diffs.items()},
            "experiments": [e.to_json() for e in self.experiments],
            "files": self.files,
        }


def target_from_spec(loaded: LoadedSpec) -> Target:
    """The spec's benchmark with its default parameters, and its first metric."""
    ctx = Configurator(loaded).apply({})  # no values: defaults only, nothing on the system changes
    bench = loaded.spec.benchmark
    argv, bound = bind_command(bench.argv(), ctx.params)
    metric = loaded.spec.metrics[0] if loaded.spec.metrics else None
    target = Target(argv, env={**bench.env, **ctx.env, **bound}, cwd=str(benchmark_cwd(loaded)), timeout=bench.timeout,
                    spec_path=str(loaded.path), template=bench.argv(),
                    param_values={k.name: [str(v) for v in k.values] for k in loaded.spec.knobs
                                  if k.kind == "param" and getattr(k, "values", None)})
    if metric is not None:
        target.spec_compares = loaded.compared_metric
        target.metric = metric.name
        target.goal = metric.goal or "minimize"
        target.unit = metric.unit or ""
        if metric.extract is not None:
            target.extract = lambda res, m=metric: extract(m, res)  # type: ignore[misc]
    return target


def evaluate_rules(ctx: DoctorContext, rules: list[Rule] | None = None) -> tuple[list[Finding],
                                                                             dict[str, dict[str, str]]]:
    """(findings ranked by score, rules not evaluated → their missing inputs and why)."""
    findings: list[Finding] = []
    not_evaluated: dict[str, dict[str, str]] = {}
    for rule in rules or RULES.values():
        if rule.unavailable(ctx):
            not_evaluated[rule.name] = rule.missing_inputs(ctx)
            continue
        finding = rule.check(ctx)
        if finding is not None:
            findings.append(finding)
    findings.sort(key=lambda f: (-f.score, f.rule))
    return findings, not_evaluated


def run_doctor(
    target: Target,
    caps: Capabilities,
    out_dir: Path,
    *,
    repeats: int = 3,
    flame: bool = True,
    run: bool = False,
    rounds: int = 10,
    seed: int = 0,
    threshold: float = 0.01,
    max_experiments: int = 3,
    flame_seconds: float = 1.0,
    log: Callable[[str], None] | None = None,
) -> DoctorReport:
    """Diagnose ``target``; with ``run`` also execute the findings' experiments and record
    a flame graph of each experiment's first candidate (plus a differential graph)."""
    say = log or (lambda _msg: None)
    started = time.time()
    out_dir.mkdir(parents=True, exist_ok=True)
    say(f"profiling {target.command_text} ({repeats} runs under perf stat)")
    profile = profile_command(target.argv, caps, repeats=repeats, timeout=target.timeout,
                              env=_env(target.env), cwd=target.cwd)
    flame_result = None
    if flame and caps.cpu_clock_sampling:
        say("recording the flame graph (perf record -F 999 -g)")
        flame_result = record_flame(target.argv, out_dir, caps, name="flame", timeout=target.timeout,
                                    env=_env(target.env), cwd=target.cwd,
                                    runs=flame_runs(profile, flame_seconds),
                                    title=f"hone doctor: {target.command_text}"[:120])
    ctx = DoctorContext(profile, caps, target, flame_result, out_dir)
    findings, not_evaluated = evaluate_rules(ctx)
    report = DoctorReport(target, caps, profile, findings, not_evaluated, out_dir, flame_result, rounds=rounds,
                          started=started)
    if run:
        if rounds < min_rounds_for_alpha(0.05):
            say(f"warning: {rounds} rounds can never reach p < 0.05 (the paired tests need "
                f"{min_rounds_for_alpha(0.05)}): every verdict will be 'inconclusive'")
        experiments = [e for f in findings for e in f.experiments][:max_experiments]
        if not experiments:
            say("no finding proposed a runnable experiment")
        for exp in experiments:
            say(f"experiment: {exp.title} ({', '.join(v.name for v in exp.variants)}; {rounds} interleaved rounds)")
            result = run_doctor_experiment(exp, target, rounds=rounds, seed=seed, threshold=threshold)
            report.experiments.append(result)
            if flame_result is not None and caps.cpu_clock_sampling:
                _flame_candidate(report, exp, target, caps, out_dir, say, flame_seconds)
    report.elapsed_s = time.time() - started
    doc = out_dir / "doctor.json"
    doc.write_text(json.dumps(report.to_json(), indent=1, default=str))
    report.files["json"] = report.rel(doc)
    return report


def _flame_candidate(report: DoctorReport, exp: Any, target: Target, caps: Capabilities, out_dir: Path,
                     say: Callable[[str], None], flame_seconds: float = 1.0) -> None:
    """Flame graph of the experiment's last (most different) variant and a diff against
    the reference flame graph."""
    variant = exp.variants[-1]
    slug = f"{exp.title}-{variant.name}".replace(" ", "-")
    say(f"recording the flame graph of {variant.name}")
    try:
        if variant.prepare:
            variant.prepare()
        fl = record_flame(variant.argv, out_dir, caps, name=f"flame-{slug}", timeout=target.timeout,
                          runs=flame_runs(report.profile, flame_seconds),
                          env=_env({**target.env, **variant.env}), cwd=variant.cwd or target.cwd,
                          title=f"{exp.title}: {variant.name}")
    except HoneError as exc:
        say(f"  could not record it: {exc.message}")
        return
    finally:
        if variant.cleanup:
            variant.cleanup()
    report.variant_flames[slug] = fl
    assert report.flame is not None
    report.diffs[slug] = diff_flame(report.flame.folded, fl.folded, out_dir, name=f"diff-{slug}",
                                    title=f"{exp.variants[0].name} → {variant.name}")


def flame_runs(profile: ProfileResult, seconds: float = 1.0, cap: int = 4) -> int:
    """How many recordings give about ``seconds`` of CPU samples (≈1000 at 999 Hz) for a
    short command; at most ``cap``."""
    cpu = (profile.value("user_s") or 0.0) + (profile.value("sys_s") or 0.0)
    return max(1, min(cap, math.ceil(seconds / cpu))) if cpu > 0 else 1


def _env(extra: dict[str, str]) -> dict[str, str] | None:
    import os

    return {**os.environ, **extra} if extra else None
