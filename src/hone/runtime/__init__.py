"""Library variants of a binary: another glibc (patchelf interpreter + rpath) or another
malloc (``patchelf --add-needed`` on a copy, or ``LD_PRELOAD`` through a ``library`` knob).

One concern a file:

* :mod:`~hone.runtime.cache` — where downloads live (``$HONE_CACHE_DIR``), shared by runs.
* :mod:`~hone.runtime.debian` — fetch one binary package of another Debian suite with a
  private apt configuration (the system's sources are never touched).
* :mod:`~hone.runtime.glibc` — a glibc unpacked in its own directory (fetched or given).
* :mod:`~hone.runtime.elf` — ELF facts via pyelftools: interpreter, NEEDED, RPATH, the
  ``GLIBC_2.xx`` versions a file needs and a library provides.
* :mod:`~hone.runtime.loader` — ask a binary's *own* loader what it resolves.
* :mod:`~hone.runtime.patch` — patchelf edits, variant directories, symbol-version check.
* :mod:`~hone.runtime.allocators` — jemalloc / tcmalloc / mimalloc / glibc malloc.
* :mod:`~hone.runtime.inplace` — ``--in-place`` edits, journaled with checksummed backups.
* :mod:`~hone.runtime.show` — which glibc and allocator a binary or a running PID uses.

This package imports nothing from ``hone.journal`` at import time (the ``library`` knob
driver imports :mod:`~hone.runtime.allocators`, and the journal imports the knobs).
"""
