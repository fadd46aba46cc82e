"""The `ctxbench` command line (build/bin/ctxbench, docs/cli.md) against the real server and two real
agents: login through stdin, the lists, a batch run followed to its end, compare in every format, and
the gate's exit codes."""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import stat
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.e2e.stack import ADMIN_TOKEN, ROOT, Agent, Server, base_env, online_machine, running

CLI = ROOT / "build" / "bin" / "ctxbench"
RUN_LINE = re.compile(r"^run (\S+) on (\S+): (\w+)$", re.M)


@dataclass
class Fleet:
    server: Server
    home: Path  # HOME and XDG_CONFIG_HOME of every ctxbench call

    def cli(self, *args: str, stdin: str = "", env: dict[str, str] | None = None, timeout: float = 120):
        home = {"HOME": str(self.home), "XDG_CONFIG_HOME": str(self.home / "config")}
        full = base_env(**{**home, **(env or {})})
        return subprocess.run(
            [str(CLI), *args], input=stdin, capture_output=True, text=True, env=full, timeout=timeout
        )


@pytest.fixture(scope="module")
def fleet(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Fleet]:
    if not CLI.exists():
        pytest.fail(f"not built: {CLI} (run 'make cli')")
    tmp = tmp_path_factory.mktemp("cli")
    for d in ("data", "a", "b"):
        (tmp / d).mkdir()
    with running(Server(tmp / "data")) as server:
        with (
            running(Agent(server, tmp / "a" / "spool", name="cli-a")),
            running(Agent(server, tmp / "b" / "spool", name="cli-b")),
        ):
            online_machine(server, "cli-a")
            online_machine(server, "cli-b")
            yield Fleet(server, tmp / "home")


@pytest.fixture(scope="module")
def logged_in(fleet: Fleet) -> Fleet:
    out = fleet.cli("login", "--server", fleet.server.base_url, stdin=ADMIN_TOKEN + "\n")
    assert out.returncode == 0, out.stderr
    return fleet


def test_login_reads_stdin_and_saves_the_token_0600(fleet: Fleet, tmp_path: Path) -> None:
    env = {"XDG_CONFIG_HOME": str(tmp_path / "cfg")}
    out = fleet.cli("login", "--server", fleet.server.base_url + "/", stdin=ADMIN_TOKEN + "\n", env=env)
    assert out.returncode == 0, out.stderr
    assert "scope admin" in out.stdout
    path = tmp_path / "cfg" / "ctxbench" / "config.json"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert json.loads(path.read_text()) == {"server": fleet.server.base_url, "token": ADMIN_TOKEN}

    # A wrong token is refused by the server and nothing is saved; a token in argv is refused outright.
    env = {"XDG_CONFIG_HOME": str(tmp_path / "other")}
    out = fleet.cli("login", "--server", fleet.server.base_url, stdin="wrong-token\n", env=env)
    assert out.returncode == 3 and "401" in out.stderr, out
    assert not (tmp_path / "other").exists()
    out = fleet.cli("login", "--server", fleet.server.base_url, ADMIN_TOKEN, env=env)
    assert out.returncode == 2 and "never from the command line" in out.stderr
    out = fleet.cli("login", "--server", fleet.server.base_url, "--token", ADMIN_TOKEN, env=env)
    assert out.returncode == 2 and "flag provided but not defined: -token" in out.stderr
    # CTXBENCH_TOKEN works in place of stdin.
    env["CTXBENCH_TOKEN"] = ADMIN_TOKEN
    assert fleet.cli("login", "--server", fleet.server.base_url, env=env).returncode == 0


