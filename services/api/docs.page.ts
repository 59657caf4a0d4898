/**
 * The /docs page: one self-contained HTML file (no CDN; installations are often offline) that
 * fetches /openapi.json and lists every operation once, by the spec's route groups, with its
 * fields (type, unit, description, example), a request and an answer example, its error texts,
 * and a "Try it" form that sends the request with the credentials typed at the top of the page
 * (held in the page's memory only, never stored). A search box narrows the list.
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
  main { padding: 16px 24px; max-width: 1150px; }
  fieldset { border: 1px solid #dde1e7; background: #fff; border-radius: 6px; margin: 0 0 12px; padding: 8px 12px; }
  fieldset label { margin-right: 14px; }
  input, textarea, button { font: inherit; }
  input#filter { width: 100%; padding: 8px; box-sizing: border-box; margin-bottom: 12px; }
  h2 { font-size: 17px; margin: 22px 0 8px; }
  h4 { margin: 12px 0 4px; }
  details.operation { background: #fff; border: 1px solid #dde1e7; border-radius: 6px; margin: 6px 0; }
  details.operation > summary { cursor: pointer; padding: 8px 12px; display: flex; gap: 10px; align-items: baseline; }
  .method { font: bold 12px monospace; padding: 2px 6px; border-radius: 4px; color: #fff; min-width: 52px; text-align: center; }
  .GET { background: #22609f; } .POST { background: #22703f; } .PUT { background: #8a5a00; } .DELETE { background: #a8322a; }
  code.path { font-size: 14px; }
  .summary { color: #4a5566; }
  .body { padding: 4px 14px 12px; border-top: 1px solid #eef0f3; }
  table { border-collapse: collapse; margin: 6px 0; }
  td, th { border: 1px solid #e3e6eb; padding: 3px 8px; text-align: left; vertical-align: top; font-size: 14px; }
  pre { background: #f1f3f6; padding: 6px 8px; overflow: auto; max-height: 20em; margin: 4px 0; }
  form.try label { display: block; margin: 4px 0; }
  form.try input { width: 24em; }
  form.try textarea { width: 100%; min-height: 6em; font-family: monospace; }
</style>
</head>
<body>
<header>
  <h1 id="title">Industrial Monitoring Service</h1>
  <p id="description">Loading /openapi.json…</p>
</header>
<main>
  <fieldset>
    <legend>Credentials for "Try it" (kept in this page only)</legend>
    <label>Username <input id="username" autocomplete="username"></label>
    <label>Password <input id="password" type="password" autocomplete="current-password"></label>
    <label>Ingest key <input id="ingest-key" autocomplete="off"></label>
  </fieldset>
  <label for="filter">Search operations</label>
  <input id="filter" type="search" placeholder="Path, summary, field or message, e.g. _spectrum">
  <div id="operations"></div>
</main>
<script>
(function () {
  "use strict";
  function el(tag, attrs, children) {
    var node = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (k) { if (k === "text") node.textContent = attrs[k]; else node.setAttribute(k, attrs[k]); });
    (children || []).forEach(function (c) { if (c) node.appendChild(typeof c === "string" ? document.createTextNode(c) : c); });
    return node;
  }
  function resolve(doc, schema) {
    if (schema && schema.$ref) return resolve(doc, doc.components.schemas[schema.$ref.split("/").pop()]);
    return schema || {};
  }
  function typeText(schema) {
    if (!schema) return "";
    if (schema.$ref) return schema.$ref.split("/").pop();
    if (schema.enum) return "one of " + schema.enum.join(" | ");
    if (schema.const !== undefined) return JSON.stringify(schema.const);
    if (schema.type === "array") return typeText(schema.items || { type: "any" }) + "[]";
    if (schema.oneOf) return schema.oneOf.map(typeText).join(" or ");
    var t = Array.isArray(schema.type) ? schema.type.join(" | ") : (schema.type || "any");
    if (schema.format) t += " (" + schema.format + ")";
    return t;
  }
  function example(schema) { return schema && schema.examples ? JSON.stringify(schema.examples[0]) : ""; }
  function table(head, rows) {
    return el("table", {}, [el("tr", {}, head.map(function (h) { return el("th", { text: h }); }))].concat(rows.map(function (r) {
      return el("tr", {}, r.map(function (c) { return el("td", { text: c === undefined ? "" : String(c) }); }));
    })));
  }
  function fieldRows(list) {
    return list.map(function (f) {
      return [f.name, f.in || "body", typeText(f.schema), f.schema["x-unit"] || "", f.required ? "yes" : "no", f.schema.description || "", example(f.schema)];
    });
  }
  function tryForm(doc, method, path, op, fields, bodyExample) {
    var form = el("form", { class: "try" });
    var inputs = {};
    fields.filter(function (f) { return f.in !== "body"; }).forEach(function (f) {
      var input = el("input", { name: f.name });
      if (f.schema.examples && f.in === "query") input.value = String(f.schema.examples[0]);
      inputs[f.name] = { field: f, input: input };
      form.appendChild(el("label", {}, [f.name + " (" + f.in + ") ", input]));
    });
    var body = null;
    if (op.requestBody) {
      body = el("textarea", { name: "body" });
      body.value = bodyExample ? JSON.stringify(bodyExample, null, 2) : "{}";
      form.appendChild(el("label", {}, ["Request body ", body]));
    }
    var out = el("pre", { class: "result", "aria-live": "polite" });
    form.appendChild(el("button", { type: "submit", text: "Send" }));
    form.appendChild(out);
    form.addEventListener("submit", function (e) {
      e.preventDefault();
      var url = path, query = new URLSearchParams();
      // The console's mark: a 401 then carries no Basic challenge, whose browser prompt would cover the page.
      var headers = { "X-Requested-With": "ims-console" };
      Object.keys(inputs).forEach(function (name) {
        var v = inputs[name].input.value;
        if (inputs[name].field.in === "path") url = url.replace("{" + name + "}", encodeURIComponent(v));
        else if (inputs[name].field.in === "header") { if (v !== "") headers[name] = v; }
        else if (v !== "") query.append(name, v);
      });
      var security = (op.security || []).map(function (s) { return Object.keys(s)[0]; });
      if (security.indexOf("basicAuth") >= 0) {
        headers.Authorization = "Basic " + btoa(unescape(encodeURIComponent(document.getElementById("username").value + ":" + document.getElementById("password").value)));
      } else if (security.indexOf("ingestKey") >= 0) {
        headers.Authorization = "Bearer " + document.getElementById("ingest-key").value;
      }
      var init = { method: method.toUpperCase(), headers: headers };
      if (body && body.value.trim() !== "") { headers["Content-Type"] = "application/json"; init.body = body.value; }
      out.textContent = "…";
      var q = query.toString();
      fetch(base + url + (q ? "?" + q : ""), init).then(function (r) {
        return r.text().then(function (text) {
          var shown = text;
          try { shown = JSON.stringify(JSON.parse(text), null, 2); } catch (err) { /* not JSON */ }
          out.textContent = "HTTP " + r.status + "\\n" + shown;
        });
      }, function (err) { out.textContent = "Request failed: " + err; });
    });
    return form;
  }
  function operation(doc, method, path, op, also) {
    var body = el("div", { class: "body" });
    if (op.description) body.appendChild(el("p", { text: op.description + (op.security && op.security.length ? "" : " No authentication.") }));
    if (also.length) body.appendChild(el("p", { text: "Also served at " + also.join(", ") + "." }));
    var fields = (op.parameters || []).slice();
    var bodyExample = null;
    if (op.requestBody) {
      var content = op.requestBody.content["application/json"];
      var schema = resolve(doc, content.schema);
      var required = schema.required || [];
      Object.keys(schema.properties || {}).forEach(function (name) {
        fields.push({ name: name, in: "body", schema: schema.properties[name], required: required.indexOf(name) >= 0 });
      });
      bodyExample = content.example || null;
    }
    if (fields.length) {
      body.appendChild(el("h4", { text: "Fields" }));
      body.appendChild(table(["name", "in", "type", "unit", "required", "description", "example"], fieldRows(fields)));
    }
    if (bodyExample) {
      body.appendChild(el("h4", { text: "Request example" }));
      body.appendChild(el("pre", { text: JSON.stringify(bodyExample, null, 2) }));
    }
    var ok = op.responses["200"] && op.responses["200"].content && op.responses["200"].content["application/json"];
    body.appendChild(el("h4", { text: "Answer" }));
    body.appendChild(el("p", { text: typeText(ok && ok.schema) }));
    if (ok && ok.example !== undefined) body.appendChild(el("pre", { text: JSON.stringify(ok.example, null, 2) }));
    var rows = [];
    Object.keys(op.responses).forEach(function (status) {
      var c = op.responses[status].content && op.responses[status].content["application/json"];
      if (c && c.examples) Object.keys(c.examples).forEach(function (k) { rows.push([status, c.examples[k].value.error.message]); });
    });
    body.appendChild(el("h4", { text: "Errors" }));
    body.appendChild(table(["status", "message"], rows));
    body.appendChild(el("h4", { text: "Try it" }));
    body.appendChild(tryForm(doc, method, path, op, fields, bodyExample));
    var item = el("details", { class: "operation", "data-method": method.toUpperCase(), "data-path": path }, [
      el("summary", {}, [
        el("span", { class: "method " + method.toUpperCase(), text: method.toUpperCase() }),
        el("code", { class: "path", text: path }),
        el("span", { class: "summary", text: op.summary || "" }),
      ]),
      body,
    ]);
    item.dataset.search = [method, path, op.summary, also.join(" "), fields.map(function (f) { return f.name; }).join(" "), rows.map(function (r) { return r[1]; }).join(" ")].join(" ").toLowerCase();
    return item;
  }
  function render(doc) {
    document.getElementById("title").textContent = doc.info.title + " – API " + doc.info.version;
    document.getElementById("description").textContent = doc.info.description.split(String.fromCharCode(96)).join("");
    var byAction = {}, order = [];
    Object.keys(doc.paths).forEach(function (path) {
      Object.keys(doc.paths[path]).forEach(function (method) {
        var op = doc.paths[path][method], key = op["x-action"] || method + path;
        if (!byAction[key]) { byAction[key] = []; order.push(key); }
        byAction[key].push({ method: method, path: path, op: op });
      });
    });
    var byTag = {};
    order.forEach(function (key) {
      var routes = byAction[key], first = routes[0];
      var also = routes.slice(1).map(function (r) { return r.method.toUpperCase() + " " + r.path; });
      var tag = (first.op.tags && first.op.tags[0]) || "Other";
      (byTag[tag] = byTag[tag] || []).push(operation(doc, first.method, first.path, first.op, also));
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
  var base = location.pathname.slice(0, location.pathname.lastIndexOf("/docs"));
  fetch(base + "/openapi.json").then(function (r) { return r.json(); }).then(render, function (err) {
    document.getElementById("description").textContent = "Could not load /openapi.json: " + err;
  });
})();
</script>
</body>
</html>
`;
