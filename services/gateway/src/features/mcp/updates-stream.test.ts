import { describe, expect, it } from 'vitest';
import { updatedUris } from './updates-stream.js';

describe('mcp updates', () => {
  it('updates — a change at or below a subscription is notified by its own URI, segments percent-encoded', () => {
    expect(updatedUris({ path: '/files/d/a b.txt', from: '', kind: 'file' }, ['/files/d'])).toEqual(['workspace:///files/d/a%20b.txt']);
    expect(updatedUris({ path: '/files/d', from: '', kind: 'directory' }, ['/files/d'])).toEqual(['workspace:///files/d']);
    expect(updatedUris({ path: '/files/dx/a', from: '', kind: 'file' }, ['/files/d'])).toEqual([]);
  });
  it('updates — a move notifies its source and its destination where subscribed; a directory change above a subscription notifies the subscription', () => {
    expect(updatedUris({ path: '/files/out/a', from: '/files/d/a', kind: 'file' }, ['/files/d'])).toEqual(['workspace:///files/d/a']);
    expect(updatedUris({ path: '/files/a', from: '', kind: 'directory' }, ['/files/a/b/c.txt'])).toEqual(['workspace:///files/a/b/c.txt']);
    expect(updatedUris({ path: '/files/a', from: '', kind: 'file' }, ['/files/a/b/c.txt'])).toEqual([]);
  });
});
