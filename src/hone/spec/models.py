"""The hone spec (``hone.yaml``) as pydantic models.

Every model forbids unknown keys: a typo must fail validation, not be silently ignored.
Validators raise ``ValueError("expected …, got …")``; :mod:`hone.spec.loader` turns that
into ``FILE:LINE: path: expected …, got …``.
"""

from __future__ import annotations

import contextvars
import math
import re
import shlex
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator, model_validator

from hone.core.durations import parse_duration
from hone.core.metrics import BUILTIN
from hone.core.shell_text import ShellTextError, rewrite, shell_script_index

Scalar = bool | int | float | str
#: name: (goal, unit) of the metrics every run has (the one table: hone.core.metrics.BUILTIN)
BUILTIN_METRICS: dict[str, tuple[str, str]] = {m.name: (m.goal, m.unit) for m in BUILTIN.values()}
_HOST = re.compile(r"(?:[A-Za-z0-9._-]+@)?(?:[A-Za-z0-9][A-Za-z0-9._-]*|\[[0-9A-Fa-f:.]+\])(?::[0-9]{1,5})?")
_SSH_OPTION = re.compile(r"[A-Za-z][A-Za-z0-9]*=[^\s]+")
PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_.-]*)\}")
# True while a spec whose service.start names {binary} is validated: its build scenarios are
# then load generators against the service, not commands that run the program.
_SCENARIOS_ARE_LOAD: contextvars.ContextVar[bool] = contextvars.ContextVar("_scenarios_are_load", default=False)


def _start_names_binary(data: Any) -> bool:
    """Whether raw spec data has a build: section and a service.start naming ``{binary}``."""
    if not isinstance(data, dict) or data.get("build") is None or not isinstance(data.get("service"), dict):
        return False
    start = data["service"].get("start")
    words = [start] if isinstance(start, str) else start if isinstance(start, list) else []
    return any("{binary}" in str(w) for w in words)
#: The longest timeout a spec may give, in seconds (one week): larger numbers overflow the
#: deadline arithmetic of the process runner and never mean what they say.
MAX_TIMEOUT_S = 7 * 24 * 3600.0


def _show(value: Any) -> str:
    """A value as the user wrote it in YAML: lists as ``[5, 1]``, strings quoted."""
    if isinstance(value, str):
        return f"'{value}'"  # as written in YAML, no Python escaping
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_show(v) for v in value) + "]"
    return str(value)


class StrictModel(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=False)


Argv = list[str] | str


def to_argv(command: Argv, shell: bool = False) -> list[str]:
    """A spec command as argv: lists stay as they are; a string is split like a shell
    would (no expansion), or run under ``sh -c`` when the spec says ``shell: true``."""
    if isinstance(command, list):
        return [str(c) for c in command]
    if shell:
        return ["sh", "-c", command]
    return shlex.split(command)


def check_name(value: str) -> str:
    """A spec or study name becomes a file name in the state directory (reports, fleet worker
    homes, A-Tune translations): it must be one safe path component. Raises ValueError."""
    if (not value or value in (".", "..") or "/" in value or len(value) > 200
            or any(ord(c) < 32 or c == "\x7f" for c in value)):
        raise ValueError(f"expected a name usable as a file name (no '/', not '.' or '..', at most 200 "
                         f"characters), got {_show(value)}")
    return value


def _check_command(value: Any) -> Any:
    if isinstance(value, str):
        try:
            parts = shlex.split(value)
        except ValueError as exc:
            raise ValueError(f"expected a command, got {_show(value)} ({exc})") from exc
        if not parts:
            raise ValueError("expected a non-empty command, got ''")
    elif isinstance(value, list):
        if not value:
            raise ValueError("expected a non-empty argv list, got []")
        for v in value:
            # YAML reads true/false/null as bool/None: str() would turn them into "True"/"None"
            if v is None or isinstance(v, bool):
                word = "null" if v is None else _show(v)
                raise ValueError(f"expected strings (quote '{word}'), got {_show(value)}")
            if not isinstance(v, str | int | float):
                raise ValueError(f"expected a list of strings, got {_show(value)}")
        return [str(v) for v in value]
    return value


# ---------------------------------------------------------------- benchmark


class Benchmark(StrictModel):
    """How to run the workload once. Times in seconds."""

    command: Argv
    shell: bool = False
    timeout: float = Field(600.0, gt=0, le=MAX_TIMEOUT_S)
    warmup: int = Field(0, ge=0)
    repeats: int = Field(1, ge=1)
    env: dict[str, str] = Field(default_factory=dict)
    cwd: str | None = None
    prepare: Argv | None = None
    cleanup: Argv | None = None

    _cmd = field_validator("command", "prepare", "cleanup", mode="before")(_check_command)

    @field_validator("env", mode="before")
    @classmethod
    def _env_strings(cls, value: Any) -> Any:
        if isinstance(value, dict):
            return {str(k): str(v).lower() if isinstance(v, bool) else str(v) for k, v in value.items()}
        return value

    def argv(self) -> list[str]:
        return to_argv(self.command, self.shell)


# ---------------------------------------------------------------- metrics


