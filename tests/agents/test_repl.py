"""The persistent REPL, in the real sandboxes: bubblewrap (required in CI) and the subprocess
fallback. Every test runs real child processes and checks what the code saw and returned."""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from agentloom.agents.repl import CallbackError, HostFunction, Repl
from agentloom.errors import UpstreamError
from agentloom.json_types import JSONValue
from agentloom.tools.sandbox import BwrapSandbox, Limits, Sandbox, SubprocessSandbox
from tests.agents.code_agents import children

SYSTEM_PYTHON = "/usr/bin/python3"  # as root, the sandbox user cannot run an interpreter in /root
LIMITS = Limits(wall_seconds=20.0, cpu_seconds=60, memory_bytes=1 << 30, output_bytes=64 << 10)


@pytest.fixture(params=["bwrap", "subprocess"])
def sandbox(request: pytest.FixtureRequest) -> Sandbox:
    if request.param == "bwrap":
        request.getfixturevalue("requires_sandbox")
        return BwrapSandbox()
    return SubprocessSandbox(python=SYSTEM_PYTHON if os.geteuid() == 0 else "")


@pytest.fixture
async def repl(sandbox: Sandbox) -> AsyncIterator[Repl]:
    async with Repl(sandbox=sandbox, limits=LIMITS) as repl:
        yield repl


async def test_variables_and_imports_persist(repl: Repl) -> None:
    first = await repl.execute("import json\nx = 20\ndef double(v):\n    return 2 * v\n")
    second = await repl.execute("print(json.dumps({'x': double(x) + 2}))")
    assert first.ok, first
    assert second.stdout == '{"x": 42}\n'


async def test_a_last_expression_is_echoed_like_a_repl(repl: Repl) -> None:
    result = await repl.execute("y = [1, 2]\ny + [3]")
    assert result.stdout == "[1, 2, 3]\n"
    assert (await repl.execute("None")).stdout == ""


async def test_output_is_captured_per_execution_not_mixed_into_the_channel(repl: Repl) -> None:
    code = (
        "import sys, subprocess\n"
        "print('out', 1)\n"
        "print('err', 2, file=sys.stderr)\n"
        "subprocess.run([sys.executable, '-c', 'print(\"from a subprocess\")'])\n"
        'print(\'{"op": "result"}\')\n'
    )
    result = await repl.execute(code)
    assert result.ok, result
    assert result.stdout == 'out 1\n{"op": "result"}\nfrom a subprocess\n'
    assert result.stderr == "err 2\n"
    assert (await repl.execute("print('next')")).stdout == "next\n"


async def test_a_runtime_error_is_a_traceback_of_the_users_frames(repl: Repl) -> None:
    await repl.execute("def ratio(a, b):\n    return a / b\nkept = 1\n")
    result = await repl.execute("print('before')\nratio(1, 0)\nprint('after')")
    assert result.stdout == "before\n"
    assert result.error is not None
    assert result.error.startswith("Traceback (most recent call last):")
    assert 'File "<cell-2>", line 2, in <module>' in result.error
    assert 'File "<cell-1>", line 2, in ratio' in result.error
    assert result.error.endswith("ZeroDivisionError: division by zero")
    assert "_repl_child" not in result.error
    assert '"<string>"' not in result.error
    assert not result.state_lost
    assert (await repl.execute("kept")).stdout == "1\n"  # the process lived on


async def test_a_syntax_error_is_reported(repl: Repl) -> None:
    result = await repl.execute("x = (1,")
    assert result.error is not None
    assert "SyntaxError" in result.error
    assert '"<cell-1>", line 1' in result.error


async def test_host_functions_round_trip_nested_json(sandbox: Sandbox) -> None:
    seen: list[JSONValue] = []

    async def lookup(query: dict[str, JSONValue], limit: int = 1) -> JSONValue:
        """Look something up."""
        seen.append(query)
        return {"query": query, "hits": [[1, 2.5, None, True], {"é": "ü"}][:limit]}

    async with Repl(callbacks={"lookup": lookup}, sandbox=sandbox, limits=LIMITS) as repl:
        code = (
            "r = lookup({'a': [1, {'b': None}], 'ü': 'x'}, limit=2)\n"
            "print(r['hits'][1]['é'], r['query']['a'][1], r['hits'][0])\n"
            "print(lookup.__doc__.splitlines()[0][:20], lookup.__doc__.splitlines()[-1])\n"
        )
        result = await repl.execute(code)
    assert result.ok, result
    assert result.stdout.splitlines() == [
        "ü {'b': None} [1, 2.5, None, True]",
        "lookup(query: dict[s Look something up.",
    ]
    assert seen == [{"a": [1, {"b": None}], "ü": "x"}]