def test_machines_and_kernels(logged_in: Fleet) -> None:
    out = logged_in.cli("machines")
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0].split()[:4] == ["ID", "NAME", "ONLINE", "KERNELS"]
    assert {ln.split()[1] for ln in lines[1:]} == {"cli-a", "cli-b"}
    machines = json.loads(logged_in.cli("machines", "--json").stdout)
    assert {m["name"] for m in machines} == {"cli-a", "cli-b"}

    out = logged_in.cli("kernels")
    assert out.returncode == 0, out.stderr
    assert re.search(r"^syscall\.getppid\s+syscall\s+ns/op\s+\S", out.stdout, re.M), out.stdout
    assert "syscall.getppid" in {k["id"] for k in json.loads(logged_in.cli("kernels", "--json").stdout)}
    names = logged_in.cli("__complete", "machines").stdout.split()
    assert names == ["cli-a", "cli-b"]
    assert "syscall.getppid" in logged_in.cli("__complete", "kernels").stdout.split()


def test_run_follow_compare_and_gate(logged_in: Fleet) -> None:
    cli = logged_in.cli
    # A batch on both machines, followed to its end: plain progress lines (no terminal), then results.
    out = cli("run", "--machine", "cli-a", "--machine", "cli-b", "--kernel", "syscall.getppid",
              "--profile", "quick", "--follow")  # fmt: skip
    assert out.returncode == 0, out.stdout + out.stderr
    ended = dict((m, s) for _, m, s in RUN_LINE.findall(out.stderr))
    assert ended == {"cli-a": "succeeded", "cli-b": "succeeded"}, out.stderr
    assert re.search(r"^cli-a\s+syscall\.getppid\s+-\s+[\d.]+\s+\[", out.stdout, re.M), out.stdout
    assert "result syscall.getppid" in out.stderr
    # A second run on cli-a alone (its results as JSON): cli-a now has two runs to judge one by the other.
    out = cli("run", "--machine", "cli-a", "--kernel", "syscall.getppid", "--profile", "quick",
              "--follow", "--json")  # fmt: skip
    assert out.returncode == 0, out.stderr
    (res,) = json.loads(out.stdout)
    run2 = res["run_id"]
    runs = logged_in.server.http.get("/runs", params={"items": "false"}).json()
    run1 = next(r["id"] for r in runs if r["id"] != run2 and r["machine_id"] == res["machine_id"])

    out = cli("compare", "--machines", "cli-a,cli-b", "--baseline", "cli-b")
    assert out.returncode == 0, out.stderr
    header, row = out.stdout.splitlines()[:2]
    assert "cli-b (baseline)" in header and "cli-a/cli-b [CI]" in header
    figure = r"[\d.]+ ns/op"
    assert re.match(rf"syscall\.getppid\s+-\s+{figure}\s+{figure}\s+[\d.]+ \[[\d.]+, [\d.]+\]", row), row
    assert re.search(r"(ci_includes_1|within_noise|ci_excludes_noise) \(noise \d+%", row), row

    raw = json.loads(cli("compare", "--machines", "cli-a,cli-b", "--baseline", "cli-b", "--json").stdout)
    ids = {m["name"]: m["id"] for m in raw["machines"]}
    assert raw["baseline"] == ids["cli-b"]
    (cmp_row,) = raw["rows"]
    cell = cmp_row["cells"][ids["cli-a"]]

    out = cli("compare", "--machines", "cli-a,cli-b", "--baseline", "cli-b", "--format", "bencher")
    assert out.returncode == 0, out.stderr
    bmf = json.loads(out.stdout)
    latency = {"value": cell["figure"], "lower_value": cell["ci_low"], "upper_value": cell["ci_high"]}
    assert bmf == {"syscall.getppid": {"latency": latency}}
    csv_lines = cli("compare", "--machines", "cli-a,cli-b", "--csv").stdout.splitlines()
    assert csv_lines[0].startswith("kernel,params,unit,cli-a figure,") and len(csv_lines) == 2

    # The gate: a run against itself is no regression. A machine's two runs (by run and by name) are an A/A
    # pair, and a statistical rule flags some A/A pairs: how often is `make bench` section `aa`'s figure
    # (docs/fidelity.md), not this test's (a clean-clone run saw cli-a's two quick runs 7 % apart, flagged,
    # on a host whose getppid read 240 ns where it reads 165 quiet). Here the exit code must say what the
    # summary says: 0 with none slower, 1 with one.
    out = cli("gate", "--run", run2, "--baseline-run", run2)
    assert out.returncode == 0 and "its own baseline" in out.stdout, out
    for args, head in (
        (("--run", run2, "--baseline-run", run1), f"gate: run {run2} against run {run1}: "),
        (("--machine", "cli-a", "--baseline-machine", "cli-a"), "gate: "),
    ):
        out = cli("gate", *args)
        assert out.returncode in (0, 1), out.stdout + out.stderr
        summary = f"1 compared, {out.returncode} significantly slower"
        assert head in out.stdout and summary in out.stdout, out
    out = cli("gate", "--machine", "cli-b", "--baseline-machine", "cli-b")
    assert out.returncode == 2 and "two are needed" in out.stderr, out