class Extract(StrictModel):
    """Exactly one way to read a number out of the benchmark's output."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    regex: str | None = None
    json_path: str | None = Field(None, alias="json")
    command: Argv | None = None
    shell: bool = False
    source: Literal["stdout", "stderr"] = "stdout"
    timeout: float = Field(30.0, gt=0, le=MAX_TIMEOUT_S)

    @field_validator("regex")
    @classmethod
    def _regex_compiles(cls, value: str | None) -> str | None:
        if value is None:
            return value
        try:
            compiled = re.compile(value, re.MULTILINE)
        except re.error as exc:
            raise ValueError(f"expected a valid regular expression, got {_show(value)} ({exc})") from exc
        if compiled.groups < 1:
            raise ValueError(f"expected a regex with one capturing group, got {_show(value)}")
        return value

    @field_validator("json_path")
    @classmethod
    def _json_path(cls, value: str | None) -> str | None:
        if value is not None and not re.fullmatch(r"\$?(\.[A-Za-z0-9_\-]+|\[\d+\]|\[\"[^\"]+\"\])*", value):
            raise ValueError(f"expected a JSON path like $.a.b[0], got {_show(value)}")
        return value

    _cmd = field_validator("command", mode="before")(_check_command)

    @model_validator(mode="after")
    def _exactly_one(self) -> Extract:
        given = [k for k in ("regex", "json_path", "command") if getattr(self, k) is not None]
        given = ["json" if k == "json_path" else k for k in given]
        if len(given) != 1:
            raise ValueError(f"expected exactly one of regex, json, command, got {given or 'none'}")
        return self

    @model_validator(mode="after")
    def _out_in_shell_text(self) -> Extract:
        # An $out the shell text cannot substitute (inside <<'EOF' or $'…') fails at load, not at a run.
        argv = to_argv(self.command, self.shell) if self.command is not None else []
        index = shell_script_index(argv)
        if index is not None:
            try:
                rewrite(argv[index], ["out"], style="dollar", what="command")
            except ShellTextError as exc:
                raise ValueError(exc.message) from None
        return self


_CONSTRAINT = re.compile(r"^\s*(<=|>=|<|>|==)\s*(-?[0-9.eE+-]+)\s*$")


class Metric(StrictModel):
    """A figure of merit. Built-in names (cpu_time, wall_time, user_time, sys_time,
    max_rss, instructions: :mod:`hone.core.metrics`) need no ``extract``."""

    name: str = Field(min_length=1)
    extract: Extract | None = None
    goal: Literal["maximize", "minimize"] | None = None
    weight: float = 1.0
    constraint: str | None = None
    unit: str | None = None

    @field_validator("constraint")
    @classmethod
    def _constraint(cls, value: str | None) -> str | None:
        if value is not None and not _CONSTRAINT.match(str(value)):
            raise ValueError(f"expected a bound like '<= 5' or '>= 1000', got {_show(value)}")
        return value

    @model_validator(mode="after")
    def _builtin_or_extract(self) -> Metric:
        if self.extract is None and self.name not in BUILTIN_METRICS:
            names = ", ".join(BUILTIN_METRICS)
            raise ValueError(f"expected an extract for metric {self.name!r} (built-in metrics: {names})")
        if self.goal is None:
            self.goal = BUILTIN_METRICS.get(self.name, ("maximize", ""))[0]  # type: ignore[assignment]
        if self.unit is None and self.name in BUILTIN_METRICS:
            self.unit = BUILTIN_METRICS[self.name][1]
        return self

    @property
    def is_builtin(self) -> bool:
        return self.extract is None

    def constraint_bound(self) -> tuple[str, float] | None:
        """``("<=", 5.0)`` for ``constraint: "<= 5"``; None without a constraint."""
        if self.constraint is None:
            return None
        m = _CONSTRAINT.match(self.constraint)
        assert m is not None
        return m.group(1), float(m.group(2))


# ---------------------------------------------------------------- knobs


class KnobBase(StrictModel):
    """The value domain every knob shares.

    ``range`` + ``type: int|float`` (optional ``step``, ``log``), or ``values`` (a list of
    numbers is ordinal: kept in order, never an unordered category), or ``type: bool``.
    """

    name: str = Field(min_length=1)
    type: Literal["int", "float", "categorical", "bool"] | None = None
    range: list[float] | None = None
    step: float | None = None
    log: bool = False
    values: list[Scalar] | None = None
    encode: list[str] | None = None
    safety: Literal["safe", "dangerous"] = "safe"
    allow_dangerous: bool = False
    #: What this knob trades for speed (e.g. durability), printed beside any recommendation
    #: or apply that sets it: text for every value, or a mapping value → text.
    risk: str | dict[str, str] | None = None
    description: str | None = None
    # Remote targets (hone.knobs.remote): set this knob over SSH on every host, journaled
    # per host. "[user@]host[:port]"; ssh_options are extra ``ssh -o Key=Value``.
    hosts: list[str] | None = None
    ssh_options: list[str] = Field(default_factory=list)

    @field_validator("hosts", mode="before")
    @classmethod
    def _hosts(cls, value: Any) -> Any:
        if value is None:
            return value
        if not isinstance(value, list) or not value:
            raise ValueError(f"expected a non-empty list of hosts, got {_show(value)}")
        for host in value:
            if not isinstance(host, str) or not _HOST.fullmatch(host):
                raise ValueError(f"expected hosts like 'node1', 'root@10.0.0.2' or 'node1:2222', got {_show(host)}")
        if len(set(value)) != len(value):
            raise ValueError(f"expected distinct hosts, got {_show(value)}")
        return value

    @field_validator("ssh_options", mode="before")
    @classmethod
    def _ssh_options(cls, value: Any) -> Any:
        if not isinstance(value, list) or not all(isinstance(o, str) and _SSH_OPTION.fullmatch(o) for o in value):
            raise ValueError(f"expected ssh options like ['Port=2222', 'IdentityFile=~/.ssh/k'], got {_show(value)}")
        return value

    @field_validator("range", mode="before")
    @classmethod
    def _range(cls, value: Any, info: ValidationInfo) -> Any:
        if value is None:
            return value
        if (
            not isinstance(value, list)
            or len(value) != 2
            or not all(isinstance(v, int | float) and not isinstance(v, bool) for v in value)
        ):
            raise ValueError(f"expected [low, high] (two numbers), got {_show(value)}")
        low, high = value
        if not low < high:
            raise ValueError(f"expected [low, high] with low < high, got {_show(value)}")
        if info.data.get("type") == "int" and not all(float(v).is_integer() for v in value):
            raise ValueError(f"expected integer bounds for type int, got {_show(value)}")
        return value

    @field_validator("step")
    @classmethod
    def _step(cls, value: float | None) -> float | None:
        if value is not None and not value > 0:
            raise ValueError(f"expected a step > 0, got {_show(value)}")
        return value

    @field_validator("values", mode="before")
    @classmethod
    def _values(cls, value: Any) -> Any:
        if value is None:
            return value
        if not isinstance(value, list) or not value:
            raise ValueError(f"expected a non-empty list of values, got {_show(value)}")
        if len({repr(v) for v in value}) != len(value):
            raise ValueError(f"expected distinct values, got {_show(value)}")
        return value

    @field_validator("encode", mode="before")
    @classmethod
    def _encode(cls, value: Any) -> Any:
        if value is not None and (not isinstance(value, list) or len(value) != 2):
            raise ValueError(f"expected [false-text, true-text], got {_show(value)}")
        return None if value is None else [str(v) for v in value]

    @model_validator(mode="after")
    def _domain(self) -> KnobBase:
        kind = getattr(self, "kind", None)
        if self.hosts and kind in ("param", "env"):
            raise ValueError(f"expected no hosts on a {kind} knob (remote targets: sysctl, sysfs, file, script)")
        if self.type is None:
            if self.values is not None:
                self.type = "categorical"
            elif self.range is not None:
                is_int = all(float(v).is_integer() for v in self.range) and (
                    self.step is None or float(self.step).is_integer()
                )
                self.type = "int" if is_int else "float"
        if self.type == "bool":
            if self.range is not None:
                raise ValueError("expected no range for a bool knob")
            return self
        if self.type in ("int", "float"):
            if self.range is None:
                raise ValueError(f"expected range: [low, high] for a {self.type} knob")
            if self.log and self.range[0] <= 0:
                raise ValueError(f"expected low > 0 with log: true, got {_show(self.range)}")
            if self.type == "int" and self.step is not None and not float(self.step).is_integer():
                raise ValueError(f"expected an integer step for type int, got {_show(self.step)}")
        elif self.type == "categorical":
            if self.values is None:
                raise ValueError("expected values: [...] for a categorical knob")
        elif self.type is None and self.values is None and self.range is None:
            # param/env/script knobs may be fixed by --set only; they still need a type
            self.type = "categorical" if self.values else None
        return self

    # -- domain helpers -------------------------------------------------------

    @property
    def ordinal(self) -> bool:
        """True when ``values`` are all numbers: the search keeps their order."""
        return self.values is not None and all(
            isinstance(v, int | float) and not isinstance(v, bool) for v in self.values
        )

    @property
    def searchable(self) -> bool:
        return self.type is not None and (self.safety == "safe" or self.allow_dangerous)

    def domain_text(self) -> str:
        if self.type == "bool":
            return "true or false"
        if self.values is not None:
            return "one of " + ", ".join(str(v) for v in self.values)
        if self.range is not None:
            lo, hi = (int(v) if self.type == "int" else v for v in self.range)
            step = f" step {self.step:g}" if self.step else ""
            word = "an integer" if self.type == "int" else "a number"
            return f"{word} in [{lo}, {hi}]{step}"
        return "any text"

    def coerce(self, value: Any) -> Scalar:
        """Check ``value`` (text from the command line or a typed value) against the
        domain and return it typed. Raises ValueError("expected …, got …")."""
        text = value if isinstance(value, str) else None
        if self.type == "bool":
            if isinstance(value, bool):
                return value
            low = str(value).strip().lower()
            if self.encode and low in (e.lower() for e in self.encode):
                return low == self.encode[1].lower()
            if low in ("1", "true", "yes", "on"):
                return True
            if low in ("0", "false", "no", "off"):
                return False
            raise ValueError(f"expected true or false, got {_show(value)}")
        if self.values is not None:
            for v in self.values:
                if v == value or str(v) == str(value):
                    return v
                if text is not None and isinstance(v, int | float) and not isinstance(v, bool):
                    try:
                        if float(text) == float(v):
                            return v
                    except ValueError:
                        pass
            raise ValueError(f"expected {self.domain_text()}, got {_show(value)}")
        if self.type in ("int", "float"):
            try:
                num = float(value)
            except (TypeError, ValueError):
                raise ValueError(f"expected {self.domain_text()}, got {_show(value)}") from None
            if self.type == "int":
                if not num.is_integer():
                    raise ValueError(f"expected {self.domain_text()}, got {_show(value)}")
                num = int(num)
            assert self.range is not None
            if not self.range[0] <= num <= self.range[1] or math.isnan(num):
                raise ValueError(f"expected {self.domain_text()}, got {_show(value)}")
            return num
        return value if isinstance(value, bool | int | float) else str(value)

    def format_value(self, value: Scalar) -> str:
        """The text written to the system (or argv/env) for ``value``."""
        if isinstance(value, bool):
            enc = self.encode or self.default_encode()
            return enc[1] if value else enc[0]
        if isinstance(value, float) and value.is_integer() and self.type == "int":
            return str(int(value))
        return str(value)

    def default_encode(self) -> list[str]:
        return ["false", "true"]


class ParamKnobSpec(KnobBase):
    """Filled into the benchmark argv where ``{name}`` appears."""

    kind: Literal["param"]
    default: Scalar | None = None


class EnvKnobSpec(KnobBase):
    """Set in the benchmark's environment as ``var`` (default: the knob name); with
    ``scope: service`` in the service's instead (a change restarts it)."""

    kind: Literal["env"]
    var: str | None = None
    default: Scalar | None = None
    scope: Literal["benchmark", "service"] = "benchmark"


