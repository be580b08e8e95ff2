// Drives the YAML language server over stdio, as an editor would, on one YAML document:
// prints each diagnostic it publishes for the document (one per line) and exits.
// Usage: node check.mjs <server.js> <file.yml>
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";
import { resolve } from "node:path";

const [server, file] = process.argv.slice(2);
const uri = pathToFileURL(resolve(file)).href;
const child = spawn(process.execPath, [server, "--stdio"], { stdio: ["pipe", "pipe", "inherit"] });
let id = 0;
const send = (method, params, isRequest = false) => {
  const message = { jsonrpc: "2.0", method, params };
  if (isRequest) message.id = ++id;
  const body = JSON.stringify(message);
  child.stdin.write(`Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
};
let buffer = Buffer.alloc(0);
const timer = setTimeout(() => { console.error("no diagnostics within 30 s"); process.exit(2); }, 30000);
child.stdout.on("data", (chunk) => {
  buffer = Buffer.concat([buffer, chunk]);
  for (;;) {
    const end = buffer.indexOf("\r\n\r\n");
    if (end < 0) return;
    const length = Number(/Content-Length: (\d+)/.exec(buffer.slice(0, end).toString())[1]);
    if (buffer.length < end + 4 + length) return;
    const message = JSON.parse(buffer.slice(end + 4, end + 4 + length).toString());
    buffer = buffer.slice(end + 4 + length);
    if (message.id === 1 && message.result) {
      send("initialized", {});
      send("workspace/didChangeConfiguration", { settings: { yaml: { validate: true, schemaStore: { enable: false } } } });
      send("textDocument/didOpen", {
        textDocument: { uri, languageId: "yaml", version: 1, text: readFileSync(file, "utf8") },
      });
    }
    if (message.method === "workspace/configuration") {
      const reply = { jsonrpc: "2.0", id: message.id, result: message.params.items.map(() => ({ validate: true, schemaStore: { enable: false } })) };
      const body = JSON.stringify(reply);
      child.stdin.write(`Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
    }
    if (message.method === "textDocument/publishDiagnostics" && message.params.uri === uri) {
      clearTimeout(timer);
      for (const d of message.params.diagnostics) {
        console.log(`${d.range.start.line + 1}:${d.range.start.character + 1}: ${d.message}`);
      }
      child.kill();
      process.exit(0);
    }
  }
});
send("initialize", { processId: process.pid, rootUri: null, capabilities: {} }, true);
