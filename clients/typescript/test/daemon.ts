// Starts `luoshod serve` as a real child process (scripted provider, SQLite store) and
// reads its address from the "luoshod listening on ADDR" line on stdout.
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { BinaryWriter, WireType } from "@bufbuild/protobuf/wire";
import { Metadata, type status as GrpcStatus } from "@grpc/grpc-js";

/** clients/typescript (this file runs from dist-test/test/). */
export const PACKAGE_DIR = fileURLToPath(new URL("../../", import.meta.url));
export const REPO_ROOT = fileURLToPath(new URL("../../../../", import.meta.url));
const PYTHON = process.env.LUOSHOD_PYTHON ?? join(REPO_ROOT, ".venv", "bin", "python");

export interface Daemon {
  address: string;
  proc: ChildProcess;
  /** Kills the daemon (-9) and waits for it to exit; its store is kept. */
  kill(): Promise<void>;
  /** Kills it and removes its store when startDaemon made one. */
  stop(): Promise<void>;
}

/** A daemon on 127.0.0.1 (a free port) with a SQLite store in a new temporary folder. */
export async function startDaemon(...extra: string[]): Promise<Daemon> {
  const dir = mkdtempSync(join(tmpdir(), "luoshod-ts-"));
  const daemon = await startDaemonOn("127.0.0.1:0", dir, ...extra);
  return { ...daemon, async stop() { await daemon.kill(); rmSync(dir, { recursive: true, force: true }); } };
}

/** A daemon listening on `listen` with its SQLite store in `dir` (kept by stop()): start
 * another on the same two and it finds what the one before left. */
export async function startDaemonOn(listen: string, dir: string, ...extra: string[]): Promise<Daemon> {
  return startDaemonWith({}, listen, dir, ...extra);
}

/** startDaemonOn with more variables in the daemon's environment (a provider's key). */
export async function startDaemonWith(env: Record<string, string>, listen: string, dir: string, ...extra: string[]): Promise<Daemon> {
  const proc = spawn(PYTHON, ["-m", "luoshod", "serve", "--listen", listen, "--store", `sqlite:///${dir}/db.sqlite`, ...extra], {
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, ...env },
  });
  let stderr = "";
  proc.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const address = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`daemon did not start in 30 s: ${stderr}`)), 30_000);
    const lines = createInterface({ input: proc.stdout! });
    lines.once("line", (line) => {
      clearTimeout(timer);
      if (line.startsWith("luoshod listening on ")) resolve(line.slice("luoshod listening on ".length).split(",")[0]!.trim());
      else reject(new Error(`daemon did not start: ${line} ${stderr}`));
    });
    proc.once("exit", (code) => reject(new Error(`daemon exited (${code}): ${stderr}`)));
  });
  async function kill() {
    if (proc.exitCode === null && proc.signalCode === null) {
      const exited = new Promise((resolve) => proc.once("exit", resolve));
      proc.kill("SIGKILL");
      await exited;
    }
  }
  return { address, proc, kill, stop: kill };
}

/** A scripted agent: each entry is one model turn ({tool_calls: [...]} or {text}). */
export function scripted(name: string, script: unknown[], tools: { name: string; needsApproval?: boolean }[] = [{ name: "add" }]) {
  return { model: `scripted:${name}`, instructions: "You add numbers.", tools, modelSettings: { script } };
}

export const call = (name: string, args: unknown) => ({ tool_calls: [{ name, arguments: args }] });

/** What tests/support/fake_model_server.py prints once it serves. */
export interface FakeModel {
  base_url: string;
  stats_url: string;
  /** A luoshod.toml whose provider "llm" is this server. */
  config: string;
  key_env: string;
  key: string;
  /** "llm:test-model" */
  model: string;
  tool: string;
  proc: ChildProcess;
  /** GET stats_url: every model request's assistant-turn count and HTTP status. */
  stats(): Promise<{ requests: number; turns: number[]; statuses: number[] }>;
  /** Closes its stdin (it stops by itself) and waits for it to exit. */
  stop(): Promise<void>;
}

/** The repository's fake model server (an HTTP model API as a process of its own), run with
 * the daemon's interpreter: `--wire anthropic --scenario refuse-continuation` and so on. */
export async function startFakeModel(...args: string[]): Promise<FakeModel> {
  const proc = spawn(PYTHON, [join(REPO_ROOT, "tests", "support", "fake_model_server.py"), ...args], {
    stdio: ["pipe", "pipe", "pipe"],
  });
  let stderr = "";
  proc.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const info = await new Promise<Omit<FakeModel, "proc" | "stats" | "stop">>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the fake model server did not start in 30 s: ${stderr}`)), 30_000);
    const lines = createInterface({ input: proc.stdout! });
    lines.once("line", (line) => {
      clearTimeout(timer);
      try {
        resolve(JSON.parse(line));
      } catch {
        reject(new Error(`the fake model server did not start: ${line} ${stderr}`));
      }
    });
    proc.once("exit", (code) => reject(new Error(`the fake model server exited (${code}): ${stderr}`)));
  });
  return {
    ...info,
    proc,
    async stats() {
      const response = await fetch(info.stats_url);
      return (await response.json()) as { requests: number; turns: number[]; statuses: number[] };
    },
    async stop() {
      if (proc.exitCode !== null || proc.signalCode !== null) return;
      const exited = new Promise((resolve) => proc.once("exit", resolve));
      proc.stdin!.end();
      const timer = setTimeout(() => proc.kill("SIGKILL"), 5_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** The trailers of a daemon's error: a google.rpc.Status with one ErrorInfo (luosho.dev). */
export function errorTrailers(code: GrpcStatus, message: string, reason: string, metadata: Record<string, string>): Metadata {
  const info = new BinaryWriter().tag(1, WireType.LengthDelimited).string(reason).tag(2, WireType.LengthDelimited).string("luosho.dev");
  for (const [key, value] of Object.entries(metadata)) {
    info.tag(3, WireType.LengthDelimited).fork().tag(1, WireType.LengthDelimited).string(key).tag(2, WireType.LengthDelimited).string(value).join();
  }
  const any = new BinaryWriter()
    .tag(1, WireType.LengthDelimited).string("type.googleapis.com/google.rpc.ErrorInfo")
    .tag(2, WireType.LengthDelimited).bytes(info.finish())
    .finish();
  const status = new BinaryWriter()
    .tag(1, WireType.Varint).int32(code)
    .tag(2, WireType.LengthDelimited).string(message)
    .tag(3, WireType.LengthDelimited).bytes(any)
    .finish();
  const trailers = new Metadata();
  trailers.set("grpc-status-details-bin", Buffer.from(status));
  return trailers;
}
