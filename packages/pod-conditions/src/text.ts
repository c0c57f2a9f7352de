/**
 * Runtime and kubelet messages fitted into one sentence: one line, no final period, at most `max`
 * characters. A long message keeps its start and its end: a wrapped Go error ends with its root
 * cause ("…: dial tcp 127.0.0.1:9: connect: connection refused").
 */
export function oneLine(text: string | undefined, max: number): string {
  const line = (text ?? '').replace(/\s+/g, ' ').trim().replace(/\.$/, '');
  if (line.length <= max) return line;
  const head = Math.floor(max * 0.45);
  return `${line.slice(0, head)}…${line.slice(line.length - (max - head - 1))}`;
}
