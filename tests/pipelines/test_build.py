"""build_domain / build_source / the build CLI: atomic writes, ownership, failed documents as data."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

from envfactory.cli import app
from envfactory.errors import ConfigError, SpecError
from envfactory.pipelines import BUILD_FILE, TIMES_FILE, build_domain, build_source
from envfactory.pipelines import build as build_mod
from envfactory.spec import load_spec

REPO = Path(__file__).resolve().parents[2]

DOC = """openapi: 3.0.3
info: {title: Library Loans API, version: "1"}
paths:
  /books:
    get:
      parameters:
        - {name: title, in: query, schema: {type: string}}
        - {name: limit, in: query, schema: {type: integer}}
      responses:
        "200": {description: ok, content: {application/json: {schema: {type: array, items: {$ref: "#/components/schemas/Book"}}}}}
  /books/{bookId}:
    get:
      parameters: [{name: bookId, in: path, required: true, schema: {type: string}}]
      responses:
        "200": {description: ok, content: {application/json: {schema: {$ref: "#/components/schemas/Book"}}}}
  /loans:
    post:
      requestBody:
        content: {application/json: {schema: {type: object, required: [book_id], properties: {book_id: {type: string}}}}}
      responses:
        "201": {description: ok, content: {application/json: {schema: {$ref: "#/components/schemas/Loan"}}}}
  /loans/{loanId}/return:
    post:
      parameters: [{name: loanId, in: path, required: true, schema: {type: string}}]
      responses:
        "200": {description: ok, content: {application/json: {schema: {$ref: "#/components/schemas/Loan"}}}}
components:
  schemas:
    Book:
      type: object
      properties: {id: {type: string}, title: {type: string}, author: {type: string}}
    Loan:
      type: object
      properties:
        id: {type: string}
        book_id: {type: string}
        status: {type: string, enum: [active, returned, overdue]}
        returned_at: {type: string, format: date-time, nullable: true}