def test_errors_are_one_line_with_the_exit_code(logged_in: Fleet) -> None:
    cli = logged_in.cli
    # The server's 422, its loc and msg readable.
    out = cli("run", "--machine", "cli-a", "--kernel", "syscall.getppid:nope=1")
    assert out.returncode == 2, out
    assert len(out.stderr.splitlines()) == 1 and "422" in out.stderr and "nope" in out.stderr, out.stderr
    out = cli("run", "--machine", "no-such-machine", "--kernel", "syscall.getppid")
    assert out.returncode == 2 and "unknown machine" in out.stderr
    out = cli("gate")
    assert out.returncode == 2 and out.stderr.count("\n") == 1
    out = cli("gate", "--run", "no-such-run", "--baseline-run", "other-run")
    assert out.returncode == 2 and "unknown run" in out.stderr, out.stderr
    assert cli("frobnicate").returncode == 2
    # Nothing listens: exit 3.
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    out = cli("machines", "--server", f"http://127.0.0.1:{port}", env={"CTXBENCH_TOKEN": "x"})
    assert out.returncode == 3 and "127.0.0.1" in out.stderr, out
    # The saved token goes to the saved server only: elsewhere, no credential is sent.
    elsewhere = logged_in.server.base_url.replace("127.0.0.1", "localhost")
    assert cli("machines", "--server", elsewhere).returncode == 3


def test_version_help_and_completion(logged_in: Fleet) -> None:
    out = logged_in.cli("--version")
    assert out.returncode == 0 and re.fullmatch(r"ctxbench \S+\+\w+\n", out.stdout), out.stdout
    assert logged_in.cli("help").returncode == 0
    assert "--profile" in logged_in.cli("help", "run").stdout
    bash = logged_in.cli("completion", "bash").stdout
    assert subprocess.run(["bash", "-n"], input=bash, text=True).returncode == 0
    # The script completes machine names from the server: run it the way bash's TAB does.
    tab = "COMP_WORDS=(ctxbench run --machine cli-); COMP_CWORD=3; _ctxbench; echo ${COMPREPLY[@]}"
    script = f"{bash}\n{tab}\n"
    env = {**os.environ, "PATH": f"{CLI.parent}:{os.environ['PATH']}",
           "HOME": str(logged_in.home), "XDG_CONFIG_HOME": str(logged_in.home / "config")}  # fmt: skip
    out = subprocess.run(["bash", "-c", script], capture_output=True, text=True, env=env, timeout=30)
    assert out.stdout.split() == ["cli-a", "cli-b"], out
    for shell in ("zsh", "fish"):
        assert logged_in.cli("completion", shell).stdout.count("__complete machines") >= 1
    if shutil.which("fish"):  # where fish is installed, its completion of a kernel id too
        fish = logged_in.cli("completion", "fish").stdout
        script = fish + "\ncomplete -C 'ctxbench run --kernel syscall.getp'\n"
        out = subprocess.run(["fish", "-c", script], capture_output=True, text=True, env=env, timeout=30)
        assert [ln.split("\t")[0] for ln in out.stdout.splitlines()] == ["syscall.getppid"], out
