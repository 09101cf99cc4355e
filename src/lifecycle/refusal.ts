/**
 * What the caller gave is refused: its input, its configuration or a setup file. Such an error crosses every
 * boundary as itself: the CLI and each worker end with exit 2 (not worth a restart: `up` stops everything on
 * it), an operator command appends nothing. The errors of that kind extend it, so that a boundary maps one
 * class rather than each folder's.
 */
export class InputRefusedError extends Error {
  override name = 'InputRefusedError';
}
