import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const STORE_MODULE = path.join(ROOT, 'src/domain/store.port.ts');
const CONTRACT_DIR = path.join(ROOT, 'test/store/contract');

/**
 * Every method of the `Store` interface as the compiler sees it: its own, those of every interface it
 * extends (inherited members, wherever those interfaces are declared), and those of any interface it
 * holds as a property.
 */
function storeMethods(): string[] {
  const program = ts.createProgram([STORE_MODULE], {
    noEmit: true,
    strict: true,
    skipLibCheck: true,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    types: [],
  });
  const checker = program.getTypeChecker();
  const declaration = program
    .getSourceFile(STORE_MODULE)
    ?.statements.find(
      (statement): statement is ts.InterfaceDeclaration =>
        ts.isInterfaceDeclaration(statement) && statement.name.text === 'Store',
    );
  if (!declaration) throw new Error(`no interface Store in ${STORE_MODULE}`);
  const methods = new Set<string>();
  const seen = new Set<ts.Type>();
  const collect = (type: ts.Type): void => {
    if (seen.has(type)) return;
    seen.add(type);
    for (const property of checker.getPropertiesOfType(type)) {
      const propertyType = checker.getTypeOfSymbolAtLocation(property, declaration);
      if (propertyType.getCallSignatures().length > 0) methods.add(property.name);
      else if (propertyType.isClassOrInterface()) collect(propertyType);
    }
  };
  collect(checker.getTypeAtLocation(declaration.name));
  return [...methods].sort();
}

/** The text of every file under test/store/contract, helpers included. */
function contractSources(): string[] {
  return fs
    .readdirSync(CONTRACT_DIR, { recursive: true, encoding: 'utf8' })
    .filter((name) => name.endsWith('.ts'))
    .map((name) => fs.readFileSync(path.join(CONTRACT_DIR, name), 'utf8'));
}

describe('Store contract coverage', () => {
  it('names every method of the Store interface in a call of a contract test', () => {
    const methods = storeMethods();
    // The compiler found every interface: a method of each, and all 65 methods the Store had when this was written.
    expect(methods).toEqual(
      expect.arrayContaining([
        'ensureWorkspace',
        'insertApiToken',
        'insertSchema',
        'insertDataSource',
        'lookUpUserGroups',
        'listAuditEvents',
        'replaceCiphertexts',
        'claimIdempotencyKey',
        'rotateSigningKey',
        'claimWebhookDeliveries',
        'insertConsoleSession',
        'migrate',
        'close',
      ]),
    );
    expect(methods.length).toBeGreaterThanOrEqual(65);
    const sources = contractSources();
    expect(sources.length).toBeGreaterThanOrEqual(10);
    const unnamed = methods.filter((method) => !sources.some((source) => source.includes(`.${method}(`)));
    expect(unnamed).toEqual([]);
  });
});
