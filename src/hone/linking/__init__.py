"""How a binary links: ELF facts, its own loader's view, glibc and allocator variants, patchelf.

Below the knobs (a ``library`` or ``binary`` knob uses it) and above core; it knows nothing of
specs, sessions or the journal. One concern a file:

* :mod:`~hone.linking.cache` — where downloads live (``$HONE_CACHE_DIR``), shared by runs.
* :mod:`~hone.linking.debian` — fetch one binary package of another Debian suite with a
  private apt configuration (the system's sources are never touched).
* :mod:`~hone.linking.glibc` — a glibc unpacked in its own directory (fetched or given).
* :mod:`~hone.linking.elf` — ELF facts via pyelftools: interpreter, NEEDED, RPATH, the
  ``GLIBC_2.xx`` versions a file needs and a library provides.
* :mod:`~hone.linking.loader` — ask a binary's *own* loader what it resolves.
* :mod:`~hone.linking.patch` — patchelf edits, variant directories, symbol-version check.
* :mod:`~hone.linking.allocators` — jemalloc / tcmalloc / mimalloc / glibc malloc.
"""