"""


@pytest.fixture
def roots(tmp_path: Path) -> tuple[Path, Path]:
    res = tmp_path / "resources"
    (res / "library").mkdir(parents=True)
    (res / "library" / "loans.yaml").write_text(DOC)
    (res / "library" / "broken.yaml").write_text("openapi: 3.0.3\npaths: [unclosed\n")
    dom = tmp_path / "domains"
    hand = dom / "library" / "hand_made"
    hand.mkdir(parents=True)
    (hand / "env.yaml").write_text("# hand-written\n")
    return res, dom


def _snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_build_domain_writes_envs_records_failures_and_keeps_foreign_folders(roots):
    res, dom = roots
    report = build_domain("library", resources_root=res, domains_root=dom, verify=True)
    assert [e.name for e in report.envs] == ["library_loans"]
    assert len(report.failed_documents) == 1 and "broken.yaml" in report.failed_documents[0].error
    spec = load_spec(dom / "library" / "library_loans")
    assert {"get_book", "create_loan", "return_loan"} <= {t.name for t in spec.tools}
    assert (dom / "library" / "library_loans" / "template.db").is_file()
    data = json.loads((dom / "library" / BUILD_FILE).read_text())
    assert data["envs"] == ["library_loans"] and "resources/library/loans.yaml" in data["sources"]
    assert (dom / "library" / "hand_made" / "env.yaml").read_text() == "# hand-written\n"
    assert not [p for p in (dom).iterdir() if p.name.startswith(".")]  # temp folders cleaned up


def test_rebuild_replaces_only_generated_envs(roots):
    res, dom = roots
    build_domain("library", resources_root=res, domains_root=dom, verify=False)
    (dom / "library" / "library_loans" / "stale.txt").write_text("old")
    build_domain("library", resources_root=res, domains_root=dom, verify=False)
    assert not (dom / "library" / "library_loans" / "stale.txt").exists()
    assert (dom / "library" / "hand_made" / "env.yaml").is_file()


def test_failure_mid_build_leaves_domains_untouched(roots, monkeypatch):
    res, dom = roots
    build_domain("library", resources_root=res, domains_root=dom, verify=False)
    before = _snapshot(dom)

    def boom(*a, **k):
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(build_mod, "save_spec", boom)
    with pytest.raises(RuntimeError):
        build_domain("library", resources_root=res, domains_root=dom, verify=False)
    assert _snapshot(dom) == before
    assert not [p for p in dom.iterdir() if p.name.startswith(".")]


def test_failure_during_swap_restores_old_folders(roots, monkeypatch):
    res, dom = roots
    build_domain("library", resources_root=res, domains_root=dom, verify=False)
    before = _snapshot(dom)
    real = build_mod.os.replace

    def flaky(src, dst):
        # the new folder landing, after the old one was moved aside
        if Path(dst) == dom / "library" / "library_loans" and ".old" not in str(src):
            raise OSError("rename failed")
        return real(src, dst)

    monkeypatch.setattr(build_mod.os, "replace", flaky)
    with pytest.raises(OSError):
        build_domain("library", resources_root=res, domains_root=dom, verify=False)
    monkeypatch.setattr(build_mod.os, "replace", real)
    assert _snapshot(dom) == before


def test_unknown_domain_is_a_config_error(roots):
    res, dom = roots
    with pytest.raises(ConfigError, match="known domains: library"):
        build_domain("nope", resources_root=res, domains_root=dom)


@pytest.mark.parametrize("name", ["../resources", "..", ".hidden", "a/b", ""])
def test_domain_name_that_leaves_the_domains_folder_is_a_config_error(roots, name):
    res, dom = roots
    with pytest.raises(ConfigError, match="invalid domain name"):
        build_domain(name, resources_root=res / "library", domains_root=dom)
    with pytest.raises(ConfigError, match="invalid domain name"):
        build_source(res / "library" / "loans.yaml", out_dir=dom / "x", domain=name, verify=False)
    assert not (dom / "x").exists()


def test_build_source_file(tmp_path):
    src = tmp_path / "loans.yaml"
    src.write_text(DOC)
    report = build_source(src, out_dir=tmp_path / "out", verify=False)
    assert report.envs and (tmp_path / "out" / "library_loans" / "env.yaml").is_file()


def test_cli_build_source_prints_table(tmp_path):
    src = tmp_path / "loans.yaml"
    src.write_text(DOC)
    out = tmp_path / "out"
    r = CliRunner().invoke(
        app, ["build", "--source", str(src), "--out", str(out), "--no-verify", "--seed", "2"]
    )
    assert r.exit_code == 0, r.output
    assert "library_loans" in r.output and "total: 1 environments" in r.output
    assert load_spec(out / "library_loans").seed.seed == 2


def test_cli_failed_document_among_good_ones_is_not_an_error_exit(tmp_path):
    src = tmp_path / "docs"
    src.mkdir()
    (src / "bad.yaml").write_text("openapi: 3.0.3\npaths: [unclosed\n")
    (src / "cars.yaml").write_text((REPO / "tests" / "fixtures" / "travel" / "cars.yaml").read_text())
    r = CliRunner().invoke(app, ["build", "--source", str(src), "--out", str(tmp_path / "o"), "--no-verify"])
    assert r.exit_code == 0, r.output
    assert "failed" in r.output and "Traceback" not in r.output
    assert list((tmp_path / "o").glob("*/env.yaml"))


def test_cli_exits_1_when_nothing_could_be_built_and_writes_nothing(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("openapi: 3.0.3\npaths: [unclosed\n")
    r = CliRunner().invoke(app, ["build", "--source", str(bad), "--out", str(tmp_path / "o"), "--no-verify"])
    assert r.exit_code == 1, r.output
    assert "malformed YAML" in r.output and "Traceback" not in r.output
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("args", [["build"], ["build", "--domain", "x", "--all"]])
def test_cli_bad_options_exit_nonzero_with_one_line(args):
    r = CliRunner().invoke(app, args)
    assert r.exit_code != 0
    assert "Traceback" not in r.output


TRIPS = """openapi: 3.0.3
info: {title: Trips API, version: "1"}
paths:
  /travelers:
    get:
      responses:
        "200": {description: ok, content: {application/json: {schema: {type: array, items: {$ref: "#/components/schemas/Traveler"}}}}}
    post:
      requestBody:
        content: {application/json: {schema: {type: object, required: [name], properties: {name: {type: string}}}}}
      responses:
        "201": {description: ok, content: {application/json: {schema: {$ref: "#/components/schemas/Traveler"}}}}
  /travelers/{travelerId}:
    get:
      parameters: [{name: travelerId, in: path, required: true, schema: {type: string}}]
      responses:
        "200": {description: ok, content: {application/json: {schema: {$ref: "#/components/schemas/Traveler"}}}}
