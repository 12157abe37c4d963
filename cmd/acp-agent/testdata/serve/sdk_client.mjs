// An ACP client built on the official TypeScript SDK (@agentclientprotocol/sdk,
// pinned in .ci/package.json): its Streamable HTTP client (createHttpStream) or
// its WebSocket client (createWebSocketStream with the ws package) drives
// `acp-agent serve`. The Go tests (serve_e2e_test.go) run one phase and read
// the JSON it prints on stdout.
//
//   node sdk_client.mjs NODE_MODULES PHASE URL TOKEN TRANSPORT CWD [SESSION]
//
// PHASE run:    initialize, session/new, a streamed prompt, a permission round
//               trip, session/cancel, $/cancel_request
// PHASE load:   initialize, session/load of SESSION (its replay)
// PHASE resume: (http) a prompt whose session event stream is cut mid-way;
//               the stream is resumed with Last-Event-ID
import { createRequire } from "node:module";
import path from "node:path";
import { pathToFileURL } from "node:url";

const [nodeModules, phase, url, token, transport, cwd, sessionArg] = process.argv.slice(2);
const sdkDir = path.join(nodeModules, "@agentclientprotocol", "sdk", "dist");
const acp = await import(pathToFileURL(path.join(sdkDir, "v1", "stable", "acp.js")));
const { createHttpStream } = await import(pathToFileURL(path.join(sdkDir, "transports", "http-stream.js")));
const { createWebSocketStream } = await import(pathToFileURL(path.join(sdkDir, "transports", "ws-stream.js")));
const WebSocket = createRequire(path.join(nodeModules, "x.js"))("ws");

const headers = { Authorization: `Bearer ${token}` };

// The SDK's HTTP client (2.4.0) does not send Last-Event-ID. For the resume
// phase its fetch is wrapped: the session's event stream is cut after a
// number of events, as a network failure would, and fetched again with
// Last-Event-ID; the SDK reads one continuous body. The events just before
// the cut are lost in transit (read, never passed on), so only the
// server's replay brings them back. Only whole events pass, so a cut never
// splits one.
const cut = { armed: false, after: 0, lose: 5, seen: 0, resumes: 0, lastIds: [] };
function resumingFetch(input, init = {}) {
  const h = new Headers(init.headers);
  if ((init.method ?? "GET") !== "GET" || !h.get("Acp-Session-Id")) {
    return fetch(input, init);
  }
  const outer = init.signal;
  let ac = new AbortController();
  outer?.addEventListener("abort", () => ac.abort(), { once: true });
  return fetch(input, { ...init, signal: ac.signal }).then((first) => {
    if (!first.ok) return first;
    const enc = new TextEncoder();
    const dec = new TextDecoder();
    let reader = first.body.getReader();
    let lastId = null;
    const body = new ReadableStream({
      async start(controller) {
        let buf = "";
        let cutting = false;
        for (;;) {
          let r;
          try {
            r = await reader.read();
          } catch (e) {
            if (!cutting || outer?.aborted) {
              try { controller.error(e); } catch {}
              return;
            }
            // Reconnect after the cut, from the last event passed on.
            buf = "";
            cutting = false;
            ac = new AbortController();
            outer?.addEventListener("abort", () => ac.abort(), { once: true });
            const rh = new Headers(init.headers);
            rh.set("Last-Event-ID", lastId);
            cut.lastIds.push(lastId);
            const again = await fetch(input, { ...init, headers: rh, signal: ac.signal });
            if (!again.ok) {
              controller.error(new Error(`resume refused: ${again.status} ${await again.text()}`));
              return;
            }
            cut.resumes++;
            reader = again.body.getReader();
            continue;
          }
          if (r.done) {
            controller.close();
            return;
          }
          buf += dec.decode(r.value, { stream: true });
          let i;
          while ((i = buf.indexOf("\n\n")) >= 0) {
            const ev = buf.slice(0, i + 2);
            buf = buf.slice(i + 2);
            const m = /^id: ?(.*)$/m.exec(ev);
            if (m && cut.armed && cut.seen >= cut.after) {
              // Lost in transit: sent by the server, never handed to the
              // SDK; then the connection drops.
              if (++cut.seen === cut.after + cut.lose) {
                cut.armed = false;
                cutting = true;
                ac.abort();
                break;
              }
              continue;
            }
            if (m) {
              lastId = m[1];
              if (cut.armed) cut.seen++;
            }
            controller.enqueue(enc.encode(ev));
          }
        }
      },
    });
    return new Response(body, { status: first.status, headers: first.headers });
  });
}

