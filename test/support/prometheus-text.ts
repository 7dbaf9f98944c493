// Reading the Prometheus text format that GET /metrics answers.

/** The value of one sample line of the Prometheus text, e.g. `name{a="b"} 3`, or `name 3` for no labels ({}). */
export function sample(text: string, name: string, labels: Record<string, string>): number | undefined {
  const wanted = Object.entries(labels).map(([key, value]) => `${key}="${value}"`);
  const line = text
    .split('\n')
    .find((candidate) =>
      wanted.length === 0
        ? candidate.startsWith(`${name} `)
        : candidate.startsWith(`${name}{`) && wanted.every((label) => candidate.includes(label)),
    );
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
}
