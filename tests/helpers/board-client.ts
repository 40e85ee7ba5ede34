/** An MCP client on the board server of `controls`, over an in-memory pair: the tools as a client calls them. */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { LeadControls } from '../../src/core/lead/lead-api.js';
import { StageRegistry } from '../../src/core/stages/stage-registry.js';
import { boardServer } from '../../src/mcp-server/board-server.js';

/** The connected client, and what closes it and its server (push it where the test cleans up). */
export async function boardClient(controls: LeadControls, dir: string): Promise<{ client: Client; close(): Promise<void> }> {
  const { server, close } = boardServer({ controls, stages: StageRegistry.from(undefined), dir });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: 'test', version: '1.0.0' });
  await client.connect(clientSide);
  return {
    client,
    close: async () => {
      close();
      await client.close();
      await server.close();
    },
  };
}
