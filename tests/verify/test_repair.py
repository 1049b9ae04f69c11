import json

from envfactory.spec import parse_spec
from envfactory.verify import repair_spec, verify_and_repair

from ._tiny import tiny_dict, tool_index


def test_repair_makes_a_never_set_field_nullable_and_keeps_the_tool(tmp_path):
    d = tiny_dict()
    d["entities"][1]["fields"].append({"name": "loyalty", "type": "string"})  # create_customer never sets it
    spec = parse_spec(d)
    spec_out, report = verify_and_repair(spec, out_dir=tmp_path, seed=0)
    assert spec_out is not None
    assert "create_customer" in [t.name for t in spec_out.tools]
    assert spec_out.entity("customer").field("loyalty").nullable
    assert any("loyalty" in r for r in report.repairs)
    assert report.ok and not report.excluded
    data = json.loads((tmp_path / "verification.json").read_text())
    assert data["tools"]["create_customer"]["status"]["L1"] == "pass"
    assert (tmp_path / "cassettes" / "tiny_shop.json").is_file()


def test_repair_drops_impossible_preconditions_and_json_filters():
    d = tiny_dict()
    tool_index(d, "delete_order")["preconditions"].append(
        {"field": "status", "op": "eq", "value": "archived"}
    )
    tool_index(d, "list_items")["entity"] = "item"
    d["tools"].append(
        {
            "name": "list_customers",
            "kind": "list",
            "entity": "customer",
            "description": "List customers.",
            "params": [{"name": "tags", "type": "array", "field": "tags"}],
        }
    )
    fixed, done = repair_spec(parse_spec(d))
    assert fixed.tool("delete_order").preconditions[-1].value == "cancelled"
    assert fixed.tool("list_customers").params == []
    assert len(done) == 2


def test_an_unfixable_tool_is_excluded_with_its_reason(tmp_path):
    d = tiny_dict()
    # valid enum value that no seeded order has and no tool produces: no valid call ever exists
    d["seed"]["entities"]["order"]["fields"]["status"] = {"kind": "choice", "values": ["placed", "cancelled"]}
    d["tools"].append(
        {
            "name": "return_order",
            "kind": "action",
            "entity": "order",
            "description": "Return a shipped order.",
            "params": [
                {"name": "order_id", "type": "string", "required": True, "key": True, "field": "order_id"}
            ],
            "preconditions": [{"field": "status", "op": "eq", "value": "shipped"}],
            "effects": [{"field": "status", "set": "cancelled"}],
        }
    )
    spec_out, report = verify_and_repair(parse_spec(d), out_dir=tmp_path)
    assert spec_out is not None
    names = [t.name for t in spec_out.tools]
    assert "return_order" not in names and "cancel_order" in names
    assert [x["tool"] for x in report.excluded] == ["return_order"]
    assert "no valid call" in report.excluded[0]["reason"]
    assert any(e.startswith("return_order") for e in spec_out.excluded)
    data = json.loads((tmp_path / "verification.json").read_text())
    assert data["excluded"][0]["tool"] == "return_order"


def test_no_verified_tool_left_returns_none():
    d = tiny_dict()
    d["seed"]["entities"]["order"]["fields"]["status"] = {"kind": "const", "value": "shipped"}
    d["tools"] = [t for t in d["tools"] if t["name"] in ("cancel_order", "delete_order")]
    spec_out, report = verify_and_repair(parse_spec(d))
    assert spec_out is None
    assert {x["tool"] for x in report.excluded} == {"cancel_order", "delete_order"}
