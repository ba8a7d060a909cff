"""Players: classic strategies (pure, synchronous) and, later, model-backed agents (awaited)."""
