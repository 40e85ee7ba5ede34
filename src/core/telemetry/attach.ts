import type { Board } from '../board/board.js';
import { startTelemetry } from './telemetry.js';

/**
 * Exports the spans of this thread or process (`OTEL_EXPORTER_OTLP_ENDPOINT` set): its board's sink
 * is tapped; the returned stop flushes the sink and the exporter. Without an endpoint nothing is
 * loaded and stop does nothing. A collector that cannot be reached is told once through `onError`;
 * with `probe`, at once when nothing listens at its address.
 */
export async function attachTelemetry(board: Pick<Board, 'sink' | 'log'>, onError: (error: Error) => void = () => undefined, options: { probe?: boolean } = {}): Promise<() => Promise<void>> {
  const telemetry = await startTelemetry(process.env, { board, onError, ...options });
  if (!telemetry) return async () => undefined;
  const untap = board.sink.tap(telemetry.tap);
  return async () => {
    await board.sink.flush();
    untap();
    await telemetry.shutdown();
  };
}
