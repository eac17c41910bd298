"""hone's result formats: every format hone's code can write is registered, has a real sample
here and a section in docs/formats.md naming each of its fields; ``hone report`` renders every
sample in every output its kind has, and refuses what it cannot read in one line."""

from __future__ import annotations

import ast
import copy
import json
import re
import shutil
import sys
import types
from pathlib import Path
from typing import Any, Union, get_args, get_origin, get_type_hints

import pytest
from typing_extensions import is_typeddict

from hone.cli._report import HTML_KINDS
from hone.core.errors import HoneError
from hone.linking.allocators import allocator_path
from hone.report import RENDERERS
from hone.report.formats import BY_NAME, FORMATS, OLD_SPELLINGS, Format, in_todays_words, validate

REPO = Path(__file__).resolve().parents[3]
SAMPLES = Path(__file__).parent / "samples"
DOCS = REPO / "docs" / "formats.md"
# A sample's file name: the format with "/" as "-", optionally ".LABEL" for a second sample.
SAMPLE_NAME = re.compile(r"(hone-[a-z][a-z-]*)-([0-9]+)(?:\.[a-z0-9-]+)?\.json")
# What a format string looks like in hone's source (the dotted spelling included).
FORMAT_LITERAL = re.compile(r"hone[-.][a-z][a-z0-9-]*/[0-9]+")
# Export option of `hone report` for each renderer name.
OPTION = {"markdown": "--markdown", "csv": "--csv", "json": "--json", "hyperfine": "--hyperfine", "bmf": "--bmf",
          "gab": "--gab", "benchstat": "--benchstat", "summary": "--summary"}


def samples() -> list[Path]:
    return sorted(SAMPLES.glob("*.json"))


def sample_format(path: Path) -> str:
    m = SAMPLE_NAME.fullmatch(path.name)
    assert m, f"{path.name}: sample names are hone-KIND-VERSION[.LABEL].json"
    return f"{m.group(1)}/{m.group(2)}"


def load(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text())


def main_sample(fmt: Format) -> Path:
    return SAMPLES / f"hone-{fmt.kind}-{fmt.version}.json"


# ---------------------------------------------------------------- registry, samples, docs


def format_literals_in_source() -> dict[str, list[str]]:
    """Every string constant in src/hone that is a whole format name → where it is (the
    registry itself, which also lists old spellings, is left out)."""
    found: dict[str, list[str]] = {}
    src = REPO / "src" / "hone"
    for path in src.rglob("*.py"):
        if (src / "report" / "formats") in path.parents:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and FORMAT_LITERAL.fullmatch(node.value):
                found.setdefault(node.value, []).append(f"{path.relative_to(REPO)}:{node.lineno}")
    return found


def test_every_format_hone_writes_is_a_registered_current_format() -> None:
    found = format_literals_in_source()
    # The verbs' format constants: compare, tune, run, worker, pgo (+ manifest), doctor,
    # profile, capabilities, libswap (+ show). A scan that finds fewer is broken, not clean.
    assert len(found) >= 10, found
    for name, where in found.items():
        fmt = BY_NAME.get(name)
        assert fmt is not None, f"{name} ({', '.join(where)}) is not in hone.report.formats.FORMATS"
        assert fmt.current, f"{name} ({', '.join(where)}) is written but registered as read-only"
    current = {f.name for f in FORMATS if f.current}
    assert current == set(found), f"registered as written but written nowhere: {current - set(found)}"


def test_every_format_has_a_sample_of_itself() -> None:
    for fmt in FORMATS:
        path = main_sample(fmt)
        assert path.is_file(), f"no sample of {fmt.name}: make one with `{fmt.writer}` into {path}"
    for path in samples():
        data = load(path)
        assert data["format"] == sample_format(path), f"{path.name} holds {data['format']}"
        assert validate(data, path.name).name == sample_format(path)


def _section(text: str, heading: str) -> str:
    """The text under ``## `heading``` up to the next ``## ``."""
    m = re.search(rf"^## `{re.escape(heading)}`\n(.*?)(?=^## |\Z)", text, re.M | re.S)
    assert m, f"docs/formats.md has no section '## `{heading}`'"
    return m.group(1)


def _fields(schema: Any, seen: set[Any] | None = None) -> set[str]:
    """Every field name of ``schema`` and of the TypedDicts it holds, at any depth."""
    seen = set() if seen is None else seen
    if is_typeddict(schema):
        if schema in seen:
            return set()
        seen.add(schema)
        hints = get_type_hints(schema, include_extras=True)
        return set(hints) | {f for t in hints.values() for f in _fields(t, seen)}
    if get_origin(schema) in (Union, types.UnionType) or get_args(schema):
        return {f for arg in get_args(schema) for f in _fields(arg, seen)}
    return set()


