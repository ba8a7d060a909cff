"""``pdbench ui``: serve the dashboard, warning before it is reachable beyond this machine."""

from __future__ import annotations

import os
from typing import Annotated

import typer
from rich.markup import escape

from harness.cli.base import ResultsOpt, app, err
from harness.errors import StoreError
from harness.ui.launch import DEFAULT_PORT


@app.command()
def ui(
    results: ResultsOpt = None,
    port: Annotated[int, typer.Option(min=1, max=65535, help="Port to serve on.")] = DEFAULT_PORT,
    host: Annotated[
        str,
        typer.Option(
            help="Address to bind. Default loopback only; anything else lets whoever reaches it run paid "
            "experiments with your API keys and read your results."
        ),
    ] = "127.0.0.1",
) -> None:
    """Open the dashboard (Streamlit): run experiments, view results, replay games, tournaments.

    Example: `pdbench ui --results results --port 8501`, then open http://127.0.0.1:8501
    """
    from harness.config.run_settings import results_dir
    from harness.ui.host_guard import is_loopback
    from harness.ui.launch import serve

    if not is_loopback(host):
        err.print(
            f"[yellow]warning:[/yellow] serving on {escape(host)}, beyond this machine: anyone who can reach "
            f"{escape(host)}:{port} can run experiments that spend your API keys (the OPENAI_API_KEY and "
            "ANTHROPIC_API_KEY of this environment) and can read every result in the folder. The page has no "
            "login; keep the default 127.0.0.1 unless every machine that can reach it is yours.",
            highlight=False,
            soft_wrap=True,
        )
    folder = results_dir(results).expanduser().resolve()
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise StoreError(
            f"cannot create the results folder {folder}: {exc.strerror or exc}. Choose another with --results DIR."
        ) from None
    if not os.access(folder, os.W_OK | os.X_OK):
        err.print(
            f"[yellow]warning:[/yellow] the results folder {folder} is read-only: the dashboard shows its runs, "
            "but cannot save new ones (give a writable folder with --results DIR to run experiments)"
        )
    serve(folder, port, host)
