"""Upload a dataset folder to the Hugging Face Hub (``huggingface_hub``), or list what would go."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import ConfigError, EnvFactoryError

__all__ = ["PushResult", "list_upload_files", "push_dataset"]

# What a release is: the card, the Parquet files and the environment bundles (envs/, see
# bundle.py). The work folder (.synth/) stays local.
_PATTERNS = ("README.md", "data/*.parquet", "sharegpt/*.parquet", "envs/*/*/*", "envs/*/*/states/**/*")


@dataclass
class PushResult:
    repo_id: str
    files: list[tuple[str, int]] = field(default_factory=list)  # (path in the repo, bytes)
    dry_run: bool = True
    url: str | None = None
    private: bool = False

    @property
    def total_bytes(self) -> int:
        return sum(s for _, s in self.files)


def list_upload_files(path: str | os.PathLike) -> list[tuple[str, int]]:
    """(repo path, size in bytes) of every file ``push`` uploads, sorted."""
    root = Path(path)
    if not (root / "README.md").is_file():
        raise ConfigError(f"{root}: no dataset card (README.md); run 'envfactory synth' first")
    out = []
    for pat in _PATTERNS:
        for p in sorted(root.glob(pat)):
            if p.is_file():
                out.append((p.relative_to(root).as_posix(), p.stat().st_size))
    if not any(f.endswith(".parquet") for f, _ in out):
        raise ConfigError(f"{root}: no Parquet files under data/; run 'envfactory synth' first")
    return sorted(out)


def _check_repo_id(repo_id: str) -> None:
    parts = repo_id.split("/")
    if len(parts) != 2 or not all(parts):
        raise ConfigError(f"--repo-id must look like ORG/NAME, got {repo_id!r}")


def push_dataset(
    path: str | os.PathLike,
    repo_id: str,
    *,
    private: bool = False,
    dry_run: bool = False,
    token: str | None = None,
    commit_message: str | None = None,
) -> PushResult:
    """Create the dataset repo if needed and upload the card and Parquet files.

    ``dry_run``: only list the files (no token, no network). The token is ``token``, else
    ``HF_TOKEN``, else the user's ``hf auth login``.
    """
    _check_repo_id(repo_id)
    files = list_upload_files(path)
    res = PushResult(repo_id=repo_id, files=files, dry_run=dry_run, private=private)
    if dry_run:
        return res
    import huggingface_hub as hh

    tok = token or os.environ.get("HF_TOKEN") or hh.get_token()
    if not tok:
        raise ConfigError("no Hugging Face token: set HF_TOKEN or run 'hf auth login'")
    api = hh.HfApi(token=tok)
    try:
        api.create_repo(repo_id, repo_type="dataset", private=private, exist_ok=True)
        info = api.upload_folder(
            folder_path=str(path),
            repo_id=repo_id,
            repo_type="dataset",
            allow_patterns=[f for f, _ in files],
            commit_message=commit_message or f"envfactory: upload {len(files)} files",
        )
    except Exception as e:  # network, auth, quota: one clear line
        raise EnvFactoryError(f"push to {repo_id} failed: {e}") from e
    res.url = getattr(info, "commit_url", None) or f"https://huggingface.co/datasets/{repo_id}"
    return res
