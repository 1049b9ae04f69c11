"""Where BFCL's data lives: found from the installed package without importing it."""

from __future__ import annotations

import sys

from envfactory.bfcl_data import find_bfcl_data_dir


def _fake_package(root, *, data: bool):
    pkg = root / "bfcl_eval"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("raise RuntimeError('locating the data must not import the package')\n")
    if data:
        (pkg / "data").mkdir()
        (pkg / "data" / "BFCL_v4_simple_python.json").write_text("{}\n")
    return pkg


def test_the_data_folder_of_the_installed_package_is_found_without_importing_it(tmp_path, monkeypatch):
    pkg = _fake_package(tmp_path, data=True)
    monkeypatch.delitem(sys.modules, "bfcl_eval", raising=False)
    monkeypatch.syspath_prepend(str(tmp_path))
    assert find_bfcl_data_dir() == (pkg / "data").resolve()
    assert "bfcl_eval" not in sys.modules


def test_a_package_without_data_or_no_package_gives_none(tmp_path, monkeypatch):
    _fake_package(tmp_path, data=False)
    monkeypatch.delitem(sys.modules, "bfcl_eval", raising=False)
    monkeypatch.syspath_prepend(str(tmp_path))
    assert find_bfcl_data_dir() is None
    monkeypatch.setattr("importlib.util.find_spec", lambda name: None)
    assert find_bfcl_data_dir() is None
