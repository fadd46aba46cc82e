"""The kernel CLI of DESIGN 3.1: `--list`, and `--run ID [--param NAME=VALUE]... [--repetitions N]
[--min-time SECONDS] [--sample-time SECONDS]`. Exit 0 ok, 2 bad arguments, 3 cannot run on this host, 1
self-check failure; on any non-zero exit, exactly one line on stderr says why, and stdout is empty.
"""

from __future__ import annotations

import json
import math
import os
import signal
import sys
from dataclasses import dataclass, field

from ctxbench_kernels_py import harness
from ctxbench_kernels_py.spec import SelfCheckError, Unsupported, UsageError, is_decimal_int

PROG = "ctxbench-kernels-py"
# The defaults and limits every kernel executable shares (kernels/contract/README.md "Defaults and limits").
DEFAULT_REPETITIONS = 5
DEFAULT_MIN_TIME = 0.2
MAX_REPETITIONS = 1000
MAX_MIN_TIME = 60.0
MAX_SAMPLE_TIME = 1.0

USAGE = f"""usage: {PROG} --list
       {PROG} --run ID [--param NAME=VALUE]... [--repetitions N] [--min-time SECONDS]
              [--sample-time SECONDS]

--list          print the kernel specs as a JSON array
--run ID        run one kernel under pyperf and print one JSON result
--param N=V     set a kernel parameter (canonical string value); others keep their defaults
--repetitions   samples to take (default {DEFAULT_REPETITIONS}, max {MAX_REPETITIONS})
--min-time      minimum seconds one sample times; pyperf calibrates the loops to reach it (default \
{DEFAULT_MIN_TIME})
--sample-time   seconds of one short sample: a sample is then the 5th percentile of a block of short
                samples, one pyperf value each (> 0, <= {MAX_SAMPLE_TIME:g}, <= --min-time; not given: one
                long sample, one pyperf value)
"""


@dataclass
class Request:
    list: bool = False
    run: str | None = None
    params: dict[str, str] = field(default_factory=dict)
    repetitions: int | None = None
    min_time: float | None = None
    sample_time: float | None = None


_TAKES_VALUE = ("--run", "--param", "--repetitions", "--min-time", "--sample-time")


def parse(argv: list[str]) -> Request:
    req = Request()
    i = 0
    while i < len(argv):
        arg = argv[i]
        i += 1
        flag, eq, inline = arg.partition("=")
        if flag in _TAKES_VALUE:
            if eq:
                value = inline
            elif i < len(argv):
                value = argv[i]
                i += 1
            else:
                raise UsageError(f"{flag} needs a value")
            _take(req, flag, value)
        elif arg == "--list":
            if req.list:
                raise UsageError("--list given twice")
            req.list = True
        else:
            raise UsageError(f"unknown argument {arg!r} (see --help)")
    if req.list and (
        req.run is not None
        or req.params
        or req.repetitions is not None
        or req.min_time is not None
        or req.sample_time is not None
    ):
        raise UsageError("--list takes no other arguments")
    if not req.list and req.run is None:
        raise UsageError("nothing to do: give --list or --run ID")
    min_time = req.min_time if req.min_time is not None else DEFAULT_MIN_TIME
    if req.sample_time is not None and req.sample_time > min_time:
        raise UsageError(f"--sample-time {req.sample_time:g} is longer than --min-time {min_time:g}")
    return req


def _take(req: Request, flag: str, value: str) -> None:
    if flag == "--run":
        if req.run is not None:
            raise UsageError("--run given twice")
        req.run = value
    elif flag == "--param":
        name, eq, text = value.partition("=")
        if not eq or not name:
            raise UsageError(f"--param {value!r} is not NAME=VALUE")
        if name in req.params:
            raise UsageError(f"parameter {name} given twice")
        req.params[name] = text
    elif flag == "--repetitions":
        if req.repetitions is not None:
            raise UsageError("--repetitions given twice")
        if not is_decimal_int(value):
            raise UsageError(f"--repetitions {value!r} is not an integer")
        n = int(value, 10)
        if not 1 <= n <= MAX_REPETITIONS:
            raise UsageError(f"--repetitions {n} is out of range 1..{MAX_REPETITIONS}")
        req.repetitions = n
    elif flag == "--sample-time":
        if req.sample_time is not None:
            raise UsageError("--sample-time given twice")
        seconds = _seconds(flag, value)
        if seconds <= 0 or seconds > MAX_SAMPLE_TIME:
            raise UsageError(f"--sample-time {value} must be > 0 and <= {MAX_SAMPLE_TIME:g} seconds")
        req.sample_time = seconds
    else:
        if req.min_time is not None:
            raise UsageError("--min-time given twice")
        seconds = _seconds(flag, value)
        if seconds <= 0 or seconds > MAX_MIN_TIME:
            raise UsageError(f"--min-time {value} must be > 0 and <= {MAX_MIN_TIME:g} seconds")
        req.min_time = seconds


def _seconds(flag: str, value: str) -> float:
    """A finite number of seconds, or UsageError naming `flag`."""
    try:
        seconds = float(value)
    except ValueError:
        raise UsageError(f"{flag} {value!r} is not a number") from None
    if not math.isfinite(seconds):
        raise UsageError(f"{flag} {value} is not a finite number")
    return seconds


class Terminated(BaseException):
    """SIGTERM (the agent cancelling or timing out a run): unwind so temporary files go and workers die."""


def _terminate(signum: int, frame: object) -> None:
    raise Terminated


def _fail(code: int, message: str) -> int:
    # One line, whatever the message held.
    print(f"{PROG}: {' '.join(message.split())}", file=sys.stderr)
    return code


def main(argv: list[str]) -> int:
    if argv[:1] == [harness.WORKER_FLAG]:
        return harness.worker_main(argv[1:])
    if argv in (["--help"], ["-h"]):
        print(USAGE, end="")
        return 0

    from ctxbench_kernels_py.kernels import BY_ID, KERNELS

    try:
        req = parse(argv)
        if req.list:
            print(json.dumps([k.as_json() for k in KERNELS]))
            return 0
        assert req.run is not None
        kernel = BY_ID.get(req.run)
        if kernel is None:
            raise UsageError(f"unknown kernel {req.run!r} (known: {', '.join(BY_ID)})")
        params = kernel.resolve(req.params)
    except UsageError as exc:
        return _fail(2, str(exc))

    repetitions = req.repetitions if req.repetitions is not None else DEFAULT_REPETITIONS
    min_time = req.min_time if req.min_time is not None else DEFAULT_MIN_TIME
    signal.signal(signal.SIGTERM, _terminate)
    try:
        kernel.check_host()
        result = harness.run(kernel, params, repetitions, min_time, req.sample_time)
    except Terminated:
        return _fail(128 + signal.SIGTERM, "terminated")
    except Unsupported as exc:
        return _fail(3, str(exc))
    except SelfCheckError as exc:
        return _fail(1, f"self-check failed: {exc}")
    except RuntimeError as exc:
        return _fail(1, str(exc))
    print(json.dumps(result))
    return 0


def run_main(argv: list[str]) -> int:
    """main() for the executable: a reader that goes away early (| head) is not an error of ours."""
    try:
        code = main(argv)
        sys.stdout.flush()
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    return code