function stream() {
  if (transport === "ws") {
    return createWebSocketStream(url, { WebSocket: WebSocket.WebSocket ?? WebSocket, headers });
  }
  return createHttpStream(url, { headers, fetch: phase === "resume" ? resumingFetch : undefined });
}

const text = new Map(); // session id -> text of agent_message_chunk
const kinds = [];
let permissions = 0;
const app = acp
  .client({ name: "acp-agent-serve-test" })
  .onNotification("session/update", ({ params }) => {
    const u = params.update;
    kinds.push(u.sessionUpdate);
    if (u.sessionUpdate === "agent_message_chunk" && u.content.type === "text") {
      text.set(params.sessionId, (text.get(params.sessionId) ?? "") + u.content.text);
    }
  })
  .onRequest("session/request_permission", ({ params }) => {
    permissions++;
    const allow = params.options.find((o) => o.kind === "allow_once") ?? params.options[0];
    return { outcome: { outcome: "selected", optionId: allow.optionId } };
  });

const out = { phase, transport };
const prompt = (ctx, sessionId, t, options) =>
  ctx.request("session/prompt", { sessionId, prompt: [{ type: "text", text: t }] }, options);

await app.connectWith(stream(), async (ctx) => {
  const init = await ctx.request("initialize", {
    protocolVersion: 1,
    clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false },
  });
  out.agent = init.agentInfo?.name;
  out.transportMeta = init.agentCapabilities?._meta?.transport ?? null;
  if (phase === "run") {
    const s = await ctx.request("session/new", { cwd, mcpServers: [] });
    out.sessionId = s.sessionId;
    out.streamStop = (await prompt(ctx, s.sessionId, "stream please")).stopReason;
    out.streamText = text.get(s.sessionId) ?? "";
    text.delete(s.sessionId);
    out.writeStop = (await prompt(ctx, s.sessionId, "write the file")).stopReason;
    out.permissions = permissions;
    out.writeText = text.get(s.sessionId) ?? "";
    // session/cancel while a turn hangs.
    const hanging = prompt(ctx, s.sessionId, "hang now");
    await waitFor(() => (text.get(s.sessionId) ?? "").includes("waiting"));
    await ctx.notify("session/cancel", { sessionId: s.sessionId });
    out.cancelStop = (await hanging).stopReason;
    // $/cancel_request of the prompt request itself.
    text.delete(s.sessionId);
    const ac = new AbortController();
    const hanging2 = prompt(ctx, s.sessionId, "hang again", { cancellationSignal: ac.signal });
    await waitFor(() => (text.get(s.sessionId) ?? "").includes("waiting"));
    ac.abort();
    out.cancelRequestStop = await hanging2.then((r) => r.stopReason, (e) => `error ${e.code ?? ""}: ${e.message}`);
  } else if (phase === "load") {
    await ctx.request("session/load", { sessionId: sessionArg, cwd, mcpServers: [] });
    // The replay comes on the session's stream, the answer on the
    // connection's: wait until the replayed text is there.
    await waitFor(() => (text.get(sessionArg) ?? "").includes("c49"));
    out.loadText = text.get(sessionArg) ?? "";
  } else if (phase === "resume") {
    const s = await ctx.request("session/new", { cwd, mcpServers: [] });
    out.sessionId = s.sessionId;
    await waitFor(() => kinds.includes("available_commands_update"));
    cut.armed = true;
    cut.after = 40;
    out.slowStop = (await prompt(ctx, s.sessionId, "slow please")).stopReason;
    out.slowText = text.get(s.sessionId) ?? "";
    out.resumes = cut.resumes;
    out.lastEventIds = cut.lastIds;
  }
});
process.stdout.write(JSON.stringify(out) + "\n");
process.exit(0);

async function waitFor(cond, ms = 10000) {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error("timed out waiting");
    await new Promise((r) => setTimeout(r, 10));
  }
}
