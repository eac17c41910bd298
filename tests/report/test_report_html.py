"""The study HTML report renders in headless Chromium: no JS errors, plots drawn."""

from __future__ import annotations

import json
import re
import shutil
import tempfile
from pathlib import Path

import pytest

from hone.core.process import run_process
from tests.tune.conftest import write_workload

CHROMIUM = shutil.which("chromium")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--hide-scrollbars", "--virtual-time-budget=15000"]
# Recorded on <html> by any uncaught error or console.error, read back from the dumped DOM.
HOOK = ("<script>window.__e=[];function __r(m){window.__e.push(String(m));"
        "document.documentElement.setAttribute('data-js-errors',JSON.stringify(window.__e));}"
        "window.addEventListener('error',function(e){__r(e.message)});"
        "var __ce=console.error;"
        "console.error=function(){__r([].join.call(arguments,' '));__ce.apply(console,arguments)};"
        "</script>")


def _chromium(args: list[str]) -> str:
    with tempfile.TemporaryDirectory(prefix="hone-chromium-") as profile:
        res = run_process([CHROMIUM, *FLAGS, f"--user-data-dir={profile}", *args], timeout=120)
    assert res.returncode == 0, res.stderr[-2000:]
    return res.stdout


@pytest.mark.integration
@pytest.mark.skipif(CHROMIUM is None, reason="Debian chromium not installed (deps/apt-packages.txt)")
def test_study_report_renders_in_headless_chromium(hone, tmp_path, monkeypatch):
    monkeypatch.setenv("HONE_TEST_LOG", str(tmp_path / "runs.log"))  # what tests/tune's `workload` fixture does
    spec = write_workload(tmp_path, trials=6)
    res = hone("tune", spec, "--study", "html", "--json", tmp_path / "r.json")
    assert res.code == 0, res.err + res.out
    report = tmp_path / "report.html"
    res = hone("report", "html", "--html", report)  # by study name, default storage
    assert res.code == 0, res.err + res.out
    page = report.read_text()
    assert "<script src=" not in page and "<link" not in page  # self-contained: plotly.js inline
    res = hone("report", tmp_path / "r.json", "--html", tmp_path / "from-result.html")
    assert res.code == 0, res.err + res.out

    hooked = tmp_path / "hooked.html"
    hooked.write_text(page.replace("<head>", "<head>" + HOOK, 1))
    dom = _chromium(["--dump-dom", hooked.as_uri()])
    errors = re.search(r'data-js-errors="([^"]*)"', dom)
    assert errors is None, json.loads(errors.group(1).replace("&quot;", '"'))
    # plotly drew every figure: one .plot-container with an SVG per plot div
    n_divs = len(re.findall(r'<div id="plot-\d+"', page))
    assert n_divs >= 5  # confirmation CI, history, parallel coordinates, slices, importances
    assert dom.count('class="plot-container plotly"') == n_divs
    assert dom.count('class="main-svg"') >= n_divs
    assert 'id="trials"' in dom and "Verdict: better" in dom  # a score: better, not faster

    shot = Path(__file__).resolve().parents[2] / "build" / "tune-report.png"
    shot.parent.mkdir(exist_ok=True)
    _chromium([f"--screenshot={shot}", "--window-size=1300,2600", report.as_uri()])
    assert shot.stat().st_size > 20_000


def test_the_report_shows_the_importances_the_tune_computed_over_the_same_trials():
    import optuna
    from optuna.distributions import IntDistribution
    from optuna.trial import create_trial

    from hone.report.html import _figures

    space = {"a": IntDistribution(0, 9), "b": IntDistribution(0, 9)}
    study = optuna.create_study(direction="maximize")
    for i in range(8):
        p = {"a": i, "b": (3 * i) % 10}
        study.add_trial(create_trial(params=p, distributions=space, value=float(p["a"])))

    def shown(doc):
        (title, fig), = [(t, f) for t, f in _figures(study, doc) if t.startswith("Knob importances")]
        # 8 trials cannot rank 2 knobs reliably: the title says so
        assert title == "Knob importances (fANOVA over 8 trials, fewer than 20 per knob: a rough guide, not a ranking)"
        return dict(zip(fig.data[0].y, fig.data[0].x, strict=True))

    stored = {"b": 0.6, "a": 0.4}  # not what fANOVA finds here (a alone decides the value)
    assert shown({"importances": stored, "trials": 8}) == pytest.approx(stored)
    # a study with trials the stored figures did not see: computed again
    computed = shown({"importances": stored, "trials": 7})
    assert computed["a"] > 0.9
