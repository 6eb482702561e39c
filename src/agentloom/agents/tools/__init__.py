"""Tools agents can call: the seam and the built-ins."""

from agentloom.agents.tools.base import PythonFunctionTool, Tool, ToolError, function_tool

__all__ = ["PythonFunctionTool", "Tool", "ToolError", "function_tool"]