def sysctl_parts(key: str) -> list[str]:
    """The path components of sysctl ``key`` under /proc/sys. sysctl(8)'s rule: the first
    separator ('.' or '/') is the separator and the other character is literal, so
    ``kernel.panic``, ``kernel/panic`` and ``/proc/sys/kernel/panic`` are one sysctl (and
    ``net.ipv4.conf.eth0/100.rp_filter`` names the ``eth0.100`` directory). Raises
    ValueError for a key that would leave /proc/sys: another absolute path, ``..``, empty parts."""
    text, sep = key, "."
    if key.startswith("/"):  # a path: only one under /proc/sys names a sysctl
        text, sep = (key[len("/proc/sys/"):] if key.startswith("/proc/sys/") else ""), "/"
    elif (first := re.search(r"[./]", key)) is not None:
        sep = first.group(0)
    parts = text.split(sep)
    if sep == ".":
        parts = [p.replace("/", ".") for p in parts]
    if not text or any(p in ("", ".", "..") for p in parts):
        raise ValueError(f"expected a sysctl name like vm.swappiness (or a path under /proc/sys, without '..'), "
                         f"got {_show(key)}")
    return parts


def sysctl_name(key: str) -> str:
    """The dotted spelling of sysctl ``key`` (``kernel/panic`` → ``kernel.panic``): its identity."""
    return ".".join(p.replace(".", "/") for p in sysctl_parts(key))