def test_every_format_has_a_section_naming_each_of_its_fields() -> None:
    text = DOCS.read_text()
    shared = text[text.index("## Shared pieces"):text.index("## `hone-compare/2`")]
    for fmt in FORMATS:
        own = _section(text, fmt.name)
        # A version may be described as its differences from another version of its kind, and
        # a section may point to another format's for a part they share ("as in `hone-pgo/1`").
        elsewhere = "".join(_section(text, f.name) for f in FORMATS
                            if f.kind == fmt.kind or f"`{f.name}`" in own)
        missing = sorted(f for f in _fields(fmt.schema) if f"`{f}`" not in own + elsewhere + shared)
        assert not missing, f"docs/formats.md does not describe these fields of {fmt.name}: {missing}"
        assert f"[`{fmt.name}`](#" in text, f"{fmt.name} is missing from the table of formats"


# ---------------------------------------------------------------- hone report renders every sample


def outputs() -> list[tuple[Path, str]]:
    """(sample, output) for every output its kind has: the terminal view, every export, HTML."""
    out = []
    for path in samples():
        fmt = BY_NAME[sample_format(path)]
        kinds = ["terminal", "json", *(k for k in RENDERERS[fmt.kind] if k not in ("terminal", "json"))]
        kinds += ["html"] if fmt.kind in HTML_KINDS else []
        out += [(path, k) for k in kinds]
    return out


# A value each kind's rendering must show: the document was read, not just accepted.
SHOWS = {
    "compare": lambda d: d["reference"], "tune": lambda d: d["study"], "worker": lambda d: d["study"],
    "run": lambda d: d["spec"], "pgo": lambda d: d["best"]["reason"][:40], "pgo-manifest": lambda d: d["variant"],
    "doctor": lambda d: d["findings"][0]["title"], "profile": lambda d: next(iter(d["derived"])),
    "capabilities": lambda d: d["kernel"], "libswap": lambda d: d["label"], "libswap-show": lambda d: d["target"],
    "verify": lambda d: d["checks"][0]["knob"], "preset-verify": lambda d: d["kept"][0],
    "analyse": lambda d: d["summary"],
}


@pytest.mark.parametrize(("path", "output"), outputs(), ids=lambda v: v.name if isinstance(v, Path) else v)
def test_report_renders_every_sample_in_every_output_of_its_kind(hone, tmp_path: Path, path: Path,  # type: ignore[no-untyped-def]
                                                                 output: str) -> None:
    doc = load(path)
    fmt = BY_NAME[doc["format"]]
    copied = tmp_path / path.name  # doctor's HTML reads flame graphs next to the file: none here
    shutil.copy(path, copied)
    if output == "terminal":
        res = hone("report", copied)
        text = res.out
    elif output == "html":
        res = hone("report", copied, "--html", tmp_path / "r.html")
        text = (tmp_path / "r.html").read_text() if res.code == 0 else ""
    else:
        res = hone("report", copied, OPTION[output], "-")
        text = res.out
    assert res.code == 0 and "Traceback" not in res.err, res.err
    assert text.strip()
    if output == "json":  # the document as written, whatever its version
        again = json.loads(text)
        assert again["format"] == doc["format"] and again.keys() == doc.keys()
    elif output in ("terminal", "markdown", "html"):
        # rich wraps long lines: compare the words, not the layout
        assert " ".join(SHOWS[fmt.kind](doc).split()) in " ".join(text.replace("│", " ").split())


def test_compare_1_no_difference_reads_as_inconclusive_and_exports_as_written(hone) -> None:  # type: ignore[no-untyped-def]
    path = SAMPLES / "hone-compare-1.json"
    assert "no difference" in [c["verdict"] for r in load(path)["rows"] for c in r["comparisons"].values()]
    shown = " ".join(hone("report", path).out.replace("│", " ").split())
    assert "inconclusive (written as 'no difference': not significant)" in shown
    assert "(--max-rounds reached)" in shown or "(decisive)" in shown  # stopped, derived for version 1
    md = hone("report", path, "--markdown", "-").out
    assert "**inconclusive**" in md and "no difference**" not in md
    exported = json.loads(hone("report", path, "--json", "-").out)
    assert exported["format"] == "hone-compare/1"
    assert "no difference" in [c["verdict"] for r in exported["rows"] for c in r["comparisons"].values()]


