import { describe, expect, it } from 'vitest';
import { AppError } from '@workspace/platform';
import { assertProjectName, projectKey } from './project-name.js';

function rejects(name: string): boolean {
  try {
    assertProjectName(name);
    return false;
  } catch (err) {
    return err instanceof AppError && err.code === 'INVALID_ARGUMENT' && err.details?.field === 'name';
  }
}

describe('project names', () => {
  it('project names — the naming rules', () => {
    for (const bad of ['', ' a', 'a ', '\ta', 'a/b', 'a\\b', 'a\nb', 'a\u007fb', '.', '..', 'x'.repeat(101), '😀'.repeat(64)]) {
      expect(rejects(bad), JSON.stringify(bad)).toBe(true);
    }
    for (const good of ['a', 'Home', '...', 'a.b', 'x'.repeat(100), 'Straße', '研究 計画', 'a b']) {
      expect(rejects(good), JSON.stringify(good)).toBe(false);
    }
  });

  it('project names — keys fold case and compatibility forms', () => {
    expect(projectKey('HOME')).toBe(projectKey('home'));
    expect(projectKey('ｈｏｍｅ')).toBe(projectKey('Home'));
    expect(projectKey('Ⅻ')).toBe(projectKey('xii'));
    expect(projectKey('a')).not.toBe(projectKey('b'));
  });
});