class SysctlKnobSpec(KnobBase):
    """A kernel parameter under /proc/sys; ``key`` defaults to the knob name."""

    kind: Literal["sysctl"]
    key: str | None = None

    @field_validator("key")
    @classmethod
    def _key(cls, value: str | None) -> str | None:
        if value is not None:
            sysctl_parts(value)
        return value

    @model_validator(mode="after")
    def _name_as_key(self) -> SysctlKnobSpec:
        if self.key is None:
            sysctl_parts(self.name)
        return self

    def default_encode(self) -> list[str]:
        return ["0", "1"]


class SysfsKnobSpec(KnobBase):
    """Any sysfs attribute; ``[bracketed]`` choices (THP, I/O scheduler) are understood.

    The path must be absolute and under /sys. Locally it is resolved (symlinks, ``..``) and
    must still be under /sys (:mod:`hone.knobs.sysfs`); a remote path cannot be resolved
    here, so one with ``hosts`` may not contain ``..`` at all."""

    kind: Literal["sysfs"]
    path: str

    @field_validator("path")
    @classmethod
    def _under_sys(cls, value: str, info: ValidationInfo) -> str:
        if not value.startswith("/sys/"):
            raise ValueError(f"expected an absolute path under /sys, got {_show(value)}")
        if info.data.get("hosts") and ".." in value.split("/"):
            raise ValueError(f"expected a path under /sys without '..' (a remote path is not resolved), "
                             f"got {_show(value)}")
        return value

    def default_encode(self) -> list[str]:
        return ["0", "1"]


class FileKnobSpec(KnobBase):
    """One key of a config file; the rest of the file stays byte-identical."""

    kind: Literal["file"]
    path: str
    key: str
    format: Literal["auto", "conf", "ini", "env", "yaml", "json", "toml", "nginx", "properties"] = "auto"
    section: str | None = None
    #: A command run once after a configuration changed this file, or ``service``: restart
    #: the spec's service (once per configuration, however many knobs asked for it).
    restart: Argv | None = None
    restart_timeout: float = Field(120.0, gt=0, le=MAX_TIMEOUT_S)
    #: The value in effect while the key is not in the file (the program's built-in default,
    #: e.g. a commented-out postgresql.conf key): the baseline's value of this knob then.
    absent: Scalar | None = None

    @field_validator("restart", mode="before")
    @classmethod
    def _restart(cls, value: Any) -> Any:
        return value if value == "service" else _check_command(value)


