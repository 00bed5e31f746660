"""The tools on top of the ops: CLI, bench and tune harnesses, the tuning cache, reports, SDK."""
