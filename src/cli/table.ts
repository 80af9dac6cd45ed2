// Aligned text tables for the CLI: a header row in capitals, columns padded to their widest cell
// and separated by two spaces, numbers right-aligned. Empty values print as `-`.

export type Cell = string | number | boolean | null | undefined;

function text(cell: Cell): string {
  if (cell === null || cell === undefined || cell === '') return '-';
  return String(cell);
}

export function formatTable(headers: readonly string[], rows: ReadonlyArray<readonly Cell[]>): string {
  const cells = rows.map((row) => headers.map((_, i) => text(row[i])));
  const numeric = headers.map((_, i) => rows.length > 0 && rows.every((row) => typeof row[i] === 'number' || row[i] === null || row[i] === undefined));
  const widths = headers.map((h, i) => Math.max(h.length, ...cells.map((row) => row[i]!.length)));
  const line = (row: readonly string[]): string =>
    row
      .map((cell, i) => (numeric[i] ? cell.padStart(widths[i]!) : i === row.length - 1 ? cell : cell.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd() + '\n';
  return line(headers.map((h) => h.toUpperCase())) + cells.map(line).join('');
}

/** `key  value` lines, keys padded to the widest. */
export function formatPairs(pairs: ReadonlyArray<readonly [string, Cell]>): string {
  const width = Math.max(0, ...pairs.map(([k]) => k.length));
  return pairs.map(([k, v]) => `${k.padEnd(width)}  ${text(v)}\n`).join('');
}

/** Bytes in the largest binary unit that keeps the number at least 1 (1536 -> "1.5 KiB"). */
export function formatBytes(bytes: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return unit === 0 ? `${bytes} B` : `${value.toFixed(1)} ${units[unit]}`;
}
