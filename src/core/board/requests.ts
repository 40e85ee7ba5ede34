import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { NotFoundError } from '../errors.js';
import { type DocStore, FileDocStore } from './docs.js';

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
  readonly docs: DocStore;

  constructor(
    rootDir: string,
    private readonly now: () => Date = () => new Date(),
    docs?: DocStore,
  ) {
    this.docs = docs ?? new FileDocStore(rootDir);
  }

  async create(input: { kind: ProtocolRequest['kind']; from: string; to: string; task?: number | null; plan?: string }): Promise<ProtocolRequest> {
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
    await this.docs.change(this.key(request.id), () => ({ write: request, result: request }));
    return request;
  }

  get(id: string): ProtocolRequest {
    const request = this.docs.read(this.key(id), RequestSchema);
    if (!request) throw new NotFoundError(`no request '${id}' is waiting`);
    return request;
  }

  list(filter: Partial<Pick<ProtocolRequest, 'kind' | 'status' | 'to' | 'from'>> = {}): ProtocolRequest[] {
    return this.docs
      .keys('requests/')
      .flatMap((key) => {
        try {
          const request = this.docs.read(key, RequestSchema);
          return request ? [request] : [];
        } catch {
          return [];
        }
      })
      .filter((r) => Object.entries(filter).every(([key, value]) => r[key as keyof ProtocolRequest] === value))
      .sort((a, b) => a.createdAt.localeCompare(b.createdAt));
  }

  /** Decides a pending request once; a second decision is refused and returns the first. */
  async resolve(id: string, approve: boolean, feedback?: string): Promise<{ ok: boolean; request: ProtocolRequest }> {
    const current = this.get(id);
    return this.docs.change<{ ok: boolean; request: ProtocolRequest }>(this.key(id), (raw) => {
      const now = RequestSchema.safeParse(raw);
      const request = now.success ? now.data : current;
      if (request.status !== 'pending') return { result: { ok: false, request } };
      const next: ProtocolRequest = {
        ...request,
        status: approve ? 'approved' : 'rejected',
        ...(feedback !== undefined ? { feedback } : {}),
        updatedAt: this.now().toISOString(),
      };
      return { write: next, result: { ok: true, request: next } };
    });
  }

  private key(id: string): string {
    if (!/^[A-Za-z0-9_-]+$/.test(id)) throw new NotFoundError(`invalid request id '${id}'`);
    return `requests/${id}`;
  }
}
