/**
 * The names of the lead's tools (`leadTools`), for what checks a tool's name with no lead at hand: a
 * hook's matcher in autoteam.config.json. A test keeps the two the same.
 */
export const LEAD_TOOL_NAMES = ['create_task', 'list_tasks', 'get_task', 'spawn_teammate', 'list_teammates', 'send_message', 'broadcast', 'read_inbox', 'shutdown_request', 'plan_approval'] as const;
