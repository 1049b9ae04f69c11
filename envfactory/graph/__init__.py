"""Tool-dependency graphs, topology-aware plan sampling, gold execution and coverage.

build_tool_graph(spec) / build_domain_graph(specs)   -> networkx.DiGraph
TopologySampler(envs, seed=..., config=SamplerConfig(...)).sample() -> Plan (RandomWalkSampler: baseline)
execute_plan(env, plan)                             -> GoldResult (calls, outputs, hash, diff)
run_sampling(envs, n, sampler=...) + build_sampler_report(run, graphs) -> SamplerReport
"""

from ..errors import RefError, SampleError
from .config import SamplerConfig
from .gold import GoldCall, GoldResult, execute_plan, execute_plans
from .plan import Plan, Step, order_plan, ref, resolve_args
from .render import layout_tool_graph, render_html, render_png
from .report import SAMPLERS, SamplerReport, SamplingRun, build_sampler_report, possible_pairs, run_sampling
from .sample import Coverage, TopologySampler, api_of
from .tool_graph import (
    GRAPH_FILE,
    build_domain_graph,
    build_tool_graph,
    classify_param,
    graph_to_json,
    load_tool_graph,
    save_tool_graph,
    tool_outputs,
)
from .walk import RandomWalkSampler

__all__ = [
    "GRAPH_FILE",
    "build_tool_graph",
    "build_domain_graph",
    "classify_param",
    "tool_outputs",
    "graph_to_json",
    "save_tool_graph",
    "load_tool_graph",
    "layout_tool_graph",
    "render_html",
    "render_png",
    "Plan",
    "Step",
    "RefError",
    "ref",
    "resolve_args",
    "order_plan",
    "Coverage",
    "SamplerConfig",
    "TopologySampler",
    "api_of",
    "RandomWalkSampler",
    "SampleError",
    "GoldCall",
    "GoldResult",
    "execute_plan",
    "execute_plans",
    "SAMPLERS",
    "SamplingRun",
    "SamplerReport",
    "run_sampling",
    "build_sampler_report",
    "possible_pairs",
]
