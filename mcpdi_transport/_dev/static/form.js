// A form from a JSON Schema object (a tool's inputSchema or an elicitation's requestedSchema),
// and the values read back from it in the schema's types.

let counter = 0;

function element(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attributes)) {
    if (value === false || value === undefined || value === null) continue;
    if (key === "text") node.textContent = value;
    else node.setAttribute(key, value === true ? "" : value);
  }
  node.append(...children);
  return node;
}
export { element };

function kindOf(property) {
  if (Array.isArray(property.enum)) return "enum";
  let type = property.type;
  if (Array.isArray(type)) type = type.find((t) => t !== "null");
  if (!type && Array.isArray(property.anyOf)) type = property.anyOf.map((p) => p.type).find((t) => t && t !== "null");
  return ["string", "integer", "number", "boolean"].includes(type) ? type : "json";
}

// Fills `container` with one labelled field per property; returns a function reading the values.
export function renderFields(container, schema, prefix) {
  container.replaceChildren();
  const required = new Set(schema?.required ?? []);
  const readers = [];
  for (const [name, property] of Object.entries(schema?.properties ?? {})) {
    const id = `${prefix}-${++counter}`;
    const kind = kindOf(property);
    const title = property.title ?? name;
    const field = element("div", { class: "field" });
    const help = property.description ? element("p", { class: "help", id: `${id}-help`, text: property.description }) : null;
    const described = help ? `${id}-help` : undefined;
    let input;
    if (kind === "boolean") {
      input = element("input", { type: "checkbox", id, name, "aria-describedby": described, checked: property.default === true });
      field.append(element("label", { class: "check", for: id }, input, `${title}`));
    } else {
      if (kind === "enum") {
        input = element("select", { id, name, "aria-describedby": described, required: required.has(name) });
        if (!required.has(name)) input.append(element("option", { value: "", text: "(none)" }));
        for (const option of property.enum) input.append(element("option", { value: JSON.stringify(option), text: String(option), selected: option === property.default }));
      } else if (kind === "json") {
        input = element("textarea", { id, name, rows: 3, spellcheck: "false", "aria-describedby": described, required: required.has(name) });
        if (property.default !== undefined) input.value = JSON.stringify(property.default);
      } else {
        const type = kind === "string" ? "text" : "number";
        const bounds = kind === "string" ? { minlength: property.minLength, maxlength: property.maxLength } : { min: property.minimum, max: property.maximum };
        input = element("input", { type, id, name, "aria-describedby": described, required: required.has(name), step: kind === "number" ? "any" : undefined, ...bounds });
        if (property.default !== undefined && property.default !== null) input.value = String(property.default);
      }
      const label = element("label", { for: id, text: required.has(name) ? `${title} (required)` : title });
      field.append(label, input);
    }
    if (help) field.append(help);
    container.append(field);
    readers.push(() => [name, readValue(input, kind, required.has(name), title, property)]);
  }
  return () => {
    const values = {};
    for (const read of readers) {
      const [name, value] = read();
      if (value !== undefined) values[name] = value;
    }
    return values;
  };
}

// The schema's own bounds, checked here so that the person can correct a value before it is sent.
function checkBounds(value, property, title) {
  const at = (limit, word) => `${title} must be ${word} ${limit}`;
  if (typeof value === "number") {
    if (property.minimum !== undefined && value < property.minimum) throw new Error(at(property.minimum, "at least"));
    if (property.maximum !== undefined && value > property.maximum) throw new Error(at(property.maximum, "at most"));
    if (property.exclusiveMinimum !== undefined && value <= property.exclusiveMinimum) throw new Error(at(property.exclusiveMinimum, "more than"));
    if (property.exclusiveMaximum !== undefined && value >= property.exclusiveMaximum) throw new Error(at(property.exclusiveMaximum, "less than"));
  }
  if (typeof value === "string") {
    if (property.minLength !== undefined && value.length < property.minLength) throw new Error(at(`${property.minLength} characters`, "at least"));
    if (property.maxLength !== undefined && value.length > property.maxLength) throw new Error(at(`${property.maxLength} characters`, "at most"));
  }
  return value;
}

function readValue(input, kind, required, title, property) {
  return checkBounds(readRaw(input, kind, required, title), property, title);
}

function readRaw(input, kind, required, title) {
  if (kind === "boolean") return input.checked;
  const raw = input.value;
  if (raw === "") {
    if (required && kind !== "string") throw new Error(`${title} is required`);
    return required ? "" : undefined;
  }
  if (kind === "integer" || kind === "number") {
    const number = Number(raw);
    if (!Number.isFinite(number) || (kind === "integer" && !Number.isInteger(number))) throw new Error(`${title} must be ${kind === "integer" ? "a whole number" : "a number"}`);
    return number;
  }
  if (kind === "enum") return JSON.parse(raw);
  if (kind === "json") {
    try {
      return JSON.parse(raw);
    } catch {
      throw new Error(`${title} must be JSON`);
    }
  }
  return raw;
}