class ScriptKnobSpec(KnobBase):
    """User get/set commands (A-Tune style). ``$value`` in ``set`` becomes one argv
    element; with ``shell: true`` the value reaches the script as ``$1`` and ``$value``
    in its environment, never pasted into the shell text."""

    kind: Literal["script"]
    get: Argv
    set: Argv
    shell: bool = False
    timeout: float = Field(60.0, gt=0, le=MAX_TIMEOUT_S)
    #: ``service``: a changed value takes effect when the spec's service restarts (A-Tune's
    #: ``needrestart``); hone restarts it once after all of a configuration's writes.
    restart: Literal["service"] | None = None
    #: ``service``: a setting of the running service (Redis ``CONFIG SET``): read and set once
    #: the service is up, set again after every restart.
    scope: Literal["system", "service"] = "system"
    #: Files the ``set`` command edits (absolute paths): their bytes are journaled before the
    #: first set and written back on restore, so a ``set`` that cannot undo itself (a one-way
    #: ``sed``) is still put back exactly.
    files: list[str] = Field(default_factory=list, max_length=16)

    _cmd = field_validator("get", "set", mode="before")(_check_command)

    @field_validator("files")
    @classmethod
    def _absolute_files(cls, value: list[str]) -> list[str]:
        for path in value:
            if not path.startswith("/") or "\0" in path:
                raise ValueError(f"expected absolute paths, got {_show(path)}")
        if len(set(value)) != len(value):
            raise ValueError(f"expected distinct paths, got {_show(value)}")
        return value

    @model_validator(mode="after")
    def _value_in_shell_text(self) -> ScriptKnobSpec:
        # A $value the shell text cannot substitute (inside <<'EOF' or $'…') fails at load, not at a write.
        if self.shell:
            text: str | None = self.set if isinstance(self.set, str) else " ".join(self.set)
        else:
            argv = to_argv(self.set)
            index = shell_script_index(argv)
            text = argv[index] if index is not None else None
        if text is not None:
            try:
                rewrite(text, ["value"], style="dollar", what="set")
            except ShellTextError as exc:
                raise ValueError(exc.message) from None
        return self


#: Allocator names a ``library`` knob understands (hone.linking.allocators.ALLOCATOR_NAMES).
LIBRARY_NAMES = ("glibc", "jemalloc", "tcmalloc", "mimalloc")


class LibraryKnobSpec(KnobBase):
    """A shared library preloaded into the benchmark only (``LD_PRELOAD``, never hone's
    own environment). Values are allocator names (``glibc`` = no preload, ``jemalloc``,
    ``tcmalloc``, ``mimalloc``) or paths of ``.so`` files; ``paths`` maps other value
    names to files."""

    kind: Literal["library"]
    default: Scalar | None = None
    paths: dict[str, str] = Field(default_factory=dict)
    scope: Literal["benchmark", "service"] = "benchmark"  # service: preloaded into the server

    @model_validator(mode="after")
    def _known_libraries(self) -> LibraryKnobSpec:
        for v in [*(self.values or []), *([] if self.default is None else [self.default])]:
            if str(v) not in self.paths and str(v) not in LIBRARY_NAMES and "/" not in str(v):
                raise ValueError(f"expected {', '.join(LIBRARY_NAMES)}, a key of paths, or a path to a .so,"
                                 f" got {_show(v)}")
        return self


class BinaryKnobSpec(KnobBase):
    """An ELF file patched in place by ``hone libswap --in-place`` (patchelf). Its
    original bytes are backed up (sha256-named, in ``backup_dir``) before the change so
    ``hone rollback`` restores them exactly. Values are patch descriptions (JSON)."""

    kind: Literal["binary"]
    path: str
    backup_dir: str | None = None


KnobSpec = Annotated[
    ParamKnobSpec | EnvKnobSpec | SysctlKnobSpec | SysfsKnobSpec | FileKnobSpec | ScriptKnobSpec
    | LibraryKnobSpec | BinaryKnobSpec,
    Field(discriminator="kind"),
]
#: Every knob model by its ``kind`` (the members of :data:`KnobSpec`); the drivers are
#: :data:`hone.knobs.DRIVERS`, under the same keys.
KNOB_SPECS: dict[str, type[KnobBase]] = {
    "param": ParamKnobSpec,
    "env": EnvKnobSpec,
    "sysctl": SysctlKnobSpec,
    "sysfs": SysfsKnobSpec,
    "file": FileKnobSpec,
    "script": ScriptKnobSpec,
    "library": LibraryKnobSpec,
    "binary": BinaryKnobSpec,
}
KNOB_KINDS = tuple(KNOB_SPECS)


# ---------------------------------------------------------------- service

_ADDRESS = re.compile(r"(?P<host>\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9._{}-]+):(?P<port>[0-9]{1,5}|\{host_port\})")
SIGNALS = ("TERM", "INT", "QUIT", "HUP", "KILL", "USR1", "USR2")


