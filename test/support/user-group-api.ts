import { clientFor, type ApiResponse, type Client, type Target } from './http-client.js';

export const USER_PATH = '/api/user';
export const VERIFY_PATH = '/api/user/verify';

/** GET /api/user with a JSON body: get the group `body.user_group_id`, or create it. */
export function getOrCreate(target: Target, token: string, body: unknown): Promise<ApiResponse> {
  return clientFor(target)({ method: 'GET', path: USER_PATH, token, body });
}

/** POST /api/user/verify: the group holding `userGroupToken`. */
export function verify(target: Target, token: string, userGroupToken: string): Promise<ApiResponse> {
  return clientFor(target)({ method: 'POST', path: VERIFY_PATH, token, body: { token: userGroupToken } });
}

/** Every /api/user operation over `client` with one API token. */
export function userGroupApi(client: Client, token: string) {
  return {
    getOrCreate: (body: unknown) => getOrCreate(client, token, body),
    update: (body: unknown) => client({ method: 'PUT', path: USER_PATH, token, body }),
    rotate: (currentToken: string) =>
      client({ method: 'POST', path: USER_PATH, token, body: { current_token: currentToken } }),
    remove: (body: unknown) => client({ method: 'DELETE', path: USER_PATH, token, body }),
    verify: (groupToken: string) => verify(client, token, groupToken),
  };
}

export type UserGroupApi = ReturnType<typeof userGroupApi>;
