// The Dockerfile as its instructions, for tests that check what the image does without a Docker
// engine (test/release): comments dropped, continuation lines joined, each instruction with its stage.
import { readFileSync } from 'node:fs';

export interface Instruction {
  /** Upper case: FROM, RUN, ENV… */
  keyword: string;
  /** The rest of the line, continuations joined with single spaces. */
  args: string;
  /** The index of the stage (FROM) it belongs to; -1 before the first FROM (a global ARG). */
  stage: number;
}

export const DOCKERFILE = new URL('../../Dockerfile', import.meta.url);

export function dockerfileInstructions(text = readFileSync(DOCKERFILE, 'utf8')): Instruction[] {
  const logical: string[] = [];
  let pending = '';
  for (const line of text.split('\n')) {
    if (/^\s*#/.test(line)) continue;
    const continued = /\\\s*$/.test(line);
    pending += `${line.replace(/\\\s*$/, '').trim()} `;
    if (continued) continue;
    if (pending.trim() !== '') logical.push(pending.trim().replace(/\s+/g, ' '));
    pending = '';
  }
  let stage = -1;
  return logical.map((line) => {
    const [, keyword = '', args = ''] = /^(\S+)\s*(.*)$/.exec(line) ?? [];
    if (keyword.toUpperCase() === 'FROM') stage++;
    return { keyword: keyword.toUpperCase(), args, stage };
  });
}

/** The stages: each FROM's image and its `AS` name, if any. */
export function dockerStages(instructions: Instruction[]): { image: string; name?: string }[] {
  return instructions
    .filter((instruction) => instruction.keyword === 'FROM')
    .map(({ args }) => {
      const [image = '', as, name] = args.split(' ');
      return as?.toUpperCase() === 'AS' && name ? { image, name } : { image };
    });
}

/** An exec-form argument list (`["ugs", "serve"]`), as Docker reads it: JSON. */
export const execForm = (args: string): string[] => JSON.parse(args) as string[];

/** ENV's pairs (`A=1 B=2`, values without spaces or quotes, as this Dockerfile writes them), in order. */
export function envPairs(args: string): [string, string][] {
  return args.split(' ').map((pair) => {
    const at = pair.indexOf('=');
    return [pair.slice(0, at), pair.slice(at + 1)];
  });
}