components:
  schemas:
    Traveler:
      type: object
      properties: {id: {type: string}, name: {type: string}, email: {type: string}}
"""
ORDERS = """openapi: 3.0.3
info: {title: Orders API, version: "1"}
paths:
  /orders:
    get:
      parameters: [{name: traveler_id, in: query, schema: {type: string}}]
      responses:
        "200": {description: ok, content: {application/json: {schema: {type: array, items: {$ref: "#/components/schemas/Order"}}}}}
    post:
      requestBody:
        content: {application/json: {schema: {type: object, required: [traveler_id, amount],
                  properties: {traveler_id: {type: string}, amount: {type: number}}}}}
      responses:
        "201": {description: ok, content: {application/json: {schema: {$ref: "#/components/schemas/Order"}}}}
  /orders/{orderId}:
    get:
      parameters: [{name: orderId, in: path, required: true, schema: {type: string}}]
      responses:
        "200": {description: ok, content: {application/json: {schema: {$ref: "#/components/schemas/Order"}}}}
components:
  schemas:
    Order:
      type: object
      properties: {id: {type: string}, traveler_id: {type: string}, amount: {type: number}}
"""


def test_documents_of_one_api_folder_build_one_env_with_cross_document_keys(tmp_path):
    res, dom = tmp_path / "resources", tmp_path / "domains"
    (res / "trips" / "agency").mkdir(parents=True)
    (res / "trips" / "agency" / "trips.yaml").write_text(TRIPS)
    (res / "trips" / "agency" / "orders.yaml").write_text(ORDERS)
    report = build_domain("trips", resources_root=res, domains_root=dom, verify=True)
    assert len(report.envs) == 1 and report.envs[0].name.startswith("trips_")
    spec = load_spec(dom / "trips" / report.envs[0].name)
    assert spec.entity("order").field("traveler_id").ref == "traveler"
    assert {"create_order", "list_travelers", "get_traveler"} <= {t.name for t in spec.tools}
    assert spec.sources == ["resources/trips/agency/orders.yaml", "resources/trips/agency/trips.yaml"]
    assert all(d.ok and d.envs == [spec.name] for d in report.documents)


def test_two_apis_side_by_side_share_no_table(tmp_path):
    # two documents beside each other are two APIs: the orders' traveler_id names no table of theirs
    res, dom = tmp_path / "resources", tmp_path / "domains"
    (res / "trips").mkdir(parents=True)
    (res / "trips" / "trips.yaml").write_text(TRIPS)
    (res / "trips" / "orders.yaml").write_text(ORDERS)
    report = build_domain("trips", resources_root=res, domains_root=dom, verify=True)
    specs = [load_spec(dom / "trips" / e.name) for e in report.envs]
    assert len(specs) == 2 and all(len(s.sources) == 1 for s in specs)
    orders = next(s for s in specs if s.sources == ["resources/trips/orders.yaml"])
    assert "traveler" not in {e.name for e in orders.entities}


@pytest.mark.parametrize("how", ["domain", "source_folder", "source_file"])
def test_recorded_paths_are_relative_and_skip_readmes(tmp_path, how):
    res, dom = tmp_path / "resources", tmp_path / "domains"
    (res / "library").mkdir(parents=True)
    (res / "library" / "loans.yaml").write_text(DOC)
    (res / "library" / "README.md").write_text("# Library\n\nWhat this folder holds.\n")
    if how == "domain":
        report = build_domain("library", resources_root=res, domains_root=dom, verify=False)
        out, want = dom / "library", "resources/library/loans.yaml"
    elif how == "source_folder":
        out = tmp_path / "out"
        report = build_source(res / "library", out_dir=out, verify=False)
        want = "library/loans.yaml"
    else:
        out = tmp_path / "out"
        report = build_source(res / "library" / "loans.yaml", out_dir=out, verify=False)
        want = "loans.yaml"
    spec = load_spec(out / report.envs[0].name)
    assert spec.sources == [want]
    text = (out / BUILD_FILE).read_text()
    data = json.loads(text)
    assert list(data["sources"]) == [want]
    assert data["environments"][0]["source"] == want and data["environments"][0]["sources"] == [want]
    assert (
        str(tmp_path) not in text
        and str(tmp_path) not in (out / report.envs[0].name / "env.yaml").read_text()
    )


def test_an_environment_verification_rejects_with_an_error_is_recorded_and_the_build_goes_on(
    roots, monkeypatch
):
    res, dom = roots

    def rejecting(spec, **kwargs):
        raise SpecError(f"{spec.name}: the seed recipe names no rows")

    monkeypatch.setattr(build_mod, "verify_and_repair", rejecting)
    report = build_domain("library", resources_root=res, domains_root=dom, verify=True)
    assert report.envs == [] and report.dropped_envs == [
        "library_loans: library_loans: the seed recipe names no rows"
    ]


def test_a_bug_in_verification_stops_the_build_and_leaves_domains_as_they_were(roots, monkeypatch):
    res, dom = roots
    build_domain("library", resources_root=res, domains_root=dom, verify=False)
    before = _snapshot(dom)

    def buggy(spec, **kwargs):
        return {}["no such key"]

    monkeypatch.setattr(build_mod, "verify_and_repair", buggy)
    with pytest.raises(KeyError):
        build_domain("library", resources_root=res, domains_root=dom, verify=True)
    assert _snapshot(dom) == before


def _tracked(root: Path) -> dict[str, bytes]:
    """Files of a built domain that git would commit (as if ``root`` were domains/)."""
    files = sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())
    ignored = subprocess.run(
        ["git", "check-ignore", "--no-index", "--stdin"],
        cwd=REPO,
        text=True,
        input="\n".join(f"domains/{f}" for f in files),
        capture_output=True,
    ).stdout.split()
    return {f: (root / f).read_bytes() for f in files if f"domains/{f}" not in ignored}


def test_rebuilding_travel_gives_the_same_committed_bytes_and_keeps_timings_out_of_them(tmp_path):
    dom = tmp_path / "domains"
    build_domain("travel", resources_root=REPO / "resources", domains_root=dom)
    first = _tracked(dom)
    assert "travel/build.json" in first and "travel/.build-times.json" not in first
    assert not [f for f in first if f.endswith("template.db")]
    build_domain("travel", resources_root=REPO / "resources", domains_root=dom)
    assert _tracked(dom) == first
    for name, data in first.items():
        if name.endswith((".json", ".yaml")):
            assert b'"seconds"' not in data and b"seconds:" not in data, name
    times = json.loads((dom / "travel" / TIMES_FILE).read_text())
    envs = json.loads(first["travel/build.json"])["envs"]
    assert times["seconds"] > 0 and sorted(times["environments"]) == sorted(envs)
    assert all(t["verify_seconds"] > 0 for t in times["environments"].values())
