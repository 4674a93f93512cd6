/**
 * Stands in for n8n's webhook URL in the trigger's live test: a loopback HTTP server that answers 200 and keeps each
 * delivery's headers and exact body bytes (what the signature covers), so the test can hand them to `webhook()`.
 * Loopback http targets are allowed because the test's Stageline runs with NODE_ENV=test.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { IncomingDelivery } from './trigger-context';

/** A running receiver. */
export interface DeliveryReceiver {
	url: string;
	deliveries: IncomingDelivery[];
	/** The first delivery whose `x-webhook-event` is `event` and whose body contains `text`, polling up to 20 s. */
	waitFor(event: string, text: string): Promise<IncomingDelivery>;
	close(): Promise<void>;
}

/** Starts a receiver on an ephemeral loopback port. */
export async function startDeliveryReceiver(): Promise<DeliveryReceiver> {
	const deliveries: IncomingDelivery[] = [];
	const server = http.createServer((req, res) => {
		const chunks: Buffer[] = [];
		req.on('data', (c: Buffer) => chunks.push(c));
		req.on('end', () => {
			const headers: Record<string, string> = {};
			for (const [name, value] of Object.entries(req.headers)) if (typeof value === 'string') headers[name] = value;
			deliveries.push({ headers, rawBody: Buffer.concat(chunks) });
			res.writeHead(200).end();
		});
	});
	await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
	const { port } = server.address() as AddressInfo;
	return {
		url: `http://127.0.0.1:${port}/webhook/live-test/webhook`,
		deliveries,
		async waitFor(event, text) {
			const deadline = Date.now() + 20_000;
			for (;;) {
				const hit = deliveries.find((d) => d.headers['x-webhook-event'] === event && d.rawBody.toString('utf8').includes(text));
				if (hit) return hit;
				if (Date.now() > deadline) throw new Error(`No ${event} delivery containing ${text} within 20 s (got ${deliveries.length}).`);
				await new Promise((r) => setTimeout(r, 100));
			}
		},
		close: () =>
			new Promise<void>((resolve) => {
				server.closeAllConnections();
				server.close(() => resolve());
			}),
	};
}
