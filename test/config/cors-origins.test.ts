// `--cors-origins` (UGS_CORS_ORIGINS): exact origins as a browser sends them, refused at start otherwise
// with the spelling that would work (docs/deployment.md, docs/api.md "Cross-origin").
import { describe, expect, it } from 'vitest';
import { parseCorsOrigins } from '../../src/config/cors-origins.js';

describe('parseCorsOrigins', () => {
  it('takes comma-separated origins, spaces and empty entries aside, each once', () => {
    expect(parseCorsOrigins('')).toEqual([]);
    expect(parseCorsOrigins(' , ')).toEqual([]);
    expect(
      parseCorsOrigins(
        'https://app.example.com, http://localhost:3000,,http://127.0.0.1:8080,https://app.example.com,http://[::1]:5173',
      ),
    ).toEqual(['https://app.example.com', 'http://localhost:3000', 'http://127.0.0.1:8080', 'http://[::1]:5173']);
  });

  it.each([
    ['https://*.example.com', /no wildcards/],
    ['*', /no wildcards/],
    ['app.example.com', /is not an origin: scheme:\/\/host\[:port\]/],
    ['ftp://files.example.com', /not an http\(s\) origin/],
    ['https://app.example.com/dashboard', /no path, query or credentials/],
    ['https://app.example.com?x=1', /no path, query or credentials/],
    ['https://user:secret@app.example.com', /no path, query or credentials/],
  ])('refuses %s', (entry, message) => {
    expect(() => parseCorsOrigins(`https://ok.example.com,${entry}`)).toThrow(message);
  });

  it.each([
    ['https://app.example.com/', 'https://app.example.com'],
    ['https://App.Example.com', 'https://app.example.com'],
    ['https://app.example.com:443', 'https://app.example.com'],
    ['http://localhost:80', 'http://localhost'],
  ])('refuses %s, which no browser sends, naming %s', (entry, spelling) => {
    expect(() => parseCorsOrigins(entry)).toThrow(
      `"${entry}" is not written as a browser sends it in Origin: ${spelling}`,
    );
  });
});
