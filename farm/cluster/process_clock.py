"""How long ago this process started: start-up figures count from the command, not from the end of its imports."""

from __future__ import annotations

import os


def seconds_since_start() -> float:
    """Seconds since this process was created (Linux: /proc, 10 ms resolution); 0.0 where that cannot be read.

    Importing Ray, pyarrow and CuPy costs a process seconds before its first line of its own runs, so a clock
    started in main() would leave them out of a start-up figure.
    """
    try:
        with open(f"/proc/{os.getpid()}/stat") as f:
            # Fields after the command name (which may hold spaces): the 20th of them is starttime, in clock ticks.
            started_ticks = int(f.read().rpartition(")")[2].split()[19])
        with open("/proc/uptime") as f:
            uptime = float(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return 0.0
    return max(uptime - started_ticks / os.sysconf("SC_CLK_TCK"), 0.0)
