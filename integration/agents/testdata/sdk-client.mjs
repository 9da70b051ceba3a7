// A client of forgebox serve built on the official TypeScript MCP SDK
// (@modelcontextprotocol/sdk 1.32): it starts the server over stdio, lists
// the tools, runs commands, and answers forgebox's approval questions
// (elicitation) as told. It prints one JSON object: what it saw.
//
// node sdk-client.mjs SDK_DIR FORGEBOX WORKSPACE ANSWER COMMAND...
//   SDK_DIR: the directory whose node_modules holds the SDK
//   ANSWER:  what the "person" answers when asked: an answer of forgebox's
//            question (once, session, no), or "decline"
import { pathToFileURL } from "node:url";
import { join } from "node:path";

const [sdkDir, forgebox, workspace, answer, ...commands] = process.argv.slice(2);
const sdk = (p) => import(pathToFileURL(join(sdkDir, "node_modules/@modelcontextprotocol/sdk/dist/esm", p)).href);
const { Client } = await sdk("client/index.js");
const { StdioClientTransport } = await sdk("client/stdio.js");
const { ElicitRequestSchema } = await sdk("types.js");

const client = new Client({ name: "forgebox-sdk-test", version: "1.0.0" }, { capabilities: { elicitation: {} } });
const asked = [];
client.setRequestHandler(ElicitRequestSchema, async (req) => {
  asked.push(req.params);
  if (answer === "decline") return { action: "decline" };
  return { action: "accept", content: { answer } };
});
const transport = new StdioClientTransport({ command: forgebox, args: ["serve", "--workspace", workspace, "--no-undo"], stderr: "inherit" });
await client.connect(transport);
const out = { server: client.getServerVersion(), protocol: transport.protocolVersion ?? null, tools: [], calls: [], asked };
out.tools = (await client.listTools()).tools.map((t) => t.name);
for (const command of commands) {
  const res = await client.callTool({ name: "run_shell_command", arguments: { command } });
  out.calls.push(res);
}
await client.close();
console.log(JSON.stringify(out));
