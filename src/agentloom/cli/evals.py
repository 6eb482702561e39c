"""``agentloom eval``: run agents over a task set and score them (``run``), compare two result
files (``compare``), list the task sets shipped in the package (``sets``). See docs/evals.md."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import click

from agentloom.cli.options import AgentChoice, agent_options, clean_errors, fail
from agentloom.frozen import frozen

if TYPE_CHECKING:
    from agentloom.agents.connection import Connection
    from agentloom.evals.records import PricedRecord, RunFile, TaskRecord
    from agentloom.evals.report import EvalResult
    from agentloom.evals.runner import EvalSettings
    from agentloom.evals.tasks import TaskSet
    from agentloom.llm.client import LLM

__all__ = ["evals"]

DEFAULT_FOLDER = Path("agentloom-eval")


@click.group(name="eval")
def evals() -> None:
    """Score agent strategies on a task set (GAIA-, FRAMES- and LifelongAgent-style)."""


@evals.command()
def sets() -> None:
    """List the task sets shipped with agentloom (give a name as TASKS)."""
    from agentloom.evals.tasks import SHIPPED, load_tasks

    for name in SHIPPED:
        tasks = load_tasks(name)
        kinds = ", ".join(sorted(tasks.kinds()))
        click.echo(f"{name}  {len(tasks.tasks)} tasks ({kinds})  {tasks.path}")


@evals.command()
@agent_options
@click.argument("tasks")
@click.option(
    "--strategy",
    "strategies",
    multiple=True,
    metavar="[LABEL=]AGENT[:KEY=VALUE,...]",
    help="A configuration to score (repeatable; default: --agent). Keys: model, max_turns, "
    "tools (a+b), monitor_operative's axes.",
)
@click.option(
    "--concurrency",
    default=4,
    show_default=True,
    type=click.IntRange(min=1),
    help="Tasks run at once.",
)
@click.option(
    "--task-timeout",
    default=300.0,
    show_default=True,
    type=click.FloatRange(min=0, min_open=True),
    help="Seconds a task (all its sessions) may take; past it the task scores 0.",
)
@click.option(
    "--carry",
    type=click.Choice(["conversation", "memory", "none"]),
    default="conversation",
    show_default=True,
    help="What sessions tasks carry from one session to the next.",
)
@click.option(
    "--index",
    "index_kind",
    type=click.Choice(["auto", "server", "local"]),
    default="auto",
    show_default=True,
    help="Where retrieval documents are indexed: the server's vector "
    "store API, or in this process (auto: the server's when it has the API).",
)
@click.option(
    "--documents",
    multiple=True,
    type=click.Path(exists=True, path_type=Path),
    help="More documents for the index (a file or a folder; repeatable).",
)
@click.option(
    "--ingest-timeout",
    default=300.0,
    show_default=True,
    type=click.FloatRange(min=0, min_open=True),
    help="Seconds the documents may take to index.",
)
@click.option(
    "--run-file",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Results, appended as tasks finish; a rerun resumes [default: agentloom-eval/NAME.jsonl].",
)
@click.option(
    "--output",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="The result JSON [default: the run file's name, .json].",
)
@click.option("--fresh", is_flag=True, help="Start the run file over instead of resuming it.")
@click.option("--retry-failed", is_flag=True, help="Run again the tasks that erred or timed out.")
@click.option(
    "--prices",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    default=None,
    help="Price table (TOML: dollars per million tokens per model) for the cost column.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the result JSON instead of tables.")
def run(
    tasks: str,
    choice: AgentChoice,
    strategies: tuple[str, ...],
    concurrency: int,
    task_timeout: float,
    carry: Literal["conversation", "memory", "none"],
    index_kind: Literal["auto", "server", "local"],
    documents: tuple[Path, ...],
    ingest_timeout: float,
    run_file: Path | None,
    output: Path | None,
    fresh: bool,
    retry_failed: bool,
    prices: Path | None,
    as_json: bool,
) -> None:
    """Run each strategy over TASKS (a JSONL file, or a name from `agentloom eval sets`)."""
    from agentloom.evals.prices import load_prices
    from agentloom.evals.records import RunFile
    from agentloom.evals.runner import EvalSettings
    from agentloom.evals.strategies import parse_strategy
    from agentloom.evals.tasks import load_tasks

    with clean_errors():
        task_set = load_tasks(tasks)
        table = load_prices(prices)
        parsed = tuple(parse_strategy(text) for text in strategies or (choice.agent,))
        connection = choice.connection()
        run_path = run_file or DEFAULT_FOLDER / f"{Path(tasks).stem}.jsonl"
        records = RunFile.open(run_path, task_set, fresh=fresh)
        settings = EvalSettings(
            model=connection.model,
            strategies=parsed,
            tools=choice.tools,
            max_turns=choice.max_turns,
            instructions=choice.instructions,
            concurrency=concurrency,
            task_timeout=task_timeout,
            carry=carry,
            retry_failed=retry_failed,
            settings=connection.settings,
        )
        index = _IndexChoice(index_kind, documents, ingest_timeout)
        done = _run_to_end(task_set, settings, records, connection, index)
    from agentloom.evals.report import price

    result = _result(task_set, records, price(done, table))
    (output or run_path.with_suffix(".json")).write_text(_rendered(result), encoding="utf-8")
    _print(result, as_json)


@frozen
class _IndexChoice:
    """Where retrieval documents go (``--index``), the extra ones (``--documents``), and how
    long indexing them may take."""

    kind: Literal["auto", "server", "local"]
    extra: tuple[Path, ...]
    timeout: float

    def documents(self, tasks: TaskSet) -> list[Path]:
        found = [*tasks.documents()]
        for given in self.extra:
            found += (
                sorted(p for p in given.rglob("*") if p.is_file()) if given.is_dir() else [given]
            )
        return list(dict.fromkeys(path.resolve() for path in found))


def _run_to_end(
    tasks: TaskSet,
    settings: EvalSettings,
    records: RunFile,
    connection: Connection,
    index: _IndexChoice,
) -> list[TaskRecord]:
    total = len(tasks.tasks) * len(settings.strategies)
    try:
        return asyncio.run(
            _run(tasks, settings, records, connection, index, _Progress(total, records))
        )
    except KeyboardInterrupt:
        fail(f"interrupted: what finished is in {records.path}; run the same command to resume")


class _Progress:
    """One line on stderr per finished task."""

    def __init__(self, total: int, records: RunFile) -> None:
        self.total = total
        self.done = len(records.records)

    def __call__(self, record: TaskRecord) -> None:
        self.done = min(self.done + 1, self.total)
        how = record.status if record.error is None else f"{record.status}: {record.error}"
        click.echo(
            f"[{self.done}/{self.total}] {record.strategy} {record.task_id}: "
            f"{record.score:.2f} ({how}, {record.latency_s:.2f} s)",
            err=True,
        )


async def _run(
    tasks: TaskSet,
    settings: EvalSettings,
    records: RunFile,
    connection: Connection,
    index: _IndexChoice,
    progress: _Progress,
) -> list[TaskRecord]:
    import tempfile

    from agentloom.evals.documents import open_index
    from agentloom.evals.runner import run_eval

    def llms(model: str) -> LLM:
        return replace(connection, model=model).llm()

    with tempfile.TemporaryDirectory(prefix="agentloom-eval-") as scratch:
        if "retrieval" not in tasks.kinds():
            return await run_eval(
                tasks, settings, records, llms, scratch=Path(scratch), on_record=progress
            )
        async with open_index(
            index.kind,
            index.documents(tasks),
            base_url=connection.base_url,
            api_key=connection.api_key,
            embeddings=connection.settings.embeddings,
            deadline=index.timeout,
        ) as found:
            return await run_eval(
                tasks,
                settings,
                records,
                llms,
                scratch=Path(scratch),
                index=found,
                on_record=progress,
            )


def _result(tasks: TaskSet, records: RunFile, priced: list[PricedRecord]) -> EvalResult:
    from agentloom.evals.report import EvalResult, summarise

    return EvalResult(
        tasks=str(tasks.path),
        tasks_digest=tasks.digest,
        run_file=str(records.path),
        summaries=tuple(summarise(priced)),
        results=tuple(priced),
    )


def _rendered(result: EvalResult) -> str:
    from agentloom.evals.report import render

    return render(result)


def _print(result: EvalResult, as_json: bool) -> None:
    from agentloom.evals.report import score_table, summary_table

    if as_json:
        click.echo(_rendered(result), nl=False)
        return
    click.echo(summary_table(result.summaries))
    click.echo(score_table(result.results), nl=False)
    failed = [r for r in result.results if r.status != "ok"]
    if failed:
        click.echo(
            f"{len(failed)} task(s) failed; first: {failed[0].task_id}: {failed[0].error}", err=True
        )


@evals.command()
@click.argument("first", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.argument("second", type=click.Path(exists=True, dir_okay=False, path_type=Path))
def compare(first: Path, second: Path) -> None:
    """Two result files side by side: their summaries, then each task's scores."""
    from agentloom.evals.report import load_result, score_table, summarise, summary_table

    with clean_errors():
        a, b = load_result(first), load_result(second)
    if a.tasks_digest != b.tasks_digest:
        click.echo("note: the two results are of different task files", err=True)
    results = [
        record.model_copy(update={"strategy": f"{name}:{record.strategy}"})
        for name, result in (("A", a), ("B", b))
        for record in result.results
    ]
    click.echo(f"A = {first}\nB = {second}\n")
    click.echo(summary_table(summarise(results)))
    click.echo(score_table(results), nl=False)
