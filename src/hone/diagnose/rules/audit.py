"""Syscall auditing: audit rules make every matching system call slower (the UnixBench
file-copy profile, docs/seed-formats.md: writes up to 27% faster with auditd off).

Signal: kernel auditing compiled in (CONFIG_AUDIT), ``auditctl -l`` lists rules, and the
program is syscall-heavy (kernel time ≥ 40%, calibrated in kernel_time.py). The
experiment needs audit rules removed and restored (``auditctl -D`` / ``-R``): a system
change, so the doctor proposes it and never runs it on its own.
"""

from __future__ import annotations

from hone.core.process import run_process
from hone.diagnose.rules.base import DoctorContext, Finding, Rule
from hone.diagnose.rules.kernel_time import THRESHOLD_PCT


def audit_rules(auditctl: str) -> list[str]:
    res = run_process([auditctl, "-l"], timeout=10)
    if not res.ok:
        return []
    return [line for line in res.stdout.splitlines() if line.strip() and line.strip() != "No rules"]


class AuditRule(Rule):
    name = "audit"
    signal = "CONFIG_AUDIT=y, auditctl -l rules present, kernel-time share"
    threshold = f"any audit rule and kernel time >= {THRESHOLD_PCT:.0f}% (calibrated)"
    source = "UnixBench file-copy profile: auditd on/off (docs/seed-formats.md)"
    remedy = "narrow or remove syscall audit rules on performance-critical hosts"
    experiment = "with rules vs `auditctl -D` (restore with auditctl -R), interleaved"
    inputs = ("sys_share_pct",)

    def check(self, ctx: DoctorContext) -> Finding | None:
        share = ctx.value("sys_share_pct")
        if not ctx.caps.audit_kernel or not ctx.caps.auditctl or share is None or share < THRESHOLD_PCT:
            return None
        rules = audit_rules(ctx.caps.auditctl)
        if not rules:
            return None
        return Finding(self.name, "Audit rules on a syscall-heavy program", 0.5,
                       [f"{len(rules)} audit rules loaded (first: {rules[0]})", f"kernel time {share:.1f}%"],
                       self.threshold, self.source, self.remedy,
                       suggestions=["save rules (auditctl -l > rules), auditctl -D, re-run, auditctl -R rules"])