class ReadyProbe(StrictModel):
    """When a started service is ready: a TCP port that accepts connections (``host:port``),
    an HTTP URL that answers, a command that exits 0, a regular expression in the service's
    log — one or several, all must pass (``tcp`` + ``log`` for a server that listens before
    it can serve). Polled every ``interval`` s for up to ``timeout`` s. The tcp/http address
    must be free before hone starts the server. With ``hosts`` on the service, ``{host}`` in
    the probe is each host's address."""

    tcp: str | None = None
    http: str | None = None
    command: Argv | None = None
    log: str | None = None
    timeout: float = Field(30.0, gt=0, le=MAX_TIMEOUT_S)
    interval: float = Field(0.2, gt=0, le=60)

    _cmd = field_validator("command", mode="before")(_check_command)

    @field_validator("tcp")
    @classmethod
    def _tcp(cls, value: str | None) -> str | None:
        if value is not None and not _ADDRESS.fullmatch(value):
            raise ValueError(f"expected host:port like 127.0.0.1:6379, got {_show(value)}")
        return value

    @field_validator("http")
    @classmethod
    def _http(cls, value: str | None) -> str | None:
        if value is not None and not re.match(r"https?://[^/\s]+", value):
            raise ValueError(f"expected an http:// or https:// URL, got {_show(value)}")
        return value

    @field_validator("log")
    @classmethod
    def _log(cls, value: str | None) -> str | None:
        if value is not None:
            try:
                re.compile(value)
            except re.error as exc:
                raise ValueError(f"expected a valid regular expression, got {_show(value)} ({exc})") from None
        return value

    @model_validator(mode="after")
    def _at_least_one(self) -> ReadyProbe:
        if all(getattr(self, k) is None for k in ("tcp", "http", "command", "log")):
            raise ValueError("expected at least one of tcp, http, command, log")
        return self

    def address(self) -> tuple[str, int] | None:
        """The (host, port) the service listens on, from ``tcp`` or ``http`` (None otherwise)."""
        from urllib.parse import urlsplit

        if self.tcp is not None:
            host, _, port = self.tcp.rpartition(":")
            return host.strip("[]"), int(port)
        if self.http is not None:
            url = urlsplit(self.http)
            return (url.hostname or "127.0.0.1"), url.port or (443 if url.scheme == "https" else 80)
        return None


class StopSpec(StrictModel):
    """How to stop a service hone started: a signal to its process group (then SIGKILL after
    ``timeout`` s), or a command."""

    signal: str = "TERM"
    command: Argv | None = None
    timeout: float = Field(20.0, gt=0, le=MAX_TIMEOUT_S)

    _cmd = field_validator("command", mode="before")(_check_command)

    @field_validator("signal", mode="before")
    @classmethod
    def _signal(cls, value: Any) -> Any:
        text = str(value).upper().removeprefix("SIG")
        if text not in SIGNALS:
            raise ValueError(f"expected one of {', '.join(SIGNALS)}, got {_show(value)}")
        return text


class ServiceWarmup(StrictModel):
    """Untimed load after each start, before the first measured run: ``command`` once, or
    repeated for ``seconds``."""

    command: Argv
    seconds: float | None = Field(None, gt=0, le=MAX_TIMEOUT_S)
    timeout: float = Field(600.0, gt=0, le=MAX_TIMEOUT_S)

    _cmd = field_validator("command", mode="before")(_check_command)


class Service(StrictModel):
    """The server the benchmark measures. Either hone runs it — ``start`` (argv, ``{param}``
    placeholders like the benchmark command), ``ready``, ``stop``, optional ``user``,
    ``warmup`` — or it is managed elsewhere (systemd, a cluster): ``restart`` (a command),
    optional ``ready``, optional ``hosts`` (restarted one by one over ssh, each ready before
    the next)."""

    name: str | None = None
    start: Argv | None = None
    shell: bool = False
    ready: ReadyProbe | None = None
    stop: StopSpec = Field(default_factory=StopSpec)
    restart: Argv | None = None
    restart_timeout: float = Field(300.0, gt=0, le=MAX_TIMEOUT_S)
    user: str | None = None
    cwd: str | None = None
    env: dict[str, str] = Field(default_factory=dict)
    warmup: ServiceWarmup | None = None
    hosts: list[str] | None = None
    ssh_options: list[str] = Field(default_factory=list)

    _cmd = field_validator("start", "restart", mode="before")(_check_command)
    _hosts = field_validator("hosts", mode="before")(KnobBase._hosts.__func__)  # type: ignore[attr-defined]
    _ssh = field_validator("ssh_options", mode="before")(KnobBase._ssh_options.__func__)  # type: ignore[attr-defined]

    @field_validator("env", mode="before")
    @classmethod
    def _env_strings(cls, value: Any) -> Any:
        if isinstance(value, dict):
            return {str(k): str(v).lower() if isinstance(v, bool) else str(v) for k, v in value.items()}
        return value

    @field_validator("name")
    @classmethod
    def _name(cls, value: str | None) -> str | None:
        return value if value is None else check_name(value)

    @model_validator(mode="after")
    def _mode(self) -> Service:
        if (self.start is None) == (self.restart is None):
            raise ValueError("expected start: (hone runs the server) or restart: (it is managed elsewhere), not "
                             + ("both" if self.start is not None else "neither"))
        if self.start is not None:
            if self.ready is None:
                raise ValueError("expected ready: {tcp: HOST:PORT} (or http, command, log) with start: hone must "
                                 "know when the server is up")
            if self.hosts:
                raise ValueError("expected no hosts with start: (servers on other hosts are restarted with "
                                 "restart: over ssh)")
        else:
            for key in ("user", "warmup", "cwd"):
                if getattr(self, key):
                    raise ValueError(f"expected no {key} with restart: (hone does not run this server)")
            if self.ready is not None and self.ready.log is not None:
                raise ValueError("expected ready: tcp, http or command with restart: (hone has no log of it)")
        return self


