import { LRUCache } from 'lru-cache';
import { failure } from '../errors.js';
import type { JsonObject, JsonValue } from '../common.records.js';
import { LIST_OPERATORS, type AccessRule } from './access-rule.records.js';
import { isObject, valueDefect, type RuleLevels } from './access-rules.rules.js';

/*
 * The rules an embed token carries (docs/api.md#access-rules): a group's effective rules, root first, without their
 * team ids, each property reference replaced by the value of the group's computed property of that
 * key. Minting is hot, so the work is kept to what changes between mints (docs/performance-history.md): a level's
 * rules are turned into token text once per rules array (the store shares one frozen array per
 * distinct stored text), and the whole answer once per levels and referenced values.
 */

type Scalar = string | number | boolean;

/** A property a level's rules refer to, once per key and kind of operator; `at` is its first rule. */
interface Reference {
  rule: AccessRule;
  key: string;
  at: number;
  /** The kind and key: a key's value is written alike for every list operator, and for every other. */
  memo: string;
}

/** Part of a level's rules as a token carries them: a run of rules without references as JSON text, or a reference. */
type TokenPart = string | { head: string; memo: string };

/** A level's rules as token text: its parts, the references they need, and a number naming the array. */
interface LevelText {
  id: number;
  parts: TokenPart[];
  references: Reference[];
}

/** The JSON text of resolved rules. One object per levels and values: a minter may key what it derives on it. */
export interface ResolvedRulesText {
  readonly json: string;
}

const NO_RESOLVED_RULES: ResolvedRulesText = Object.freeze({ json: '[]' });

const levelTexts = new WeakMap<AccessRule[], LevelText>();
let nextLevelId = 1;

/**
 * Answers already built, keyed by the levels' numbers and the referenced values' JSON. A changed rule
 * is a new array (a new number) and a changed property a new value, so an entry is never stale; it
 * is only dropped, least recently used first, past 4 Mi characters (~800 answers of 64 short rules).
 */
const answers = new LRUCache<string, ResolvedRulesText>({
  maxSize: 4 * 1024 * 1024,
  sizeCalculation: (answer, key) => answer.json.length + key.length,
});

function levelTextOf(rules: AccessRule[]): LevelText {
  let text = levelTexts.get(rules);
  if (text !== undefined) return text;
  const parts: TokenPart[] = [];
  const references: Reference[] = [];
  let run: string[] = [];
  rules.forEach((rule, at) => {
    const reference = rule.value;
    if (!isObject(reference)) {
      // As the rule is stored (the order of its keys included), as JSON.stringify of the claims wrote it before.
      run.push(JSON.stringify(rule));
      return;
    }
    if (run.length > 0) parts.push(run.join(','));
    run = [];
    const { schema_id, table, column, op } = rule;
    const memo = `${LIST_OPERATORS.includes(op) ? 'list' : 'scalar'}:${reference.property}`;
    parts.push({ head: `${JSON.stringify({ schema_id, table, column, op }).slice(0, -1)},"value":`, memo });
    if (!references.some((known) => known.memo === memo)) references.push({ rule, key: reference.property, at, memo });
  });
  if (run.length > 0) parts.push(run.join(','));
  text = { id: nextLevelId++, parts, references };
  levelTexts.set(rules, text);
  return text;
}

/**
 * The rules an embed token carries, as JSON text: the same text, byte for byte, as `JSON.stringify`
 * of the resolved rules. The computed properties only, never a per-view value: whoever mints can
 * neither satisfy nor change a rule. A reference to a key the group does not have, or to a value that
 * does not fit the operator, is `unresolved_property` naming the first such rule (its index among the
 * effective rules), checked on every mint.
 */
export function resolvedAccessRules(group: RuleLevels, computed: JsonObject): ResolvedRulesText {
  // Most groups have no rules and no ancestors: nothing to build on the hot path.
  if (group.ancestors.length === 0 && group.accessRules.length === 0) return NO_RESOLVED_RULES;
  const levels: LevelText[] = [];
  const values = new Map<string, string>();
  // The levels' numbers, then the values in the order the levels need them: a levels' order of
  // references is fixed, so the values alone say which is which.
  let levelIds = '';
  let valueTexts = '';
  let offset = 0;
  const add = (rules: AccessRule[]) => {
    if (rules.length === 0) return;
    const level = levelTextOf(rules);
    levels.push(level);
    levelIds += `${level.id},`;
    for (const { rule, key, at, memo } of level.references) {
      if (values.has(memo)) continue;
      const value = JSON.stringify(resolvedValue(rule, key, computed, offset + at));
      values.set(memo, value);
      // JSON text holds no raw NUL: the values stay apart in the key.
      valueTexts += `\u0000${value}`;
    }
    offset += rules.length;
  };
  for (let level = group.ancestors.length - 1; level >= 0; level -= 1) add(group.ancestors[level]!.accessRules);
  add(group.accessRules);
  if (levels.length === 0) return NO_RESOLVED_RULES;

  const cacheKey = `${levelIds}${valueTexts}`;
  let answer = answers.get(cacheKey);
  if (answer === undefined) {
    const texts = levels.flatMap(({ parts }) =>
      parts.map((part) => (typeof part === 'string' ? part : `${part.head}${values.get(part.memo)!}}`)),
    );
    answer = Object.freeze({ json: `[${texts.join(',')}]` });
    answers.set(cacheKey, answer);
  }
  return answer;
}

function resolvedValue(rule: AccessRule, key: string, computed: JsonObject, index: number): Scalar | Scalar[] {
  const value: JsonValue | undefined = Object.hasOwn(computed, key) ? computed[key] : undefined;
  const defect = value === undefined ? undefined : valueDefect(value, rule.op);
  if (value === undefined || defect) throw failure.unresolvedProperty(index, rule, key, defect);
  return value as Scalar | Scalar[];
}
