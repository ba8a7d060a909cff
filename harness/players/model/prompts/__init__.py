"""What a model is told: the prompt builder (``builder``: system, round and question messages from the Jinja
templates in ``prompts/`` and the personas in ``personas/``), the variables a template sees (``context``), where
templates and personas are found and which paths are refused (``files``), and the sandbox's limits on a
template's work and output (``sandbox``, ``sizes``)."""
