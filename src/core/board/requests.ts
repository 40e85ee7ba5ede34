import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { NotFoundError } from '../errors.js';
import { readJsonFile, writeJsonAtomic } from './atomic-io.js';
import { withLock } from './lock.js';
import { redact, secretValues } from '../trace/redact.js';

export const RequestSchema = z.object({
  id: z.string().min(1),
  kind: z.enum(['shutdown', 'plan']),
  from: z.string().min(1),
  to: z.string().min(1),
  status: z.enum(['pending', 'approved', 'rejected']),
  task: z.number().int().positive().nullable().default(null),
  plan: z.string().optional(),
  feedback: z.string().optional(),
  createdAt: z.string(),
  updatedAt: z.string(),
});

export type ProtocolRequest = z.infer<typeof RequestSchema>;

/**
 * Shutdown and plan-approval requests live in `.team/requests/<id>.json`, so any process can answer
 * them and a restarted lead still sees what is pending.
 */
export class RequestStore {
  readonly dir: string;
  private readonly secrets = secretValues();

  constructor(rootDir: string, private readonly now: () => Date = () => new Date()) {
    this.dir = path.join(path.resolve(rootDir), '.team', 'requests');
    fs.mkdirSync(this.dir, { recursive: true });
  }

  create(input: { kind: ProtocolRequest['kind']; from: string; to: string; task?: number | null; plan?: string }): ProtocolRequest {
    const at = this.now().toISOString();
    const prefix = input.kind === 'plan' ? 'plan' : 'shutdown';
    const request = RequestSchema.parse({
      id: `${prefix}-${randomUUID().slice(0, 8)}`,
      kind: input.kind,
      from: input.from,
      to: input.to,
      status: 'pending',
      task: input.task ?? null,
      ...(input.plan !== undefined ? { plan: input.plan } : {}),
      createdAt: at,
      updatedAt: at,
    });
    writeJsonAtomic(this.file(request.id), request, (text) => redact(text, this.secrets));
    return request;
  }

  get(id: string): ProtocolRequest {
    const file = this.file(id);
    if (!fs.existsSync(file)) throw new NotFoundError(`no request '${id}' in ${this.dir}`);
    return readJsonFile(file, RequestSchema);
  }

  list(filter: Partial<Pick<ProtocolRequest, 'kind' | 'status' | 'to' | 'from'>> = {}): ProtocolRequest[] {
    return fs
      .readdirSync(this.dir)
      .filter((name) => name.endsWith('.json'))
      .flatMap((name) => {
        try {
          return [readJsonFile(path.join(this.dir, name), RequestSchema)];
        } catch {
          return [];
        }
      })
      .filter((r) => Object.entries(filter).every(([key, value]) => r[key as keyof ProtocolRequest] === value))
      .sort((a, b) => a.createdAt.localeCompare(b.createdAt));
  }

  /** Decides a pending request once; a second decision is refused and returns the first. */
  async resolve(id: string, approve: boolean, feedback?: string): Promise<{ ok: boolean; request: ProtocolRequest }> {
    return withLock(this.file(id), () => {
      const current = this.get(id);
      if (current.status !== 'pending') return { ok: false, request: current };
      const next: ProtocolRequest = {
        ...current,
        status: approve ? 'approved' : 'rejected',
        ...(feedback !== undefined ? { feedback } : {}),
        updatedAt: this.now().toISOString(),
      };
      writeJsonAtomic(this.file(id), next);
      return { ok: true, request: next };
    });
  }

  private file(id: string): string {
    if (!/^[A-Za-z0-9_-]+$/.test(id)) throw new NotFoundError(`invalid request id '${id}'`);
    return path.join(this.dir, `${id}.json`);
  }
}
