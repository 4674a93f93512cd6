#!/usr/bin/env node
/**
 * Runs a command (e.g. `n8n-node build`) with its output captured, and prints that output only when the command
 * fails, without the CLI's spinner control codes. The exit code is the command's.
 * Usage: node scripts/quiet.mjs <command> [args...]
 */
import { spawnSync } from 'node:child_process';

const [command, ...args] = process.argv.slice(2);
const started = Date.now();
const result = spawnSync(command, args, { encoding: 'utf8', shell: false, maxBuffer: 64 * 1024 * 1024 });
const seconds = ((Date.now() - started) / 1000).toFixed(1);
if (result.error) {
	console.error(`${command}: ${result.error.message}`);
	process.exit(1);
}
const status = result.status ?? 1;
if (status === 0) {
	console.log(`${[command, ...args].join(' ')}: ok (${seconds} s)`);
} else {
	// Spinner frames end with ESC[999D ESC[J; drop every ANSI control sequence and the frames they redraw.
	const clean = `${result.stdout}${result.stderr}`
		.replace(/\u001b\[[0-9;?]*[A-Za-z]/g, '\n')
		.split('\n')
		.filter((line) => line.trim() !== '' && !/^[◐◓◑◒]/.test(line.trim()))
		.join('\n');
	console.error(clean);
	console.error(`${[command, ...args].join(' ')} failed (exit ${status}, ${seconds} s)`);
}
process.exit(status);
