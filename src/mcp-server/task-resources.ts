import { type McpServer, ResourceTemplate } from '@modelcontextprotocol/sdk/server/mcp.js';
import { ErrorCode, SubscribeRequestSchema, UnsubscribeRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import type { LeadControls } from '../core/lead/lead-api.js';

const TASK_URI = /^autoteam:\/\/task\/(\d+)$/;

/** `autoteam://task/<id>` → the id, or null. */
export function taskOfUri(uri: string): number | null {
  const match = TASK_URI.exec(uri);
  return match ? Number(match[1]) : null;
}

/**
 * Each task of the board as a resource, `autoteam://task/<id>` (its JSON), and change notifications:
 * a client that subscribes to a task hears `notifications/resources/updated` whenever the task as
 * the board holds it changes (claimed, worked, completed, handed on); every client hears
 * `notifications/resources/list_changed` when a task is posted. Changes are found by comparing the
 * task with the version last told, on each change the board reports — not by polling.
 */
export class TaskResources {
  /** Subscribed URI → the task's JSON when it was last told ('' while there is no such task). */
  private readonly told = new Map<string, string>();
  private unsubscribe: (() => void) | null = null;

  constructor(
    private readonly server: McpServer,
    private readonly controls: LeadControls,
  ) {}

  /** Registers the resources and the subscribe handlers (before the server connects), and follows the board. */
  register(): void {
    const { controls } = this;
    this.server.registerResource(
      'task',
      new ResourceTemplate('autoteam://task/{id}', {
        list: async () => ({
          resources: controls.snapshot().tasks.map((task) => ({ uri: `autoteam://task/${task.id}`, name: `task #${task.id}`, title: task.subject, mimeType: 'application/json' })),
        }),
      }),
      { title: 'A task of the board', description: 'The task as the board holds it: status, owner, stage, handoff, artifacts, history.', mimeType: 'application/json' },
      async (uri) => ({ contents: [{ uri: uri.href, mimeType: 'application/json', text: this.read(uri.href) }] }),
    );
    this.server.server.registerCapabilities({ resources: { subscribe: true, listChanged: true } });
    this.server.server.setRequestHandler(SubscribeRequestSchema, async (request) => {
      const id = taskOfUri(request.params.uri);
      if (id === null) throw invalidParams(`'${request.params.uri}' is not a task: autoteam://task/<id>`);
      this.told.set(request.params.uri, this.version(id));
      return {};
    });
    this.server.server.setRequestHandler(UnsubscribeRequestSchema, async (request) => {
      this.told.delete(request.params.uri);
      return {};
    });
    this.unsubscribe = controls.subscribe((event) => {
      if (event.type === 'board') this.changed();
      else if (event.type === 'team' && event.event.type === 'task_posted') void this.server.server.sendResourceListChanged().catch(() => undefined);
    });
  }

  close(): void {
    this.unsubscribe?.();
    this.unsubscribe = null;
  }

  private read(uri: string): string {
    const id = taskOfUri(uri);
    const task = id === null ? null : this.controls.task(id);
    if (!task) throw invalidParams(`no task ${uri} on this board`);
    return JSON.stringify(task, null, 2);
  }

  private version(id: number): string {
    const task = this.controls.task(id);
    return task ? JSON.stringify(task) : '';
  }

  /** Tells each subscribed task that changed since it was last told. */
  private changed(): void {
    for (const [uri, before] of this.told) {
      const now = this.version(taskOfUri(uri)!);
      if (now === before) continue;
      this.told.set(uri, now);
      void this.server.server.sendResourceUpdated({ uri }).catch(() => undefined);
    }
  }
}

/**
 * An invalid-params error whose message is sent as written. An McpError's message already starts
 * `MCP error -32602:`, and the client's McpError adds it again: `MCP error -32602: MCP error -32602: …`.
 */
function invalidParams(message: string): Error {
  return Object.assign(new Error(message), { code: ErrorCode.InvalidParams });
}
