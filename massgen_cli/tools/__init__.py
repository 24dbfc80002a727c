"""Tools agents call inside a step: the file tools over confined roots, command execution, custom
Python functions, and the toolbox that runs them. A tool's failure is a tool result, never an
exception that ends a step. Sits beside ``backends`` (it uses their ``ToolSpec``)."""
