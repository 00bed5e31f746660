"""The C core: dispatch, thread pool, workspace (C), and their bindings (_core)."""
