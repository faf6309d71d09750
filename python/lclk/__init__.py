# SPDX-License-Identifier: GPL-2.0
"""Read the lclk logical clock from Python.

    import lclk

    with lclk.Clock() as clock:          # /dev/lclk0
        now = clock.now()                # no system call: the mapped page
        print(now.time_ns, now.bound_ns, now.status, now.seconds)

    t = time.monotonic_ns()              # taken elsewhere, converted later
    logical = clock.from_monotonic(t)

A clock that cannot be opened raises OSError with the errno text
(FileNotFoundError when the module is not loaded); a closed clock raises
ValueError. ``lclk.torch`` marks training steps and torch.distributed
collectives; ``python3 -m lclk.report`` reads what it wrote.
"""
from lclk._lclk import (
    BOUND_UNKNOWN,
    STATUS_DISRUPTED,
    STATUS_HOLDOVER,
    STATUS_SYNCED,
    STATUS_UNSYNCED,
    Clock,
    Now,
)

__all__ = [
    "BOUND_UNKNOWN",
    "STATUS_DISRUPTED",
    "STATUS_HOLDOVER",
    "STATUS_SYNCED",
    "STATUS_UNSYNCED",
    "Clock",
    "Now",
    "status_name",
]

_STATUS_NAMES = {STATUS_UNSYNCED: "unsynced", STATUS_SYNCED: "synced",
                 STATUS_HOLDOVER: "holdover", STATUS_DISRUPTED: "disrupted"}


def status_name(status: int) -> str:
    """"unsynced", "synced", "holdover" or "disrupted" (as lclkctl status prints it)."""
    return _STATUS_NAMES.get(status, "unknown")
