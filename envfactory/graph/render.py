"""Drawings of a tool graph: a self-contained interactive HTML page and a PNG.

The HTML page needs no network: the graph is embedded as JSON and drawn as inline SVG by
a few lines of vanilla JavaScript (pan, zoom, hover to highlight neighbours, click for
details, toggles for parameters and edge kinds). The PNG uses matplotlib, imported lazily.

Layout (deterministic): per environment, tools stand in columns by ``depth`` (discovery
hops before a tool can be called; unsatisfiable tools in a last column), parameters just
left of their tool, environments stacked top to bottom.
"""

from __future__ import annotations

import html
import io
import json
from pathlib import Path
from typing import Any

import networkx as nx

from ..errors import ConfigError

__all__ = ["layout_tool_graph", "render_html", "render_png", "KIND_COLORS"]

KIND_COLORS = {
    "get": "#4e79a7",
    "list": "#59a14f",
    "create": "#f28e2b",
    "update": "#c9a227",
    "delete": "#e15759",
    "action": "#b07aa1",
}
PARAM_COLORS = {"user": "#a6cee3", "discover": "#fdbf6f"}
COL_W = 430.0
ROW_H = 22.0
GAP = 16.0


def layout_tool_graph(g: nx.DiGraph) -> dict[str, tuple[float, float]]:
    """Node positions (x right, y down, in px)."""
    pos: dict[str, tuple[float, float]] = {}
    tools = [(n, a) for n, a in g.nodes(data=True) if a["node"] == "tool"]
    envs = sorted({a.get("env", "") for _, a in tools})
    params_of: dict[str, list[str]] = {}
    for n, a in g.nodes(data=True):
        if a["node"] == "param":
            params_of.setdefault(_tool_node(n, a), []).append(n)
    y0 = 0.0
    for env in envs:
        mine = [(n, a) for n, a in tools if a.get("env", "") == env]
        maxd = max((a.get("depth", 0) for _, a in mine), default=0)
        cols: dict[int, list[tuple[str, dict]]] = {}
        for n, a in mine:
            d = a.get("depth", 0)
            cols.setdefault(d if d >= 0 else maxd + 1, []).append((n, a))
        height = 0.0
        for c, members in sorted(cols.items()):
            members.sort(key=lambda na: (na[1].get("entity", ""), na[0]))
            y = y0
            for n, _ in members:
                ps = sorted(params_of.get(n, []))
                slot = max(len(ps), 1) * ROW_H
                x = 260.0 + c * COL_W
                pos[n] = (x, y + slot / 2)
                for i, p in enumerate(ps):
                    pos[p] = (x - 150.0, y + (i + 0.5) * ROW_H)
                y += slot + GAP
            height = max(height, y - y0)
        y0 += height + 80.0
    return pos


def _tool_node(n: str, a: dict[str, Any]) -> str:
    prefix = n.rsplit("/", 1)[0] + "/" if "/" in n else ""
    return prefix + a["tool"]


def _payload(g: nx.DiGraph) -> dict[str, Any]:
    pos = layout_tool_graph(g)
    nodes = []
    for n, a in sorted(g.nodes(data=True)):
        x, y = pos[n]
        nodes.append(
            {
                "id": n,
                "x": round(x, 1),
                "y": round(y, 1),
                **{k: v for k, v in a.items() if isinstance(v, (str, int, float, bool, list)) or v is None},
            }
        )
    edges = [{"s": u, "t": v, **a} for u, v, a in sorted(g.edges(data=True))]
    return {
        "graph": {k: v for k, v in g.graph.items()},
        "nodes": nodes,
        "edges": edges,
        "colors": {"kind": KIND_COLORS, "param": PARAM_COLORS},
    }