@pytest.mark.parametrize(("sample", "where"), [
    ("hone-tune-1.json", ["best_candidate", "metrics", "score"]),
    ("hone-doctor-1.json", ["experiments", 0, "comparisons", "buf-1024"]),
    ("hone-pgo-1.json", ["variants", 2]),
])
def test_the_old_verdict_no_difference_is_shown_as_inconclusive(hone, tmp_path: Path, sample: str,  # type: ignore[no-untyped-def]
                                                                 where: list[Any]) -> None:
    doc = load(SAMPLES / sample)
    _set(doc, [*where, "verdict"], "no difference")
    _set(doc, [*where, "reason"], "not significant")
    path = tmp_path / sample
    path.write_text(json.dumps(doc))
    shown = " ".join(hone("report", path).out.replace("│", " ").split())
    # The old words may stay in the reason ("written as 'no difference': …"), never as the verdict.
    assert "inconclusive" in shown and "no difference" not in shown.replace("written as 'no difference'", "")
    assert "no difference" in hone("report", path, "--json", "-").out  # the document as written


def test_tune_1_written_before_the_new_verdicts_reads_as_inconclusive(hone, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    # A real hone-tune/1 of a hone from before faster/slower/equivalent/inconclusive: its
    # ablation says "no difference" and its comparisons lack reason, rounds_needed, estimator, …
    path = SAMPLES / "hone-tune-1.no-difference.json"
    doc = load(path)
    changes = doc["ablation"]["changes"]
    assert "no difference" in [c["verdict"] for c in changes] + [doc["ablation"]["minimal_vs_winner"]["verdict"]]
    assert "rounds_needed" not in doc["best_candidate"]["comparison"] and "keep_reason" not in doc
    assert validate(doc, path.name).name == "hone-tune/1"
    shown = BY_NAME["hone-tune/1"].for_display(doc)  # type: ignore[misc]
    ablation = shown["ablation"]
    verdicts = [c["verdict"] for c in ablation["changes"]] + [ablation["minimal_vs_winner"]["verdict"]]
    assert "no difference" not in verdicts and "inconclusive" in verdicts
    assert shown["ablation"]["minimal_vs_winner"]["reason"].startswith("written as 'no difference'")
    res = hone("report", path)
    assert res.code == 0 and doc["study"] in res.out, res.err
    res = hone("report", path, "--html", tmp_path / "r.html")
    assert res.code == 0, res.err
    assert "Verdict: better" in (tmp_path / "r.html").read_text()  # it names no unit: a score
    exported = json.loads(hone("report", path, "--json", "-").out)  # the document as written
    assert exported.keys() == doc.keys() and exported["ablation"]["minimal_vs_winner"]["verdict"] == "no difference"


def test_tune_2_is_what_tune_writes_and_has_no_old_words() -> None:
    assert BY_NAME["hone-tune/2"].current and not BY_NAME["hone-tune/1"].current
    doc = load(SAMPLES / "hone-tune-2.json")
    assert validate(doc, "hone-tune-2.json").name == "hone-tune/2"
    assert "no difference" not in json.dumps(doc)
    comparisons = [doc["best_candidate"]["comparison"], *doc["best_candidate"]["metrics"].values(),
                   *(c["comparison"] for c in doc["ablation"]["changes"])]
    assert all({"reason", "rounds_needed", "estimator", "alpha"} <= c.keys() for c in comparisons)


def test_a_stored_study_result_is_read_in_todays_words() -> None:
    old = load(SAMPLES / "hone-tune-1.json")
    old["best_candidate"]["comparison"]["verdict"] = "no difference"
    shown = in_todays_words(old)
    assert shown["best_candidate"]["comparison"]["verdict"] == "inconclusive"
    assert old["best_candidate"]["comparison"]["verdict"] == "no difference"  # a copy
    new = load(SAMPLES / "hone-tune-2.json")
    assert in_todays_words(new) is new
    assert in_todays_words(None) is None and in_todays_words({"format": "hone-flame/1"}) == {"format": "hone-flame/1"}


@pytest.mark.parametrize("kind", ["doctor", "profile", "capabilities"])
def test_old_dotted_spellings_are_read(hone, tmp_path: Path, kind: str) -> None:  # type: ignore[no-untyped-def]
    old = {v: k for k, v in OLD_SPELLINGS.items()}
    doc = load(SAMPLES / f"hone-{kind}-1.json")
    doc["format"] = old[doc["format"]]
    for nested in ("profile", "capabilities"):
        if nested in doc:
            doc[nested]["format"] = old[doc[nested]["format"]]
    path = tmp_path / "old.json"
    path.write_text(json.dumps(doc))
    assert validate(doc, str(path)).name == f"hone-{kind}/1"
    res = hone("report", path)
    assert res.code == 0, res.err
    assert " ".join(SHOWS[kind](doc).split()) in " ".join(res.out.replace("│", " ").split())


# ---------------------------------------------------------------- refusals: one line, exit 2


@pytest.mark.parametrize(("written", "expected"), [
    ("hone-compare/3", "format hone-compare/3 is not one this hone reads (it reads hone-compare/1, hone-compare/2;"
                       " a newer hone wrote it: upgrade hone)"),
    ("hone-compare/0", "format hone-compare/0 is not one this hone reads (it reads hone-compare/1, hone-compare/2)"),
    ("hone.tune/7", "format hone.tune/7 is not one this hone reads (it reads hone-tune/1, hone-tune/2; a newer"),
    ("hone-flame/1", "cannot render format 'hone-flame/1': not a hone result (this hone reads hone-compare/1, "),
])
def test_unknown_formats_and_versions_are_refused_naming_what_is_read(hone, tmp_path: Path, written: str,  # type: ignore[no-untyped-def]
                                                                      expected: str) -> None:
    doc = load(SAMPLES / "hone-compare-2.json")
    doc["format"] = written
    path = tmp_path / "r.json"
    path.write_text(json.dumps(doc))
    res = hone("report", path)
    assert res.code == 2 and res.out == ""
    assert res.err.startswith(f"hone: error: {path}: {expected}") and res.err.count("\n") == 1, res.err
    if written == "hone-flame/1":
        assert all(f.name in res.err for f in FORMATS)


def _set(doc: dict[str, Any], where: list[Any], value: Any) -> None:
    """Set (or, with ``...``, delete) the field at path ``where``."""
    *parents, last = where
    for key in parents:
        doc = doc[key]
    if value is ...:
        del doc[last]
    else:
        doc[last] = value


@pytest.mark.parametrize(("sample", "where", "value", "message"), [
    ("hone-compare-2.json", ["rows", 0, "looks", 1, "alpha"], ...,
     "not a complete hone-compare/2 result: field 'rows[0].looks[1].alpha' missing"),
    ("hone-compare-2.json", ["rows", 1, "comparisons", "best", "verdict"], "no difference",
     "not a valid hone-compare/2 result: field 'rows[1].comparisons.best.verdict': input should be 'faster', "
     "'slower', 'equivalent' or 'inconclusive', got 'no difference'"),
    ("hone-compare-1.json", ["rows", 0, "comparisons", "best", "verdict"], "equivalent",
     "not a valid hone-compare/1 result: field 'rows[0].comparisons.best.verdict': input should be 'faster', "
     "'slower', 'no difference' or 'inconclusive', got 'equivalent'"),
    ("hone-run-1.json", ["runs", 2, "wall_s"], "0.1",
     "not a valid hone-run/1 result: field 'runs[2].wall_s': input should be a valid number, got '0.1'"),
    ("hone-tune-1.json", ["ablation", "changes", 0, "kept"], 1,
     "not a valid hone-tune/1 result: field 'ablation.changes[0].kept': input should be a valid boolean, got 1"),
    ("hone-tune-2.json", ["ablation", "minimal_vs_winner", "rounds_needed"], ...,
     "not a complete hone-tune/2 result: field 'ablation.minimal_vs_winner.rounds_needed' missing"),
    ("hone-tune-2.json", ["keep_reason"], ...,
     "not a complete hone-tune/2 result: field 'keep_reason' missing"),
    ("hone-tune-2.json", ["confirmations", 0, "metrics", "score", "verdict"], "no difference",
     "not a valid hone-tune/2 result: field 'confirmations[0].metrics.score.verdict': input should be 'faster', "
     "'slower', 'equivalent' or 'inconclusive', got 'no difference'"),
    ("hone-doctor-1.json", ["profile", "runs", 0, "counters", "task-clock", "value"], ...,
     "not a complete hone-doctor/1 result: field 'profile.runs[0].counters.task-clock.value' missing"),
    ("hone-pgo-1.json", ["variants", 0, "time_ci"], [1.0],
     "not a valid hone-pgo/1 result: field 'variants[0].time_ci': list should have at least 2 items after "
     "validation, not 1, got [1.0]"),
    ("hone-libswap-1.json", ["kind"], "musl",
     "not a valid hone-libswap/1 result: field 'kind': input should be 'glibc' or 'alloc', got 'musl'"),
    ("hone-worker-1.json", ["ran"], ...,
     "not a complete hone-worker/1 result: field 'ran' missing"),
])
def test_a_missing_or_mistyped_field_is_one_line_naming_file_and_field(hone, tmp_path: Path, sample: str,  # type: ignore[no-untyped-def]
                                                                       where: list[Any], value: Any,
                                                                       message: str) -> None:
    doc = load(SAMPLES / sample)
    _set(doc, where, value)
    path = tmp_path / sample
    path.write_text(json.dumps(doc))
    res = hone("report", path, "--json", "-")
    assert res.code == 2 and res.out == "" and "Traceback" not in res.err
    assert res.err == f"hone: error: {path}: {message}\n"


def test_validation_names_the_first_problem_and_counts_the_rest() -> None:
    doc = copy.deepcopy(load(SAMPLES / "hone-worker-1.json"))
    del doc["study"]
    doc["budget"] = "3"
    with pytest.raises(HoneError) as exc:
        validate(doc, "w.json")
    assert str(exc.value) == "w.json: not a complete hone-worker/1 result: field 'study' missing (and 1 more)"


# ---------------------------------------------------------------- what the verbs write now


def _write_spec(tmp: Path) -> Path:
    (tmp / "bench.py").write_text("import sys\nx = int(sys.argv[1])\nprint(f'score: {100 + 10 * x - x * x}')\n")
    spec = tmp / "hone.yaml"
    spec.write_text(f"name: fmt\nbenchmark:\n  command: [{sys.executable}, bench.py, '{{x}}']\n  repeats: 2\n"
                    "metrics:\n  - {name: score, extract: {regex: 'score: ([0-9.]+)'}, goal: maximize}\n"
                    "knobs:\n  - {name: x, kind: param, values: [1, 3, 5], default: 1}\n")
    return spec


def test_what_the_verbs_write_now_is_the_format_they_name(hone, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    spec = _write_spec(tmp_path)
    written = {
        "compare": ("compare", "true", "sh -c :", "-r", "3", "--max-time", "0", "--export-json"),
        "run": ("run", spec, "--set", "x=3", "--json"),
        "tune": ("tune", spec, "--trials", "2", "--confirm", "0", "--json"),
        "worker": ("worker", spec, "--storage", f"sqlite:///{tmp_path / 'fleet.db'}", "--study", "s", "--trials",
                   "1", "--json"),
        "capabilities": ("doctor", "--capabilities", "--json"),
        "libswap-show": ("libswap", "show", "/bin/true", "--json"),
    }
    if allocator_path("jemalloc") is not None:
        written["libswap"] = ("libswap", "alloc", "/bin/true", "--with", "jemalloc", "--no-install", "--out",
                              tmp_path / "true-je", "--json")
    if shutil.which("perf"):
        written["profile"] = ("profile", "-r", "1", "--json", tmp_path / "profile.json", "--", "true")
        written["doctor"] = ("doctor", "-o", tmp_path / "doctor", "-r", "1", "--no-flame", "--json",
                             tmp_path / "doctor.json", "--", "true")
        written["analyse"] = ("analyse", "--json", tmp_path / "analyse.json", "--", "true")
    if shutil.which("gcc") and shutil.which("make"):
        project = tmp_path / "toy-c"
        shutil.copytree(REPO / "examples" / "pgo" / "toy-c", project)
        written["pgo"] = ("pgo", "--make", project, "--binary", "toy", "--train", "{binary} 1000", "--evaluate",
                          "{binary} 2000", "--mode", "instr-gcc", "--rounds", "2", "--noise-builds", "0",
                          "--no-counts", "--workdir", tmp_path / "pgo", "--json", tmp_path / "pgo.json")
    for kind, args in written.items():
        out = tmp_path / f"{kind}.json"
        args = args if "--" in args or kind == "pgo" else (*args, out)
        res = hone(*args, cwd=tmp_path, timeout=300)
        assert res.code == 0, f"{kind}: {res.err}"
        doc = load(out)
        assert validate(doc, str(out)).kind == kind
        assert BY_NAME[doc["format"]].current
    if "pgo" in written:
        manifest = load(tmp_path / "pgo" / "variants" / "instr-gcc" / "manifest.json")
        assert validate(manifest, "manifest.json").kind == "pgo-manifest"