# ---------------------------------------------------------------- tune


class Tune(StrictModel):
    """Search settings (used by ``hone tune``)."""

    trials: int = Field(40, ge=1)
    sampler: str = "auto"
    seed: int | None = None
    storage: str | None = None
    study: str | None = None
    confirm: int = Field(5, ge=0)
    top_k: int = Field(3, ge=1)
    objective: Literal["weighted", "single", "pareto"] | None = None
    random_starts: int | None = Field(None, ge=1)
    ablation: bool = True  # which of a multi-knob winner's changes hold its gain
    ablation_rounds: int | None = Field(None, ge=1)  # default: the confirmation's
    max_time: float | None = None  # seconds for the whole session; "90s", "45m", "2h" in YAML
    # Benchmark runs for the whole session, every phase counted (A-Tune's iterations); with it
    # `trials` is only a cap when written in the spec.
    max_runs: int | None = Field(None, ge=1)
    # Configurations to measure first (knob: value; the others at their current values): a
    # vendor's or a tuned profile's settings, an earlier winner. Checked by hone.tune.start.
    start: list[dict[str, Scalar]] = Field(default_factory=list)

    @field_validator("study")
    @classmethod
    def _study_name(cls, value: str | None) -> str | None:
        return value if value is None else check_name(value)

    @field_validator("max_time", mode="before")
    @classmethod
    def _max_time(cls, value: Any) -> float | None:
        return None if value is None else parse_duration(value)


# ---------------------------------------------------------------- build (hone pgo)


class BuildScenario(StrictModel):
    """A train or evaluate scenario of ``hone pgo``: shell text naming the program as
    ``{binary}``; ``weight`` scales its profile in the merge (train only)."""

    name: str | None = None
    command: str = Field(min_length=1)
    weight: float = Field(1.0, gt=0)
    cwd: str | None = None


class BuildSpec(StrictModel):
    """How ``hone pgo`` builds the program and which variants it tries.

    ``system``: make, cmake, autotools (./configure; make), meson, cargo or command (``command``
    is then the build argv; for cmake, autotools and meson it replaces the build step after
    configuring; ``configure`` adds arguments to their configure step).
    Flags reach the build as CC/CFLAGS/CXXFLAGS/LDFLAGS/RUSTFLAGS in the environment and
    as ``{cc}`` ``{cflags}`` ``{ldflags}`` ``{ar}`` ``{ranlib}`` ``{rustflags}`` ``{jobs}``
    placeholders in ``command``. ``binary`` is relative to ``dir``. Without ``evaluate``
    the spec's benchmark command is the evaluate scenario. Times in seconds. With a
    ``service:`` whose ``start`` names the program as ``{binary}``, the scenarios are the load
    run against each variant started as the service (they need no ``{binary}``).
    """

    system: Literal["make", "cmake", "autotools", "meson", "cargo", "command"] = "make"
    dir: str = "."
    binary: str = Field(min_length=1)
    command: Argv | None = None
    configure: Argv | None = None
    cflags: str | None = None
    ldflags: str = ""
    rustflags: str = ""
    train: list[BuildScenario] = Field(min_length=1)
    evaluate: list[BuildScenario] = Field(default_factory=list)
    check: str | None = None
    modes: list[str] = Field(default_factory=lambda: ["instr-gcc"], min_length=1)
    rounds: int = Field(7, ge=2)
    noise_builds: int = Field(2, ge=0, le=3)
    counts: bool = True
    jobs: int = Field(2, ge=1)
    threads: bool = False
    partial_training: bool = False
    build_timeout: float = Field(1800.0, gt=0, le=MAX_TIMEOUT_S)
    run_timeout: float = Field(600.0, gt=0, le=MAX_TIMEOUT_S)
    #: A throughput metric (per second) of the load: the server's CPU time is also judged per unit
    #: of it (server_cpu_us_per_op), which compares builds under a fixed-duration load.
    cpu_per: str | None = None

    _cmd = field_validator("command", "configure", mode="before")(_check_command)

    @model_validator(mode="after")
    def _configure_step(self) -> BuildSpec:
        if self.configure is not None and self.system not in ("cmake", "autotools", "meson"):
            raise ValueError(f"configure: arguments of a configure step, which only cmake, autotools and meson have;"
                             f" system is {self.system} (put options in command: instead)")
        return self

    @model_validator(mode="after")
    def _binary_placeholder(self) -> BuildSpec:
        if _SCENARIOS_ARE_LOAD.get():
            return self  # the service runs {binary}; scenarios are its load
        for i, scn in enumerate([*self.train, *self.evaluate]):
            if "{binary}" not in scn.command:
                raise ValueError(f"expected every scenario to name the program as {{binary}}, got {scn.command!r}"
                                 f" (scenario {i + 1})")
        return self


