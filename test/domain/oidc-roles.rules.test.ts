// The role mapping of console sign-in through an identity provider (docs/deployment.md, "Role mapping").
import { describe, expect, it } from 'vitest';
import {
  accessOf,
  claimValues,
  parseRoleMapping,
  startingTenant,
} from '../../src/domain/console-sessions/oidc-roles.rules.js';

const WORKSPACES = [
  { id: 1, name: 'default' },
  { id: 2, name: 'other' },
];

describe('role mapping', () => {
  const mapping = parseRoleMapping(
    JSON.stringify({
      '/ugs/admins': [{ workspace: '*', environment: '*', access: 'admin' }],
      support: [
        { workspace: 'default', environment: 'Customer', access: 'write' },
        { workspace: '2', environment: 'Testing', access: 'read' },
      ],
      readers: [{ workspace: 'default', environment: 'Customer', access: 'read' }],
    }),
  );

  it('gives the union of the grants of every value, the highest access per workspace and environment', () => {
    expect(accessOf(['readers', 'support', 'unmapped'], mapping, WORKSPACES)).toEqual([
      { workspaceId: 1, workspaceName: 'default', environment: 'Customer', access: 'write' },
      { workspaceId: 2, workspaceName: 'other', environment: 'Testing', access: 'read' },
    ]);
    expect(accessOf(['/ugs/admins'], mapping, WORKSPACES)).toHaveLength(4);
    expect(accessOf([], mapping, WORKSPACES)).toEqual([]);
  });

  it('starts a session where the person has their highest access', () => {
    const access = accessOf(['readers', 'support'], mapping, [...WORKSPACES].reverse());
    expect(startingTenant(access)).toMatchObject({ workspaceId: 1, environment: 'Customer', access: 'write' });
    expect(startingTenant([])).toBeUndefined();
  });

  it('reads a list, a single string, or nothing from the claim', () => {
    expect(claimValues({ groups: ['/a', 7, '/b'] }, 'groups')).toEqual(['/a', '/b']);
    expect(claimValues({ hd: 'acme.com' }, 'hd')).toEqual(['acme.com']);
    expect(claimValues({}, 'groups')).toEqual([]);
  });

  it.each([
    ['[]', 'JSON object'],
    ['{"g": {}}', 'must be a list of grants'],
    ['{"g": [{"workspace": "default", "environment": "Prod", "access": "read"}]}', '"environment"'],
    ['{"g": [{"workspace": "default", "environment": "*", "access": "owner"}]}', '"access"'],
    ['{"g": [{"workspace": "", "environment": "*", "access": "read"}]}', '"workspace"'],
    ['{"g": [{"workspace": "*", "environment": "*", "access": "read", "extra": 1}]}', 'unknown field "extra"'],
  ])('refuses %s at start', (text, reason) => {
    expect(() => parseRoleMapping(text)).toThrow(reason);
  });
});
