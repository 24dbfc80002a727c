"""Run as a script before the sandbox starts (``python -I -S sandbox_launch.py PROCESSES CPU_S DATA_B
FILE_B PROGRAM…``): it sets the resource limits that everything inside inherits, then becomes PROGRAM.

The kernel's process limit (RLIMIT_NPROC) counts all the processes of the user, so the launcher sets it
to the user's processes of the moment plus the sandbox's allowance. The kernel does not hold root to it:
for root, the launcher joins a new cgroup of the pids controller whose pids.max is the allowance, when
the machine lets it (the cgroup is named after this process and removed by the runner when the command
ends)."""

from __future__ import annotations

import os
import resource
import sys
from pathlib import Path

PIDS_V1 = Path("/sys/fs/cgroup/pids")
CGROUP_V2 = Path("/sys/fs/cgroup")


def pids_cgroup(pid: int) -> Path | None:
    """The cgroup a root launcher ``pid`` joins: in the pids hierarchy (cgroup v1), else at the top of
    cgroup v2 when it hands the pids controller down; None when the machine has neither."""
    name = f"massgen-sandbox-{pid}"
    if (PIDS_V1 / "cgroup.procs").exists():
        return PIDS_V1 / name
    try:
        handed_down = (CGROUP_V2 / "cgroup.subtree_control").read_text().split()
    except OSError:
        return None
    return CGROUP_V2 / name if "pids" in handed_down else None


def stale_pids_cgroups() -> list[Path]:
    """The sandbox cgroups whose launcher is gone (a run that was killed, a removal that timed out); an
    empty one can be removed, one that still holds processes cannot."""
    example = pids_cgroup(0)
    if example is None or not example.parent.is_dir():
        return []
    prefix = example.name.removesuffix("0")
    launchers = {group: group.name.removeprefix(prefix) for group in example.parent.glob(f"{prefix}*")}
    return [group for group, pid in launchers.items() if pid.isdigit() and not Path(f"/proc/{pid}").exists()]


def join_pids_cgroup(processes: int) -> None:
    group = pids_cgroup(os.getpid())
    if group is None:
        return
    try:
        group.mkdir(exist_ok=True)
        (group / "pids.max").write_text(str(processes))
        (group / "cgroup.procs").write_text(str(os.getpid()))
    except OSError:
        return  # the runner's watch holds the limit instead


def _processes_of(uid: int) -> int:
    count = 0
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                count += os.stat(entry.path).st_uid == uid
            except OSError:
                continue
    return count


def main(arguments: list[str]) -> None:
    processes, cpu_s, data_b, file_b = (int(value) for value in arguments[:4])
    for limit, value in (
        (resource.RLIMIT_NPROC, processes + _processes_of(os.getuid())),
        (resource.RLIMIT_CPU, cpu_s),
        (resource.RLIMIT_DATA, data_b),
        (resource.RLIMIT_FSIZE, file_b),
    ):
        resource.setrlimit(limit, (value, value))
    if os.geteuid() == 0:
        join_pids_cgroup(processes)
    program = arguments[4:]
    os.execv(program[0], program)


if __name__ == "__main__":
    main(sys.argv[1:])
