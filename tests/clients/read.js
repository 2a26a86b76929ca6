// Read one linked-data document with rdflib.js and with jsonld.js, as a browser tool would,
// and print how many triples each read (JSON on stdout). Used by tests/server/test_client_matrix.py.
//   node read.js URL
"use strict";
const $rdf = require("rdflib");
const jsonld = require("jsonld");

async function get(url, accept) {
  const response = await fetch(url, { headers: { Accept: accept } });
  if (!response.ok) throw new Error(`${url}: HTTP ${response.status}`);
  return { type: (response.headers.get("content-type") || "").split(";")[0], text: await response.text() };
}

async function withRdflib(url) {
  const found = await get(url, "text/turtle");
  const store = $rdf.graph();
  await new Promise((resolve, reject) => {
    $rdf.parse(found.text, store, url, found.type, (error) => (error ? reject(error) : resolve()));
  });
  return store.statements.length;
}

async function withJsonld(url) {
  const found = await get(url, "application/ld+json");
  const doc = JSON.parse(found.text);
  const nquads = await jsonld.toRDF(doc, { format: "application/n-quads", base: url });
  return nquads.split("\n").filter((line) => line.trim()).length;
}

(async () => {
  const url = process.argv[2];
  const out = {};
  for (const [name, read] of [["rdflib", withRdflib], ["jsonld", withJsonld]]) {
    try {
      out[name] = await read(url);
    } catch (error) {
      out[name] = { error: String(error && error.message ? error.message : error).slice(0, 500) };
    }
  }
  process.stdout.write(JSON.stringify(out));
})();
