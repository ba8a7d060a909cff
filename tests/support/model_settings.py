"""A ``pdbench evolve --model-settings`` file for the loopback server's model, as the payne2025 suite sets a model."""

from __future__ import annotations

PAYNE_SETTINGS = """\
openai/test-model:
  temperature: 0.7
  max_tokens: 1000
  prompts: {template_dir: prompts/suites/payne2025}
  parse: {reader: last_line, max_retries: 0, on_failure: cooperate}
"""
