"""Settings that trade durability (or safety) for speed, marked wherever hone recommends or
applies them: a faster configuration that can lose data on a crash must never look like a
free gain. A knob's own ``risk:`` (text, or a mapping value → text) comes first; well-known
settings are marked by their name even when the spec says nothing.
"""

from __future__ import annotations

from typing import Any

_DB_CORRUPTION = "durability: a crash or power loss can corrupt the database"
#: (knob name or config key, lower-cased) → {value (lower-cased): the trade-off}
KNOWN: dict[str, dict[str, str]] = {
    "synchronous_commit": dict.fromkeys(
        ("off", "local"), "durability: a crash can lose the last acknowledged commits (the database stays consistent)"),
    "fsync": {"off": _DB_CORRUPTION, "false": _DB_CORRUPTION, "0": _DB_CORRUPTION},
    "full_page_writes": {"off": _DB_CORRUPTION, "false": _DB_CORRUPTION},
    "appendfsync": {"no": "durability: Redis leaves flushing to the OS, a crash can lose ~30 s of writes",
                    "everysec": "durability: a crash can lose up to 1 s of writes"},
    "appendonly": {"no": "durability: Redis keeps data only in RDB snapshots, a crash loses writes since the last"},
    # A-Tune's names in its redis example (redis.AOF, redis.RDB)
    "aof": {"no": "durability: Redis keeps data only in RDB snapshots, a crash loses writes since the last"},
    "rdb": {"off": "durability: Redis makes no RDB snapshots; without the AOF a restart loses every write"},
    "innodb_flush_log_at_trx_commit": dict.fromkeys(("0", "2"), "durability: a crash can lose ~1 s of commits"),
    "sync_binlog": {"0": "durability: a crash can lose binary-log events (replicas and point-in-time recovery)"},
    "synchronous": {"off": _DB_CORRUPTION, "0": _DB_CORRUPTION},
    "journal_mode": {"off": _DB_CORRUPTION, "memory": _DB_CORRUPTION},
}


def risk_of(model: Any, value: Any) -> str | None:
    """The trade-off of setting knob ``model`` to ``value``, or None."""
    text = model.format_value(value) if not isinstance(value, str) else value
    own = getattr(model, "risk", None)
    if isinstance(own, str):
        return own
    if isinstance(own, dict):
        for k, v in own.items():
            if str(k).lower() == text.lower():
                return str(v)
    for name in (getattr(model, "key", None), model.name):
        if name:
            table = KNOWN.get(str(name).rsplit(".", 1)[-1].lower()) or KNOWN.get(str(name).lower())
            if table and text.lower() in table:
                return table[text.lower()]
    return None


def risks(knobs: list[Any], config: dict[str, Any]) -> list[dict[str, str]]:
    """``[{knob, value, risk}]`` for every value of ``config`` that carries a trade-off."""
    out = []
    for model in knobs:
        if model.name in config:
            why = risk_of(model, config[model.name])
            if why:
                out.append({"knob": model.name, "value": model.format_value(config[model.name]), "risk": why})
    return out