# ---------------------------------------------------------------- spec


class Spec(StrictModel):
    """A workload, its metrics and its knobs."""

    name: str | None = None
    description: str | None = None
    benchmark: Benchmark
    metrics: list[Metric] = Field(default_factory=lambda: [Metric(name="cpu_time")])
    knobs: list[KnobSpec] = Field(default_factory=list)
    tune: Tune = Field(default_factory=Tune)
    build: BuildSpec | None = None
    service: Service | None = None

    @field_validator("name")
    @classmethod
    def _name(cls, value: str | None) -> str | None:
        return value if value is None else check_name(value)

    @field_validator("metrics")
    @classmethod
    def _unique_metrics(cls, value: list[Metric]) -> list[Metric]:
        if not value:
            raise ValueError("expected at least one metric, got []")
        seen: set[str] = set()
        for m in value:
            if m.name in seen:
                raise ValueError(f"expected distinct metric names, got {m.name!r} twice")
            seen.add(m.name)
        return value

    @field_validator("knobs")
    @classmethod
    def _unique_knobs(cls, value: list[Any]) -> list[Any]:
        seen: set[str] = set()
        for k in value:
            if k.name in seen:
                raise ValueError(f"expected distinct knob names, got {k.name!r} twice")
            seen.add(k.name)
        return value

    @model_validator(mode="wrap")
    @classmethod
    def _service_build(cls, data: Any, handler: Any) -> Spec:
        token = _SCENARIOS_ARE_LOAD.set(_start_names_binary(data))
        try:
            return handler(data)  # type: ignore[no-any-return]
        finally:
            _SCENARIOS_ARE_LOAD.reset(token)

    @model_validator(mode="after")
    def _cpu_per(self) -> Spec:
        per = self.build.cpu_per if self.build is not None else None
        if per is None:
            return self
        if self.service is None or self.service.start is None:
            raise ValueError("build.cpu_per: the server's CPU per unit of a metric needs a service hone starts"
                             " (service.start)")
        names = [m.name for m in self.metrics]
        if per not in names:
            raise ValueError(f"build.cpu_per: expected the name of a throughput metric, one of {', '.join(names)};"
                             f" got {per!r}")
        return self

    @model_validator(mode="after")
    def _service_knobs(self) -> Spec:
        for k in self.knobs:
            uses = getattr(k, "restart", None) == "service" or getattr(k, "scope", "benchmark") == "service"
            if uses and self.service is None:
                raise ValueError(f"knobs: {k.name} restarts the service, but the spec has no service: section")
            if k.kind in ("env", "library") and k.scope == "service" and self.service is not None \
                    and self.service.start is None:
                raise ValueError(f"knobs: {k.name} has scope: service, which needs a service hone starts (start:)")
        if self.service is not None and self.service.start is not None:
            params = {k.name for k in self.knobs if k.kind == "param"}
            if self.build is not None:
                params.add("binary")  # hone pgo: each variant's program; else build.dir/build.binary
            for arg in to_argv(self.service.start, self.service.shell):
                for name in PLACEHOLDER.findall(arg):
                    if name not in params:
                        raise ValueError(f"service.start: placeholder {{{name}}} names no param knob"
                                         f" (params: {', '.join(sorted(params)) or 'none'})")
        return self

    def service_params(self) -> set[str]:
        """The param knobs the service's start command uses (a change restarts it)."""
        if self.service is None or self.service.start is None:
            return set()
        return {n for arg in to_argv(self.service.start, self.service.shell) for n in PLACEHOLDER.findall(arg)}

    @model_validator(mode="after")
    def _placeholders(self) -> Spec:
        params = {k.name for k in self.knobs if k.kind == "param"}
        if isinstance(self.benchmark.command, list):
            for arg in self.benchmark.command:
                for name in PLACEHOLDER.findall(arg):
                    if name not in params:
                        raise ValueError(
                            f"benchmark.command: placeholder {{{name}}} names no param knob"
                            f" (params: {', '.join(sorted(params)) or 'none'})"
                        )
        for which in ("command", "prepare", "cleanup"):
            # A {param} in shell text where the shell substitutes nothing fails at load, not mid-study.
            command = getattr(self.benchmark, which)
            argv = to_argv(command, self.benchmark.shell) if command is not None and params else []
            index = shell_script_index(argv)
            if index is not None:
                try:
                    rewrite(argv[index], params, what=f"benchmark.{which}")
                except ShellTextError as exc:
                    raise ValueError(exc.message) from None
        return self

    def knob(self, name: str) -> Any:
        for k in self.knobs:
            if k.name == name:
                return k
        names = ", ".join(k.name for k in self.knobs) or "none"
        raise KeyError(f"no knob named {name!r} (knobs: {names})")

    def metric(self, name: str) -> Metric:
        for m in self.metrics:
            if m.name == name:
                return m
        raise KeyError(name)
