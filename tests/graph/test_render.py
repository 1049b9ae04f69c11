"""Drawings: an offline interactive HTML page and a PNG."""

from __future__ import annotations

import json
import re

import pytest

from envfactory.graph import build_domain_graph, build_tool_graph, layout_tool_graph, render_html, render_png

from ._shop import shop_spec


def test_html_page_is_self_contained(tmp_path):
    g = build_domain_graph([shop_spec()])
    p = render_html(g, tmp_path / "g.html")
    page = p.read_text()
    assert "<script src" not in page and "<link" not in page and "@import" not in page
    # the only URL is the SVG namespace name, which browsers never fetch
    assert set(re.findall(r"https?://[^\s\"'`]+", page)) == {"http://www.w3.org/2000/svg"}
    data = json.loads(page.split('id="data">', 1)[1].split("</script>", 1)[0])
    assert {n["id"] for n in data["nodes"]} == set(g.nodes)
    assert len(data["edges"]) == g.number_of_edges()


def test_layout_puts_deeper_tools_to_the_right():
    g = build_tool_graph(shop_spec())
    pos = layout_tool_graph(g)
    assert set(pos) == set(g.nodes)
    assert pos["get_customer"][0] > pos["search_customers"][0]
    assert pos["pay_order.order_id"][0] < pos["pay_order"][0]


def test_png_is_written(tmp_path):
    pytest.importorskip("matplotlib")
    p = render_png(build_tool_graph(shop_spec()), tmp_path / "g.png")
    data = p.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and 5_000 < len(data) < 500_000
