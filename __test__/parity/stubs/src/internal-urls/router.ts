// Parity stub (SPEC 11.7) of the agent's src/internal-urls/router.ts, which does not load here: it
// imports `@oh-my-pi/pi-tui/tools/url-scheme-host`, a sub-path that pi-tui 18.2.9 (the newest on
// the registry ≤ 18.3.4) does not have. The MCP modules use the router only to turn string
// arguments that are file-backed internal URLs (`local://…`) into paths; this router knows no
// scheme, so every argument passes through unchanged, in both trees alike.
export type UrlTarget = { url: string }

export class InternalUrlRouter {
  static #instance: InternalUrlRouter | undefined

  static instance(): InternalUrlRouter {
    InternalUrlRouter.#instance ??= new InternalUrlRouter()
    return InternalUrlRouter.#instance
  }

  static resetForTests(): void {
    InternalUrlRouter.#instance = undefined
  }

  register(_handler: unknown): void {}

  normalize(value: string): string {
    return value
  }

  canHandle(_url: string): boolean {
    return false
  }

  spec(_scheme: string): undefined {
    return undefined
  }

  async locate(_url: string, _options?: unknown): Promise<string | undefined> {
    return undefined
  }
}
