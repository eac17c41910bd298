"""What every exporter shares: reading a result file and formatting numbers.

A result is the versioned JSON dict a measuring verb writes (``format`` names it, e.g.
``hone-compare/1``). Exporters take that dict and return text, so ``hone report`` can
render any export again without re-running anything.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from hone.core.errors import HoneError
from hone.core.metrics import metric_value


def load_result(path: str | Path) -> dict[str, Any]:
    """Read a result JSON file; HoneError if it is missing, not JSON or has no format."""
    p = Path(path)
    try:
        data = json.loads(p.read_text())
    except FileNotFoundError:
        raise HoneError(f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise HoneError(f"{path}: cannot read: {exc}") from None
    except json.JSONDecodeError as exc:
        raise HoneError(f"{path}:{exc.lineno}: not JSON: {exc.msg}") from None
    if not isinstance(data, dict) or not isinstance(data.get("format"), str):
        raise HoneError(f"{path}: not a hone result (no \"format\" field)")
    return data


def format_family(data: dict[str, Any]) -> tuple[str, int]:
    """``"hone-compare/1"`` → ``("hone-compare", 1)``."""
    name, _, version = str(data.get("format", "")).partition("/")
    try:
        return name, int(version)
    except ValueError:
        return name, 0


def write_text(path: str, text: str) -> None:
    """Write ``text`` to ``path``; ``-`` means stdout."""
    if path == "-":
        print(text, end="" if text.endswith("\n") else "\n")
    else:
        try:
            Path(path).write_text(text if text.endswith("\n") else text + "\n")
        except OSError as exc:
            raise HoneError(f"cannot write {path}: {exc.strerror}") from None


def num(value: float | None, digits: int = 2) -> str:
    """Fixed-point number, ``nan``/``inf`` spelled out, thousands not separated."""
    # JSON writes NaN as null: render both the same so a re-render matches the original.
    if value is None or math.isnan(value):
        return "nan"
    if math.isinf(value):
        return "∞" if value > 0 else "-∞"
    return f"{value:.{digits}f}"


def ablation_recommendation(ablation: dict[str, Any]) -> str:
    """Which configuration a tune result's ablation recommends, and why (every view says it alike)."""
    chosen = "the minimal configuration" if ablation.get("recommended") == "minimal" else "the winner whole"
    return f"{chosen} — {ablation.get('why')}"


def ablation_rounds(ablation: dict[str, Any]) -> str:
    """The ablation's rounds as said in a heading: "6 interleaved rounds", "1 round"."""
    n = ablation.get("rounds")
    return "1 round" if n == 1 else f"{n} interleaved rounds"


def settle_plan(settle: object) -> str | None:
    """A result's ``settle`` in words: whose changes, the looks, their runs and time; None when
    there is no command to run."""
    from hone.core.durations import format_duration

    if not isinstance(settle, dict) or not settle.get("command"):
        return None
    r, most = settle.get("rounds"), settle.get("max_rounds")
    first_s, most_s = settle.get("first_look_s"), settle.get("max_s")
    first = f", about {format_duration(first_s)}" if isinstance(first_s, int | float) else ""
    last = f", about {format_duration(most_s)}," if isinstance(most_s, int | float) else ""
    return (f"{settle.get('candidate')}'s changes against the machine as it is: first look after {r} rounds, "
            f"{2 * r if isinstance(r, int) else '?'} runs{first}; up to {most} rounds{last} while undecided")


def detectable_note(doc: dict[str, Any]) -> str | None:
    """A tune result's ``detectable_pct`` in words (shown beside the settle command); None when
    it is absent or not a finite number."""
    value = doc.get("detectable_pct")
    if not isinstance(value, int | float) or not math.isfinite(value):
        return None
    note = f"at the baseline's noise this confirmation showed a gain of about {value:.0f}% or more 8 times in 10"
    upper = doc.get("detectable_pct_upper")
    if isinstance(upper, int | float) and math.isfinite(upper) and upper > value:
        note += f"; about {upper:.0f}% at the most noise the baseline's few runs do not rule out"
    return note


