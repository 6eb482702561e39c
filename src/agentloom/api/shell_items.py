"""Items of the shell and file-editing tools the client runs: ``shell`` (``shell_call`` /
``shell_call_output``), ``local_shell`` (``local_shell_call`` / ``local_shell_call_output``)
and ``apply_patch`` (``apply_patch_call`` / ``apply_patch_call_output``), in the shapes the
``openai`` package's types and the Agents SDK use.
"""

from __future__ import annotations

from typing import Annotated, ClassVar, Literal, TypeAlias

from pydantic import Field, model_validator

from agentloom.api.integers import Int64
from agentloom.api.wire import Nullable, WireModel

CallStatus = Literal["in_progress", "completed", "incomplete"]


class ToolCaller(WireModel):
    """Who called the tool: the model itself (``direct``) or a program it ran."""

    type: Literal["direct", "program"]
    caller_id: str | None = None


class ShellAction(WireModel):
    """The commands a ``shell_call`` asks the client to run, in order."""

    commands: list[str] = Field(default_factory=list)
    timeout_ms: Int64 | None = None
    max_output_length: Int64 | None = None


class ShellEnvironment(WireModel):
    """Where the commands run; here always the client's machine (``local``)."""

    type: str = "local"


class ShellCall(WireModel):
    type: Literal["shell_call"] = "shell_call"
    ID_PREFIX: ClassVar[str] = "sh"  # of the ids the server gives it
    id: str | None = None
    call_id: str
    action: ShellAction
    environment: Nullable[ShellEnvironment] = None
    caller: ToolCaller | None = None
    status: CallStatus | None = None


class ExitOutcome(WireModel):
    type: Literal["exit"] = "exit"
    exit_code: Int64


class TimeoutOutcome(WireModel):
    type: Literal["timeout"] = "timeout"


ShellOutcome: TypeAlias = Annotated[ExitOutcome | TimeoutOutcome, Field(discriminator="type")]


class ShellOutput(WireModel):
    """What one command printed, and how it ended."""

    stdout: str = ""
    stderr: str = ""
    outcome: ShellOutcome


class ShellCallOutput(WireModel):
    type: Literal["shell_call_output"] = "shell_call_output"
    ID_PREFIX: ClassVar[str] = "sho"  # of the ids the server gives it
    id: str | None = None
    call_id: str
    output: list[ShellOutput]
    max_output_length: Nullable[Int64] = None
    caller: ToolCaller | None = None
    status: CallStatus | None = None

    def output_text(self) -> str:
        """What the model is told: each command's output and how it ended."""
        return "\n\n".join(_told(index, part) for index, part in enumerate(self.output)) or (
            "(no output)"
        )


def _told(index: int, part: ShellOutput) -> str:
    if isinstance(part.outcome, ExitOutcome):
        ending = f"exit code {part.outcome.exit_code}"
    else:
        ending = "timed out"
    lines = [f"[command {index + 1}: {ending}]"]
    if part.stdout:
        lines.append(f"stdout:\n{part.stdout}")
    if part.stderr:
        lines.append(f"stderr:\n{part.stderr}")
    return "\n".join(lines)


class LocalShellAction(WireModel):
    """One command (its argv) a ``local_shell_call`` asks the client to run."""

    type: Literal["exec"] = "exec"
    command: list[str] = Field(default_factory=list)
    env: dict[str, str] = Field(default_factory=dict)
    timeout_ms: Int64 | None = None
    user: str | None = None
    working_directory: str | None = None


class LocalShellCall(WireModel):
    type: Literal["local_shell_call"] = "local_shell_call"
    ID_PREFIX: ClassVar[str] = "lsh"  # of the ids the server gives it
    id: str | None = None
    call_id: str
    action: LocalShellAction
    status: CallStatus | None = None


class LocalShellCallOutput(WireModel):
    """The output of a ``local_shell_call``. OpenAI's reference names the call by ``id``; the
    Agents SDK by ``call_id``: either is taken."""

    type: Literal["local_shell_call_output"] = "local_shell_call_output"
    ID_PREFIX: ClassVar[str] = "lsho"  # of the ids the server gives it
    id: str | None = None
    call_id: str = ""
    output: str
    status: CallStatus | None = None

    @model_validator(mode="after")
    def _call_named(self) -> LocalShellCallOutput:
        if not self.call_id:
            if not self.id:
                raise ValueError("a local_shell_call_output names its call (call_id)")
            self.call_id = self.id
        return self

    def output_text(self) -> str:
        return self.output


class CreateFile(WireModel):
    type: Literal["create_file"] = "create_file"
    path: str
    diff: str


class UpdateFile(WireModel):
    type: Literal["update_file"] = "update_file"
    path: str
    diff: str


class DeleteFile(WireModel):
    type: Literal["delete_file"] = "delete_file"
    path: str


PatchOperation: TypeAlias = Annotated[
    CreateFile | UpdateFile | DeleteFile, Field(discriminator="type")
]


class ApplyPatchCall(WireModel):
    type: Literal["apply_patch_call"] = "apply_patch_call"
    ID_PREFIX: ClassVar[str] = "apc"  # of the ids the server gives it
    id: str | None = None
    call_id: str
    operation: PatchOperation
    caller: ToolCaller | None = None
    status: Literal["in_progress", "completed"] | None = None


class ApplyPatchCallOutput(WireModel):
    type: Literal["apply_patch_call_output"] = "apply_patch_call_output"
    ID_PREFIX: ClassVar[str] = "apco"  # of the ids the server gives it
    id: str | None = None
    call_id: str
    output: str | None = None
    caller: ToolCaller | None = None
    status: Literal["completed", "failed"] | None = None

    def output_text(self) -> str:
        said = f": {self.output}" if self.output else ""
        return f"apply_patch {self.status or 'completed'}{said}"


ShellKindCall: TypeAlias = ShellCall | LocalShellCall | ApplyPatchCall
ShellKindOutput: TypeAlias = ShellCallOutput | LocalShellCallOutput | ApplyPatchCallOutput
