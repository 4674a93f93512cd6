// PLACEHOLDER until the dispatcher lands: same public surface, delivers nothing.
import type { AppContext } from "../context";
export class WebhookDispatcher {
  constructor(private readonly ctx: AppContext) {}
  start(): void {}
  wake(): void {}
  async stop(): Promise<void> {}
}