def pct(value: float | None, digits: int = 2, sign: bool = False) -> str:
    """A value already in % as ``"+1.23%"`` (``sign``) or ``"1.23%"``."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "nan"
    if math.isinf(value):
        return "∞"
    return f"{value:+.{digits}f}%" if sign else f"{value:.{digits}f}%"


def display_scale(unit: str, values: list[float]) -> tuple[float, str]:
    """Seconds shown as ms when the numbers are small: (factor, unit)."""
    finite = [abs(v) for v in values if math.isfinite(v)]
    if unit == "s" and finite and max(finite) < 1.0:
        return 1000.0, "ms"
    return 1.0, unit


def mde_text(value: float | None) -> str:
    """Minimal detectable effect in %; null in JSON only ever stands for ∞ (too few rounds)."""
    return "±∞" if value is None or math.isinf(value) else f"±{pct(value)}"


def row_label(data: dict[str, Any], row: dict[str, Any]) -> str:
    sweep = data.get("sweep")
    return f"{sweep['name']}={row['sweep_value']}" if sweep else ""


def ci_text(c: dict[str, Any]) -> str:
    lo, hi = c["ci_pct"]
    return f"[{pct(lo, sign=True)}, {pct(hi, sign=True)}]"


def p_text(p: float) -> str:
    if p != p:
        return "nan"
    return f"{p:.2g}" if p < 0.001 else f"{p:.3f}"


def sweep_rows(data: dict[str, Any]) -> list[dict[str, Any]]:
    """The glibc concurrency sweep table (docs/seed-formats.md): one line per sweep value and
    non-reference variant, with both means (raw units), the speed-up (reference/variant,
    goal-aware) and the comparison."""
    ref = data["reference"]
    out = []
    for row in data["rows"]:
        rs = row["summaries"].get(ref) or {}
        for name, c in row["comparisons"].items():
            vs = row["summaries"].get(name) or {}
            ratio = c.get("ratio")
            speedup = math.nan
            if ratio not in (None, 0) and ratio == ratio:
                speedup = 1 / ratio if data["goal"] == "minimize" else ratio
            out.append({"value": row["sweep_value"], "variant": name, "ref_mean": rs.get("mean"),
                        "mean": vs.get("mean"), "speedup": speedup, "comparison": c})
    return out


_METHOD_TEXT = {
    "median": "median of per-round ratios, exact order-statistic CI, sign test p",
    "welsch": "Welsch M-estimate of per-round ratios, sign-flip randomization test p and the CI inverted from it",
    "trimmed": "20% trimmed geometric mean of per-round ratios, BCa bootstrap CI, Wilcoxon signed-rank p",
    "mean": "geometric mean of per-round ratios, BCa bootstrap CI, Wilcoxon signed-rank p",
}


def ratio_method_text(data: dict[str, Any]) -> str:
    """How the ratios of a compare result were estimated, from each comparison's
    ``estimator`` (what ``auto`` resolved to), e.g. for the footer of a table."""
    used: dict[str, list[str]] = {}
    for row in data.get("rows", []):
        for name, c in row.get("comparisons", {}).items():
            est = c.get("estimator") or data.get("estimator") or "mean"
            label = name if row.get("sweep_value") is None else f"{name} @ {row['sweep_value']}"
            used.setdefault(est, []).append(label)
    if not used:
        return _METHOD_TEXT.get(str(data.get("estimator")), _METHOD_TEXT["mean"])
    auto = data.get("estimator") == "auto"
    if len(used) == 1:
        (est,) = used
        return _METHOD_TEXT.get(est, est) + (" (auto: heavy-tailed rounds)" if auto and est == "welsch" else "")
    return "; ".join(f"{', '.join(names)}: {_METHOD_TEXT.get(est, est)}" for est, names in used.items()) + (
        " (auto: Welsch where the rounds' tails are heavy)" if auto else "")


def ci_label(data: dict[str, Any], row: dict[str, Any] | None = None) -> str:
    """The CI column's name: its level, which is that of the row's last look when the
    comparison looked more than once (``98.7% CI``), else 1 − alpha (``95% CI``)."""
    looks = (row or {}).get("looks") or []
    alpha = looks[-1]["alpha"] if looks else data["alpha"]
    return ci_name(1 - alpha)


def ci_name(confidence: float | None) -> str:
    """A CI's name by its level (a fraction; 0.95 when unknown): "95% CI", "97.5% CI"."""
    if confidence == 1.0:
        return "exact"  # runs that repeat identically: the change itself, no interval (hone.stats.ranksum)
    level = 100 * (confidence if confidence is not None and math.isfinite(confidence) else 0.95)
    return f"{level:.0f}% CI" if abs(level - round(level)) < 0.05 else f"{level:.1f}% CI"


def ci_label_rows(data: dict[str, Any]) -> str:
    """The CI column's name for a table of every row: one level when all rows share it."""
    labels = {ci_label(data, row) for row in data.get("rows") or []} or {ci_label(data)}
    return labels.pop() if len(labels) == 1 else "CI (level of each row's last look)"


def bench_name(data: dict[str, Any], row: dict[str, Any], name: str) -> str:
    """A variant's name for tools that key results by one string (Bencher, github-action-
    benchmark): with a sweep the value too, ``new (n=20)``, so each value is its own series."""
    label = row_label(data, row)
    return f"{name} ({label})" if label else name


def ok_runs(data: dict[str, Any], row: dict[str, Any], name: str) -> list[tuple[dict[str, Any], float]]:
    """A variant's successful runs of one row with their value of the compared metric
    (the runs its summary was computed from)."""
    # Imported here, as in markdown.py: the compare module brings the runners with it.
    runs = next((v["runs"] for v in row["variants"] if v["name"] == name), [])
    pairs = [(r, metric_value(r, data["metric"])) for r in runs]
    return [(r, x) for r, x in pairs if math.isfinite(x)]


def judged_figure(mode: str, n_metrics: int, alone: str | None) -> str:
    """The figure a confirmation's % change is of, in words ("" for one metric)."""
    if mode != "weighted":
        return ""
    if alone:
        return f"{alone} alone: a run had a metric ≤ 0"
    return f"the weighted geometric mean of the {n_metrics} metrics"
