"""database-oltp: a database server under many short transactions, each commit forced to disk."""

from __future__ import annotations

from hone.diagnose.workload.classes.base import ClassRule


class DatabaseOltp(ClassRule):
    name = "database-oltp"
    group = "service"
    conclusion = "a server of short transactions: clients connected, every commit forced to stable storage"
    requires = ("listens", "connected", "fsync-heavy")
    supports = ("multi-process", "short-bursts", "writes-storage", "small-messages", "scattered-blocks")
    excludes = ("bulk-network",)
    source = ("a commit is a WAL flush (PostgreSQL's wal_sync_method fdatasync, InnoDB's "
              "innodb_flush_log_at_trx_commit=1); A-Tune's and tuned's database profiles target this")
