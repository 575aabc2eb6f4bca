// The tool's resolver graph as an SVG drawn here: columns by depth, arguments and context on the
// left, the tool on the right; resolvers that can ask are marked.

const SVG = "http://www.w3.org/2000/svg";
const WIDTH = 170, HEIGHT = 40, GAP_X = 60, GAP_Y = 18, PAD = 10, ARC = 22;

function svg(tag, attributes = {}, text) {
  const node = document.createElementNS(SVG, tag);
  for (const [key, value] of Object.entries(attributes)) node.setAttribute(key, String(value));
  if (text !== undefined) node.textContent = text;
  return node;
}

function depths(graph) {
  const depth = new Map(graph.nodes.map((n) => [n.id, 0]));
  // Nodes arrive in run order (arguments, resolvers, context, tool): a few passes settle the depths.
  for (let pass = 0; pass < graph.nodes.length; pass++) {
    let changed = false;
    for (const edge of graph.edges) {
      const wanted = depth.get(edge.source) + 1;
      if (wanted > depth.get(edge.target)) {
        depth.set(edge.target, wanted);
        changed = true;
      }
    }
    if (!changed) break;
  }
  return depth;
}

// The nodes and edges of a tool's explanation (`mcpdi graph --format json`'s record of one tool):
// its arguments, the context types read, its resolvers in run order, and the tool.
export function graphOf(record) {
  const nodes = record.arguments.map((a) => ({ id: `argument:${a.name}`, kind: "argument", label: a.name, location: "", asks: false }));
  const edges = [];
  const contexts = new Map();
  const connect = (reads, target) => {
    for (const read of reads) {
      const source = read.source === "resolved" ? `resolver:${read.from}` : `${read.source}:${read.from}`;
      if (read.source === "context" && !contexts.has(source)) contexts.set(source, { id: source, kind: "context", label: read.from, location: "", asks: false });
      edges.push({ source, target, parameter: read.parameter });
    }
  };
  for (const resolver of record.resolvers) {
    const id = `resolver:${resolver.key}`;
    const round = resolver.round === null ? "" : ` (round ${resolver.round})`;
    nodes.push({ id, kind: "resolver", label: resolver.name, location: resolver.location, asks: resolver.asks.length > 0, round });
    connect(resolver.reads, id);
  }
  connect(record.reads, "tool");
  nodes.push(...contexts.values());
  nodes.push({ id: "tool", kind: "tool", label: record.name, location: record.location, asks: false });
  return { tool: record.name, nodes, edges };
}

export function drawGraph(container, record) {
  const graph = graphOf(record);
  const depth = depths(graph);
  const columns = [];
  for (const node of graph.nodes) (columns[depth.get(node.id)] ??= []).push(node);
  // An edge that skips columns arcs above the nodes it passes, higher the more it skips.
  const span = (edge) => depth.get(edge.target) - depth.get(edge.source);
  const top = PAD + 20 + ARC * Math.max(0, ...graph.edges.map((e) => span(e) - 1));
  const place = new Map();
  columns.forEach((column, x) => column.forEach((node, y) => place.set(node.id, { x: PAD + x * (WIDTH + GAP_X), y: top + y * (HEIGHT + GAP_Y) })));
  const rows = Math.max(...columns.map((c) => c?.length ?? 0));
  const width = PAD * 2 + columns.length * (WIDTH + GAP_X) - GAP_X;
  const height = top + PAD + rows * (HEIGHT + GAP_Y);
  const root = svg("svg", { viewBox: `0 0 ${width} ${height}`, width, height, role: "img", "aria-labelledby": "graph-desc" });
  const asking = graph.nodes.filter((n) => n.asks).map((n) => n.label);
  root.append(svg("title", { id: "graph-desc" }, `Resolver graph of ${graph.tool}` + (asking.length ? `; can ask: ${asking.join(", ")}` : "")));
  root.append(svg("text", { x: PAD, y: PAD + 8, class: "legend" }, "dashed orange: can ask the client"));
  const defs = svg("defs");
  const marker = svg("marker", { id: "arrow", viewBox: "0 0 10 10", refX: 10, refY: 5, markerWidth: 7, markerHeight: 7, orient: "auto-start-reverse" });
  marker.append(svg("path", { d: "M 0 0 L 10 5 L 0 10 z", fill: "#888" }));
  defs.append(marker);
  root.append(defs);
  for (const edge of graph.edges) {
    const from = place.get(edge.source), to = place.get(edge.target);
    const x1 = from.x + WIDTH, y1 = from.y + HEIGHT / 2, x2 = to.x, y2 = to.y + HEIGHT / 2;
    const bend = (x2 - x1) / 2;
    let d = `M ${x1} ${y1} C ${x1 + bend} ${y1}, ${x2 - bend} ${y2}, ${x2} ${y2}`;
    if (span(edge) > 1) {
      const lift = Math.min(from.y, to.y) - ARC * (span(edge) - 1);
      const shift = 14 * (span(edge) - 2);  // arcs of different lengths leave and land apart
      const [sx, tx] = [from.x + WIDTH / 2 + shift, to.x + WIDTH / 2 - shift];
      d = `M ${sx} ${from.y} C ${sx} ${lift}, ${tx} ${lift}, ${tx} ${to.y}`;
    }
    const path = svg("path", { class: "edge", d, "marker-end": "url(#arrow)" });
    path.append(svg("title", {}, `${edge.parameter}`));
    root.append(path);
  }
  for (const node of graph.nodes) {
    const { x, y } = place.get(node.id);
    const group = svg("g", { class: `node ${node.kind}${node.asks ? " asks" : ""}`, "data-node": node.label, transform: `translate(${x} ${y})` });
    group.append(svg("rect", { width: WIDTH, height: HEIGHT, rx: 5 }));
    group.append(svg("text", { x: 8, y: 16 }, node.label));
    const kind = node.asks ? `${node.kind}, can ask${node.round}` : node.kind;
    group.append(svg("text", { x: 8, y: 31, opacity: 0.7 }, kind));
    if (node.location) group.append(svg("title", {}, node.location));
    root.append(group);
  }
  const needs = record.capabilities.length ? `Needs the client's ${record.capabilities.join(", ")}; ` : "";
  const rounds = `${needs}at most ${record.worstCaseRounds} round(s) of questions.`;
  container.replaceChildren(root);
  const summary = document.createElement("p");
  summary.className = "help";
  summary.id = "graph-rounds";
  summary.textContent = rounds;
  container.append(summary);
}