_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<title>__TITLE__</title>
<style>
body{margin:0;font:13px system-ui,sans-serif;display:flex;height:100vh;color:#222}
#side{width:300px;padding:10px;border-right:1px solid #ddd;overflow:auto;flex:none}
#main{flex:1;position:relative}
svg{width:100%;height:100%;cursor:grab;background:#fcfcfc}
.e{fill:none;stroke:#888;stroke-width:1.2;opacity:.55}
.e.input{stroke:#bbb;stroke-width:.8}
.e.weak{stroke:#aaa;stroke-dasharray:4 3;opacity:.35}
.e.state{stroke:#d62728;stroke-dasharray:6 3;stroke-width:1.6;opacity:.7}
.e.shared_fact{stroke:#17becf;stroke-dasharray:2 3}
.n text{font-size:11px;pointer-events:none}
.n.param text{font-size:9.5px;fill:#444}
.dim{opacity:.08!important}
.hl{opacity:1!important;stroke-width:2.2}
.sel circle,.sel rect{stroke:#000;stroke-width:2.5}
pre{white-space:pre-wrap;font-size:11px;background:#f4f4f4;padding:6px}
.key span{display:inline-block;width:10px;height:10px;margin-right:4px;border-radius:2px}
label{display:block}
</style></head><body>
<div id="side"><h3 style="margin:4px 0">__TITLE__</h3>
<div id="stats"></div>
<p><input id="q" placeholder="find tool..." style="width:95%"></p>
<label><input type="checkbox" id="cp" checked> parameters</label>
<label><input type="checkbox" id="cs" checked> strong supplies</label>
<label><input type="checkbox" id="cw"> weak (similarity) supplies</label>
<label><input type="checkbox" id="ct" checked> state edges</label>
<div class="key" id="key"></div>
<p style="color:#666">Drag to pan, wheel to zoom, hover to highlight, click for details.</p>
<pre id="info">click a node</pre></div>
<div id="main"><svg id="svg" xmlns="http://www.w3.org/2000/svg"><g id="vp"></g></svg></div>
<script type="application/json" id="data">__DATA__</script>
<script>
(function(){
const D=JSON.parse(document.getElementById('data').textContent);
const NS='http://www.w3.org/2000/svg',vp=document.getElementById('vp'),svg=document.getElementById('svg');
const N={};D.nodes.forEach(n=>N[n.id]=n);
const adj={};D.nodes.forEach(n=>adj[n.id]=new Set([n.id]));
function el(t,a,p){const e=document.createElementNS(NS,t);for(const k in a)e.setAttribute(k,a[k]);(p||vp).appendChild(e);return e}
const gE=el('g',{}),gN=el('g',{});const edges=[],nodes={};
D.edges.forEach(e=>{const a=N[e.s],b=N[e.t];if(!a||!b)return;adj[e.s].add(e.t);adj[e.t].add(e.s);
 let cls='e '+e.edge+(e.strength==='weak'?' weak':'');let d;
 if(e.edge==='state'){const my=Math.min(a.y,b.y)-40-Math.abs(a.y-b.y)*.15;d=`M${a.x},${a.y} C${a.x+120},${my} ${b.x+120},${my} ${b.x},${b.y}`}
 else{const dx=Math.max(40,Math.abs(b.x-a.x)/2);d=`M${a.x},${a.y} C${a.x+dx},${a.y} ${b.x-dx},${b.y} ${b.x},${b.y}`}
 const p=el('path',{d:d,class:cls},gE);p._e=e;edges.push(p);
 const t=el('title',{},p);t.textContent=`${e.s} -> ${e.t} (${e.edge}${e.via?' via '+e.via:''}${e.reasons?': '+e.reasons.join(', '):''})`;});
D.nodes.forEach(n=>{const g=el('g',{class:'n '+n.node,transform:`translate(${n.x},${n.y})`},gN);g._n=n;nodes[n.id]=g;
 if(n.node==='tool'){el('rect',{x:-7,y:-7,width:14,height:14,rx:3,fill:D.colors.kind[n.tool_kind]||'#999'},g);
  const t=el('text',{x:11,y:4},g);t.textContent=n.tool+(n.satisfiable===false?' (unsatisfiable)':'');}
 else{el('circle',{r:4.5,fill:D.colors.param[n.source]||'#ccc',stroke:n.required?'#333':'none'},g);
  const t=el('text',{x:-8,y:3,'text-anchor':'end'},g);t.textContent=n.param+(n.required?'*':'');}
 g.addEventListener('mouseenter',()=>hl(n.id));g.addEventListener('mouseleave',()=>hl(null));
 g.addEventListener('click',ev=>{ev.stopPropagation();show(n.id)});});
function vis(p){const e=p._e;if(e.edge==='input'||(e.edge==='supplies'))if(!cp.checked&&(N[e.s].node==='param'||N[e.t].node==='param'))return false;
 if(e.edge==='supplies'&&e.strength==='weak')return cw.checked;if(e.edge==='supplies')return cs.checked;
 if(e.edge==='state')return ct.checked;if(e.edge==='shared_fact')return cw.checked&&cp.checked;return true}
function refresh(){edges.forEach(p=>p.style.display=vis(p)?'':'none');
 for(const id in nodes)nodes[id].style.display=(N[id].node==='param'&&!cp.checked)?'none':'';}
function hl(id){edges.forEach(p=>{p.classList.toggle('dim',!!id&&p._e.s!==id&&p._e.t!==id);p.classList.toggle('hl',!!id&&(p._e.s===id||p._e.t===id))});
 for(const k in nodes)nodes[k].classList.toggle('dim',!!id&&!adj[id].has(k));}
let selected=null;function show(id){if(selected)nodes[selected].classList.remove('sel');selected=id;nodes[id].classList.add('sel');
 const n=Object.assign({},N[id]);delete n.x;delete n.y;
 const ins=D.edges.filter(e=>e.t===id&&e.edge!=='input').map(e=>'<- '+e.s+' ['+e.edge+(e.strength?' '+e.strength:'')+']');
 const outs=D.edges.filter(e=>e.s===id&&e.edge!=='input').map(e=>'-> '+e.t+' ['+e.edge+(e.strength?' '+e.strength:'')+']');
 document.getElementById('info').textContent=JSON.stringify(n,null,1)+'\\n'+ins.concat(outs).join('\\n');}
const cp=document.getElementById('cp'),cs=document.getElementById('cs'),cw=document.getElementById('cw'),ct=document.getElementById('ct');
[cp,cs,cw,ct].forEach(c=>c.addEventListener('change',refresh));refresh();
document.getElementById('q').addEventListener('input',ev=>{const q=ev.target.value.toLowerCase();
 for(const k in nodes){const n=N[k];nodes[k].classList.toggle('dim',!!q&&!(n.tool||'').toLowerCase().includes(q))}});
let xs=D.nodes.map(n=>n.x),ys=D.nodes.map(n=>n.y);
let vb=[Math.min(...xs)-220,Math.min(...ys)-80,Math.max(...xs)-Math.min(...xs)+500,Math.max(...ys)-Math.min(...ys)+160];
function setvb(){svg.setAttribute('viewBox',vb.join(' '))}setvb();
svg.addEventListener('wheel',ev=>{ev.preventDefault();const r=svg.getBoundingClientRect(),f=ev.deltaY>0?1.15:1/1.15;
 const mx=vb[0]+(ev.clientX-r.left)/r.width*vb[2],my=vb[1]+(ev.clientY-r.top)/r.height*vb[3];
 vb=[mx-(mx-vb[0])*f,my-(my-vb[1])*f,vb[2]*f,vb[3]*f];setvb()},{passive:false});
let drag=null;svg.addEventListener('mousedown',ev=>{drag=[ev.clientX,ev.clientY,vb[0],vb[1]]});
window.addEventListener('mouseup',()=>drag=null);
window.addEventListener('mousemove',ev=>{if(!drag)return;const r=svg.getBoundingClientRect();
 vb[0]=drag[2]-(ev.clientX-drag[0])*vb[2]/r.width;vb[1]=drag[3]-(ev.clientY-drag[1])*vb[3]/r.height;setvb()});
const tc=D.nodes.filter(n=>n.node==='tool').length,pc=D.nodes.length-tc,cnt={};D.edges.forEach(e=>{const k=e.edge+(e.strength?'/'+e.strength:'');cnt[k]=(cnt[k]||0)+1});
document.getElementById('stats').textContent=`${tc} tools, ${pc} parameters; `+Object.entries(cnt).map(([k,v])=>k+': '+v).join(', ');
const key=document.getElementById('key');Object.entries(D.colors.kind).forEach(([k,c])=>{key.innerHTML+=`<div><span style="background:${c}"></span>${k} tool</div>`});
Object.entries(D.colors.param).forEach(([k,c])=>{key.innerHTML+=`<div><span style="background:${c};border-radius:5px"></span>${k} parameter</div>`});
key.innerHTML+='<div style="color:#d62728">- - state edge (creates / sets)</div>';
})();
</script></body></html>
"""


def render_html(g: nx.DiGraph, path: str | Path, *, title: str | None = None) -> Path:
    """Write an interactive page that works offline (no external scripts, styles or fonts)."""
    p = Path(path)
    name = title or f"tool graph: {g.graph.get('domain') or ''} {g.graph.get('env') or ''}".strip()
    data = json.dumps(_payload(g), sort_keys=True, separators=(",", ":")).replace("</", "<\\/")
    page = _PAGE.replace("__TITLE__", html.escape(name)).replace("__DATA__", data)
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(page, encoding="utf-8")
    return p


def render_png(
    g: nx.DiGraph, path: str | Path, *, title: str | None = None, dpi: int = 90, weak: bool = False
) -> Path:
    """A static drawing with matplotlib (tools, parameters, strong and state edges)."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        from matplotlib.lines import Line2D
        from matplotlib.patches import FancyArrowPatch
    except ImportError as e:  # pragma: no cover - depends on the installation
        raise ConfigError("drawing a PNG needs matplotlib: pip install 'matplotlib>=3.8,<4'") from e
    pos = layout_tool_graph(g)
    xs = [x for x, _ in pos.values()] or [0.0]
    ys = [y for _, y in pos.values()] or [0.0]
    w_px = max(xs) - min(xs) + 600
    h_px = max(ys) - min(ys) + 160
    width = 16.0
    height = min(max(width * h_px / w_px, 6.0), 40.0)
    fig, ax = plt.subplots(figsize=(width, height))
    ax.set_xlim(min(xs) - 260, max(xs) + 340)
    ax.set_ylim(max(ys) + 60, min(ys) - 80)
    ax.axis("off")
    for u, v, a in g.edges(data=True):
        kind = a["edge"]
        if kind == "supplies" and a.get("strength") == "weak" and not weak:
            continue
        if kind == "shared_fact" and not weak:
            continue
        (x1, y1), (x2, y2) = pos[u], pos[v]
        if kind == "state":
            style: dict[str, Any] = dict(
                color="#d62728", lw=0.9, ls="--", alpha=0.7, connectionstyle="arc3,rad=-0.25"
            )
        elif kind == "input":
            style = dict(color="#bbbbbb", lw=0.5, alpha=0.8, connectionstyle="arc3,rad=0")
        elif a.get("strength") == "weak":
            style = dict(color="#aaaaaa", lw=0.5, ls=":", alpha=0.5, connectionstyle="arc3,rad=0.1")
        else:
            style = dict(color="#555555", lw=0.6, alpha=0.45, connectionstyle="arc3,rad=0.08")
        ax.add_patch(FancyArrowPatch((x1, y1), (x2, y2), arrowstyle="-|>", mutation_scale=6, **style))
    for n, a in g.nodes(data=True):
        x, y = pos[n]
        if a["node"] == "tool":
            ax.scatter(
                [x], [y], s=60, marker="s", color=KIND_COLORS.get(a.get("tool_kind"), "#999"), zorder=3
            )
            ax.text(x + 12, y, a["tool"], fontsize=7, va="center", zorder=4)
        else:
            ax.scatter(
                [x],
                [y],
                s=14,
                color=PARAM_COLORS.get(a.get("source"), "#ccc"),
                edgecolors="#333" if a.get("required") else "none",
                linewidths=0.5,
                zorder=3,
            )
            ax.text(x - 8, y, a["param"], fontsize=5, va="center", ha="right", color="#444", zorder=4)
    handles = [Line2D([], [], marker="s", ls="", color=c, label=f"{k} tool") for k, c in KIND_COLORS.items()]
    handles += [
        Line2D([], [], marker="o", ls="", color=c, label=f"{k} parameter") for k, c in PARAM_COLORS.items()
    ]
    handles += [
        Line2D([], [], color="#555555", label="supplies (strong)"),
        Line2D([], [], color="#d62728", ls="--", label="state (creates / sets)"),
    ]
    ax.legend(handles=handles, loc="upper right", fontsize=7, frameon=False)
    name = title or f"tool graph: {g.graph.get('domain') or ''} {g.graph.get('env') or ''}".strip()
    ax.set_title(name, fontsize=10)
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    buf = io.BytesIO()
    fig.savefig(buf, dpi=dpi, bbox_inches="tight", format="png")
    plt.close(fig)
    try:  # a 256-colour palette keeps the file small (line art has few colours)
        from PIL import Image

        buf.seek(0)
        Image.open(buf).convert("RGB").quantize(colors=128).save(p, format="PNG", optimize=True)
    except ImportError:  # pragma: no cover - pillow comes with matplotlib
        p.write_bytes(buf.getvalue())
    return p
