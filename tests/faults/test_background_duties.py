"""The server's background duties (heartbeat and housekeeping, the job runner, the usage
ledger, the key watch, the notification listener) run supervised: one that fails is logged
and started again, and the others go on. Before, one failure ended the lifespan's task group:
every duty stopped and the database pools closed under the requests still being served."""

from __future__ import annotations

import anyio
import anyio.lowlevel
import pytest

from agentloom.server import runtime
from agentloom.server.runtime import Duties, supervised


async def test_a_failing_duty_is_restarted_and_the_others_go_on(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(runtime, "RESTART_AFTER", 0.01)
    runs = 0
    beats = 0
    third_run, beating_on = anyio.Event(), anyio.Event()

    async def fails_twice() -> None:
        nonlocal runs
        runs += 1
        if runs <= 2:
            raise RuntimeError(f"failure {runs}")
        third_run.set()
        await anyio.sleep_forever()

    async def beating() -> None:
        nonlocal beats
        while True:
            beats += 1
            if third_run.is_set():
                beating_on.set()  # still beating after the other duty's failures
            await anyio.sleep(0.01)

    with anyio.fail_after(10):
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(supervised, "flaky duty", fails_twice)
            tasks.start_soon(supervised, "heartbeat", beating)
            await beating_on.wait()
            tasks.cancel_scope.cancel()

    failures = [r for r in caplog.records if "flaky duty failed" in r.getMessage()]
    assert len(failures) == 2
    assert all(r.exc_info is not None for r in failures)  # logged with the traceback


async def test_a_duty_that_returns_is_done() -> None:
    ran = 0

    async def warm_up() -> None:
        nonlocal ran
        ran += 1

    with anyio.fail_after(10):
        await supervised("warm-up", warm_up)

    assert ran == 1


async def test_what_a_duty_does_is_kept_for_readiness(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(runtime, "RESTART_AFTER", 60)  # the failure stays while we look
    states = Duties()
    failed = anyio.Event()

    async def fails() -> None:
        failed.set()
        raise RuntimeError("the pool is gone")

    assert states.problem("job runner") == "it has not started"
    with anyio.fail_after(10):
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(supervised, "job runner", anyio.sleep_forever, states)
            tasks.start_soon(supervised, "flaky", fails, states)
            await failed.wait()
            await anyio.lowlevel.checkpoint()
            assert states.problem("job runner") is None  # running
            assert "RuntimeError: the pool is gone" in (states.problem("flaky") or "")
            tasks.cancel_scope.cancel()
    await supervised("warm-up", anyio.lowlevel.checkpoint, states)
    assert states.problem("warm-up") == "it has stopped"