async def test_host_function_failures_raise_in_the_code(sandbox: Sandbox) -> None:
    async def refuse(reason: str) -> JSONValue:
        raise CallbackError(f"refused: {reason}")

    async def upstream(prompt: str) -> JSONValue:
        raise UpstreamError("the model is down", status=503)

    callbacks: dict[str, HostFunction] = {"refuse": refuse, "upstream": upstream}
    async with Repl(callbacks=callbacks, sandbox=sandbox, limits=LIMITS) as repl:
        caught = await repl.execute(
            "try:\n    refuse('no')\nexcept HostError as e:\n    print('caught', e)\n"
        )
        uncaught = await repl.execute("upstream('hi')")
        wrong = await repl.execute("refuse(1, 2)")
        not_json = await repl.execute("refuse({1, 2})")
    assert caught.stdout == "caught refused: no\n"
    assert uncaught.error is not None
    assert uncaught.error.endswith("HostError: the model is down")
    assert wrong.error is not None
    assert "HostError: refuse(): too many positional" in wrong.error
    assert not_json.error is not None
    assert "refuse() takes JSON values only" in not_json.error


async def test_a_batch_callback_runs_its_items_concurrently(sandbox: Sandbox) -> None:
    started: list[str] = []
    everyone_started = asyncio.Event()

    async def one(prompt: str, size: int) -> str:
        started.append(prompt)
        if len(started) == size:
            everyone_started.set()
        await everyone_started.wait()  # sequential execution would never get past this
        return prompt.upper()

    async def llm_batch(prompts: list[str]) -> JSONValue:
        return list(await asyncio.gather(*(one(p, len(prompts)) for p in prompts)))

    async with Repl(callbacks={"llm_batch": llm_batch}, sandbox=sandbox, limits=LIMITS) as repl:
        result = await repl.execute("print(llm_batch(['a', 'b', 'c', 'd']))", timeout=10)
    assert result.ok, result
    assert result.stdout == "['A', 'B', 'C', 'D']\n"
    assert sorted(started) == ["a", "b", "c", "d"]


async def test_final_gives_a_value_per_execution(repl: Repl) -> None:
    given = await repl.execute("answer = {'total': 3, 'items': ['a', 'b']}\nFINAL(answer)")
    none = await repl.execute("FINAL(None)")
    absent = await repl.execute("print(answer['total'])")
    assert (given.final, given.final_set) == ({"total": 3, "items": ["a", "b"]}, True)
    assert (none.final, none.final_set) == (None, True)
    assert (absent.final, absent.final_set, absent.stdout) == (None, False, "3\n")


async def test_a_timeout_kills_the_process_and_the_next_call_starts_fresh(repl: Repl) -> None:
    await repl.set_variable("context", "kept by the host")
    await repl.execute("mine = 1")
    result = await repl.execute("while True:\n    pass\n", timeout=1)
    assert result.timed_out
    assert result.state_lost
    assert result.error is not None
    assert "variables are lost" in result.error
    assert children() == []  # killed and reaped at once
    after = await repl.execute("print(context)\nprint('mine' in globals())")
    assert after.stdout == "kept by the host\nFalse\n"
    assert repl.restarts == 1


async def test_a_dying_process_is_reported_and_replaced(repl: Repl) -> None:
    died = await repl.execute("import os\nos._exit(3)")
    assert died.state_lost
    assert died.error is not None
    assert "died" in died.error
    assert "variables are lost" in died.error
    assert (await repl.execute("print('alive')")).stdout == "alive\n"


async def test_a_large_variable_is_not_limited_by_the_pipe(repl: Repl) -> None:
    context = ("line é " * 16 + "\n") * 45_000  # 5.1 M characters, non-ASCII
    await repl.set_variable("context", context)
    result = await repl.execute("print(len(context), context.count('é'), context[-9:-1])")
    assert result.stdout == f"{len(context)} {context.count('é')} {context[-9:-1]}\n"


async def test_output_past_the_cap_is_cut(sandbox: Sandbox) -> None:
    limits = Limits(wall_seconds=20.0, cpu_seconds=60, output_bytes=1000)
    async with Repl(sandbox=sandbox, limits=limits) as repl:
        result = await repl.execute("print('x' * 5000)\nprint('more')\ny = 1")
        small = await repl.execute("print(y)")
    assert result.truncated
    assert result.ok
    assert result.stdout == "x" * 1000
    assert not small.truncated
    assert small.stdout == "1\n"


async def test_closing_reaps_the_process_and_removes_the_workdir(sandbox: Sandbox) -> None:
    repl = Repl(sandbox=sandbox, limits=LIMITS)
    await repl.execute("open('scratch.txt', 'w').write('x')")
    workdir = repl.workdir
    assert workdir is not None
    assert (workdir / "scratch.txt").exists()
    assert children() != []
    await repl.aclose()
    assert children() == []
    assert not workdir.exists()
    with pytest.raises(RuntimeError, match="closed"):
        await repl.execute("1")


async def test_a_given_workdir_is_kept(sandbox: Sandbox, tmp_path: Path) -> None:
    async with Repl(sandbox=sandbox, workdir=tmp_path, limits=LIMITS) as repl:
        result = await repl.execute("open('notes.txt', 'w').write('hi')")
    assert result.ok, result
    assert (tmp_path / "notes.txt").read_text() == "hi"


async def test_a_variable_name_must_be_a_python_name(repl: Repl) -> None:
    with pytest.raises(ValueError, match="not a Python name"):
        await repl.set_variable("not a name", 1)
