/**
 * The /docs page: one self-contained HTML file (no CDN; installations are often offline) that
 * fetches /openapi.json and lists every operation by tag, with its parameters, body, answer and
 * error messages. A filter box narrows the list by path, summary or message.
 */
export const DOCS_PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Industrial Monitoring Service – API</title>
<style>
  body { font: 15px/1.45 system-ui, sans-serif; margin: 0; color: #1d2430; background: #f6f7f9; }
  header { background: #1d2430; color: #fff; padding: 16px 24px; }
  header h1 { margin: 0; font-size: 20px; }
  header p { margin: 4px 0 0; color: #c6ccd6; max-width: 70em; }
  main { padding: 16px 24px; max-width: 1100px; }
  input#filter { width: 100%; padding: 8px; font-size: 15px; box-sizing: border-box; margin-bottom: 12px; }
  h2 { font-size: 17px; margin: 22px 0 8px; }
  details.operation { background: #fff; border: 1px solid #dde1e7; border-radius: 6px; margin: 6px 0; }
  details.operation > summary { cursor: pointer; padding: 8px 12px; list-style: none; display: flex; gap: 10px; align-items: baseline; }
  .method { font: bold 12px monospace; padding: 2px 6px; border-radius: 4px; color: #fff; min-width: 52px; text-align: center; }
  .GET { background: #2f7ed8; } .POST { background: #2e9d5b; } .PUT { background: #c98a12; } .DELETE { background: #c4392f; }
  code.path { font-size: 14px; }
  .summary { color: #4a5566; }
  .body { padding: 4px 14px 12px; border-top: 1px solid #eef0f3; }
  table { border-collapse: collapse; margin: 6px 0; }
  td, th { border: 1px solid #e3e6eb; padding: 3px 8px; text-align: left; vertical-align: top; font-size: 14px; }
  .status { font-weight: bold; }
  .empty { color: #8a93a3; }
</style>
</head>
<body>
<header>
  <h1 id="title">Industrial Monitoring Service</h1>
  <p id="description">Loading /openapi.json…</p>
</header>
<main>
  <input id="filter" type="search" placeholder="Filter by path, summary or message" aria-label="Filter operations">
  <div id="operations"></div>
</main>
<script>
(function () {
  "use strict";
  function el(tag, attrs, children) {
    var node = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (k) { if (k === "text") node.textContent = attrs[k]; else node.setAttribute(k, attrs[k]); });
    (children || []).forEach(function (c) { if (c) node.appendChild(c); });
    return node;
  }
  function resolve(doc, schema) {
    if (schema && schema.$ref) return resolve(doc, doc.components.schemas[schema.$ref.split("/").pop()]);
    return schema || {};
  }
  function typeText(schema) {
    if (!schema) return "";
    if (schema.$ref) return schema.$ref.split("/").pop();
    if (schema.enum) return schema.enum.join(" | ");
    if (schema.type === "array") return typeText(schema.items) + "[]";
    if (schema.oneOf) return schema.oneOf.map(typeText).join(" or ");
    return Array.isArray(schema.type) ? schema.type.join(" | ") : (schema.type || "any");
  }
  function table(head, rows) {
    return el("table", {}, [el("tr", {}, head.map(function (h) { return el("th", { text: h }); }))].concat(rows.map(function (r) {
      return el("tr", {}, r.map(function (c) { return el("td", { text: String(c) }); }));
    })));
  }
  function operation(doc, method, path, op) {
    var body = el("div", { class: "body" });
    body.appendChild(el("p", { text: (op.description || "") + (op.security && op.security.length ? "" : " No authentication.") }));
    if (op.parameters && op.parameters.length) {
      body.appendChild(el("h4", { text: "Parameters" }));
      body.appendChild(table(["name", "in", "type", "required"], op.parameters.map(function (p) {
        return [p.name, p.in, typeText(p.schema), p.required ? "yes" : "no"];
      })));
    }
    if (op.requestBody) {
      var schema = resolve(doc, op.requestBody.content["application/json"].schema);
      var required = schema.required || [];
      body.appendChild(el("h4", { text: "JSON body" }));
      body.appendChild(table(["field", "type", "required"], Object.keys(schema.properties || {}).map(function (name) {
        return [name, typeText(schema.properties[name]), required.indexOf(name) >= 0 ? "yes" : "no"];
      })));
    }
    body.appendChild(el("h4", { text: "Responses" }));
    var rows = [];
    Object.keys(op.responses).forEach(function (status) {
      var r = op.responses[status];
      var content = r.content && r.content["application/json"];
      if (content && content.examples) {
        Object.keys(content.examples).forEach(function (k) { rows.push([status, content.examples[k].value.error.message]); });
      } else {
        rows.push([status, typeText(content && content.schema) + (content && content.example !== undefined ? "  e.g. " + JSON.stringify(content.example) : "")]);
      }
    });
    body.appendChild(table(["status", "answer or message"], rows));
    var item = el("details", { class: "operation", "data-method": method.toUpperCase(), "data-path": path }, [
      el("summary", {}, [
        el("span", { class: "method " + method.toUpperCase(), text: method.toUpperCase() }),
        el("code", { class: "path", text: path }),
        el("span", { class: "summary", text: (op["x-operation-number"] ? op["x-operation-number"] + ". " : "") + (op.summary || "") }),
      ]),
      body,
    ]);
    item.dataset.search = (method + " " + path + " " + op.summary + " " + rows.map(function (r) { return r[1]; }).join(" ")).toLowerCase();
    return item;
  }
  function render(doc) {
    document.getElementById("title").textContent = doc.info.title + " – API " + doc.info.version;
    document.getElementById("description").textContent = doc.info.description;
    var byTag = {};
    Object.keys(doc.paths).forEach(function (path) {
      Object.keys(doc.paths[path]).forEach(function (method) {
        var op = doc.paths[path][method];
        var tag = (op.tags && op.tags[0]) || "Other";
        (byTag[tag] = byTag[tag] || []).push(operation(doc, method, path, op));
      });
    });
    var root = document.getElementById("operations");
    (doc.tags || []).map(function (t) { return t.name; }).concat(Object.keys(byTag)).forEach(function (tag) {
      if (!byTag[tag]) return;
      var section = el("section", { class: "tag", "data-tag": tag }, [el("h2", { text: tag })].concat(byTag[tag]));
      delete byTag[tag];
      root.appendChild(section);
    });
    document.body.setAttribute("data-ready", "true");
  }
  document.getElementById("filter").addEventListener("input", function (e) {
    var q = e.target.value.trim().toLowerCase();
    document.querySelectorAll("details.operation").forEach(function (d) { d.hidden = q !== "" && d.dataset.search.indexOf(q) < 0; });
    document.querySelectorAll("section.tag").forEach(function (s) { s.hidden = !s.querySelector("details.operation:not([hidden])"); });
  });
  // Beside /docs, wherever the gateway is mounted.
  fetch(location.pathname.slice(0, location.pathname.lastIndexOf("/docs")) + "/openapi.json").then(function (r) { return r.json(); }).then(render, function (err) {
    document.getElementById("description").textContent = "Could not load /openapi.json: " + err;
  });
})();
</script>
</body>
</html>
`;
