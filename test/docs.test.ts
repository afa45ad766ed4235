import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ENVIRONMENT_VARIABLES } from '../src/config.js';

const read = (path: string) => readFileSync(new URL(`../${path}`, import.meta.url), 'utf8');

describe('the operator’s documentation', () => {
  it.each(ENVIRONMENT_VARIABLES)('documents %s in the README’s table and in .env.example', (variable) => {
    expect(read('README.md')).toContain(`| \`${variable}\` |`);
    expect(read('.env.example')).toMatch(new RegExp(`^#? ?${variable}=`, 'm'));
  });

  it('starts the README with the two commands a newcomer needs, and the scripts exist', () => {
    const top = read('README.md').split('\n').slice(0, 6).join('\n');
    expect(top).toContain('npm ci && npm run sandbox');
    expect(top).toContain('npm test');
    const { scripts } = JSON.parse(read('package.json')) as { scripts: Record<string, string> };
    expect(Object.keys(scripts)).toEqual(
      expect.arrayContaining(['sandbox', 'test', 'start', 'build', 'dev']),
    );
  });
});
