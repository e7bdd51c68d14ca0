#!/usr/bin/env bun
import { runCli } from "./cli/run.ts";
import { processIo } from "./cli/io.ts";

process.exitCode = await runCli(process.argv.slice(2), { env: process.env, io: processIo, now: () => new Date() });
