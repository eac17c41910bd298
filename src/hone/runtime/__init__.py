"""Library variants of a binary as user operations (``hone libswap``): another glibc (patchelf
interpreter + rpath) or another malloc, built on :mod:`hone.linking`.

* :mod:`~hone.runtime.inplace` — ``--in-place`` edits, journaled with checksummed backups.
* :mod:`~hone.runtime.show` — which glibc and allocator a binary or a running PID uses.
"""
