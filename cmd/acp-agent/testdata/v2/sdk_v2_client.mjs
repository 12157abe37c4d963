// An ACP v2 client built on the official TypeScript SDK's v2 API
// (@agentclientprotocol/sdk 2.4.0, pinned in .ci/package.json:
// "@agentclientprotocol/sdk/experimental/v2", dist/v2/stable/acp.js). It
// runs the agent binary on stdio, twice, and drives one session: the Go
// test (v2_e2e_test.go) reads the JSON report it prints on stdout.
//
//   node sdk_v2_client.mjs NODE_MODULES AGENT_BINARY CWD [AGENT_ARGS...]
//
// First agent: initialize asking for version 2, session/new, a prompt
// whose turn the idle state_update ends, a tool call the user allows
// (session/request_permission), a command shown as a display-only
// terminal, a turn cancelled with session/cancel,
// session/close. Second agent (a restart): session/resume replaying the
// conversation from the start, session/close.
import { spawn } from "node:child_process";
import path from "node:path";
import { Readable, Writable } from "node:stream";
import { pathToFileURL } from "node:url";

const [nodeModules, binary, cwd, ...agentArgs] = process.argv.slice(2);
const acp = await import(pathToFileURL(path.join(nodeModules, "@agentclientprotocol", "sdk", "dist", "v2", "stable", "acp.js")));

const report = { permissions: [], updates: {}, replayedUsers: [], replayedTools: [] };
const note = (phase, update) => {
  if (phase === "resume" && update.sessionUpdate === "user_message") report.replayedUsers.push(update.messageId);
  if (phase === "resume" && update.sessionUpdate === "tool_call_update") report.replayedTools.push(`${update.toolCallId}:${update.status}`);
  const kind = update.sessionUpdate === "state_update"
    ? `state_update:${update.state}${update.stopReason ? ":" + update.stopReason : ""}`
    : update.sessionUpdate;
  (report.updates[phase] ??= []).push(kind);
};

// run starts the agent and runs op with a connected ClientContext; the
// agent's stdin is closed after op, and run waits for it to exit.
async function run(phase, op) {
  const child = spawn(binary, agentArgs, { stdio: ["pipe", "pipe", "inherit"] });
  const exited = new Promise((resolve) => child.on("exit", (code, signal) => resolve({ code, signal })));
  const stream = acp.ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout));
  const app = acp.client({ name: "sdk-v2-test" })
    .onRequest("session/request_permission", async ({ params }) => {
      report.permissions.push({ title: params.title, subject: params.subject?.type, toolCallId: params.subject?.toolCall?.toolCallId });
      const allow = params.options.find((o) => o.kind === "allow_once");
      return { outcome: { outcome: "selected", optionId: allow.optionId } };
    })
    .onNotification("session/update", ({ params }) => note(phase, params.update));
  try {
    await app.connectWith(stream, op);
  } finally {
    child.stdin.end();
  }
  const exit = await exited;
  report[`${phase}Exit`] = exit.code;
}

// turn reads a session's updates until an idle state_update, noting them
// and collecting the agent's text.
async function turn(session, phase) {
  let text = "";
  for (;;) {
    const m = await session.nextUpdate();
    note(phase, m.update);
    const u = m.update;
    if (u.sessionUpdate === "terminal_output_chunk") {
      report.terminalOutput = (report.terminalOutput ?? "") + Buffer.from(u.data, "base64").toString();
    }
    if (u.sessionUpdate === "tool_call_content_chunk" && u.content.type === "terminal") report.shownTerminal = u.content.terminalId;
    if (u.sessionUpdate === "terminal_update" && u.exitStatus) report.exitedTerminal = u.terminalId;
    if (m.update.sessionUpdate === "agent_message_chunk" && m.update.content.type === "text") {
      text += m.update.content.text;
    }
    if (m.kind === "stop") return { text, stopReason: m.stopReason };
  }
}

await run("run", async (ctx) => {
  const init = await ctx.request("initialize", { protocolVersion: 2, info: { name: "sdk-v2-test", version: "1" }, capabilities: {} });
  report.protocolVersion = init.protocolVersion;
  report.agent = init.info.name;
  const session = await ctx.buildSession(cwd).start();
  report.sessionId = session.sessionId;
  report.configOptions = (session.configOptions ?? []).map((o) => o.configId);

  const greet = await session.prompt("[greet] say hello");
  report.greetMessageId = greet.messageId;
  const g = await turn(session, "greet");
  report.greetText = g.text;
  report.greetStop = g.stopReason;

  const write = await session.prompt("[write] write the notes");
  report.writeMessageId = write.messageId;
  const w = await turn(session, "write");
  report.writeText = w.text;
  report.writeStop = w.stopReason;

  // A command, shown as a display-only terminal.
  report.commandMessageId = (await session.prompt("[command] run it")).messageId;
  await turn(session, "command");

  const wait = await session.prompt("[wait] take your time");
  report.waitMessageId = wait.messageId;
  for (;;) {
    const m = await session.nextUpdate();
    note("wait", m.update);
    if (m.update.sessionUpdate === "agent_message_chunk") break;
  }
  await ctx.notify("session/cancel", { sessionId: session.sessionId });
  const c = await turn(session, "wait");
  report.cancelStop = c.stopReason;

  await ctx.request("session/close", { sessionId: session.sessionId });
  session.dispose();
});

await run("resume", async (ctx) => {
  await ctx.request("initialize", { protocolVersion: 2, info: { name: "sdk-v2-test", version: "1" }, capabilities: {} });
  const resumed = await ctx.request("session/resume", { sessionId: report.sessionId, cwd, replayFrom: { type: "start" } });
  report.resumedConfigOptions = (resumed.configOptions ?? []).map((o) => o.configId);
  await ctx.request("session/close", { sessionId: report.sessionId });
});

process.stdout.write(JSON.stringify(report));
