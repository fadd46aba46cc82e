import { describe, expect, it } from 'vitest';
import { decodeSignInParams, isOpenPath, linkErrorMessage, safeNext, signedOutRedirect, signInPath, unauthorizedRedirect } from './sign-in-path';

describe('isOpenPath', () => {
  it('keeps the sign-in page and share pages open, nothing else', () => {
    expect(isOpenPath('/signin')).toBe(true);
    expect(isOpenPath('/s/abc123')).toBe(true);
    expect(isOpenPath('/')).toBe(false);
    expect(isOpenPath('/machines')).toBe(false);
    expect(isOpenPath('/tokens')).toBe(false);
    expect(isOpenPath('/signing')).toBe(false);
    expect(isOpenPath('/sx')).toBe(false);
  });
});

describe('safeNext', () => {
  it('keeps a path on this site with its query and hash', () => {
    expect(safeNext('/runs/abc')).toBe('/runs/abc');
    expect(safeNext('/compare?machines=a,b&kernel=x#cell')).toBe('/compare?machines=a,b&kernel=x#cell');
  });

  it('refuses other hosts, schemes, loops and nothing', () => {
    for (const bad of [null, undefined, '', 'runs', 'https://evil.example/', '//evil.example/x', '/\\evil.example', 'javascript:alert(1)', '/\t/evil.example', '/signin', '/signin?next=/x']) {
      expect(safeNext(bad)).toBe('/');
    }
  });
});

describe('signInPath', () => {
  it('carries where the browser was, encoded', () => {
    expect(signInPath('/runs/r1?tab=results')).toBe('/signin?next=%2Fruns%2Fr1%3Ftab%3Dresults');
    expect(decodeSignInParams(new URL(signInPath('/compare?machines=a,b&kernel=x'), 'http://h').search).next).toBe('/compare?machines=a,b&kernel=x');
  });

  it('is the bare page for the home page or an unsafe target', () => {
    expect(signInPath('/')).toBe('/signin');
    expect(signInPath(null)).toBe('/signin');
    expect(signInPath('//evil.example')).toBe('/signin');
  });
});

describe('decodeSignInParams', () => {
  it('reads next and a failed link error', () => {
    expect(decodeSignInParams('?next=%2Fruns&error=login%20code%20already%20used')).toEqual({ next: '/runs', linkError: 'login code already used' });
    expect(decodeSignInParams('')).toEqual({ next: '/', linkError: null });
    expect(decodeSignInParams('?next=https://evil.example&error=%20')).toEqual({ next: '/', linkError: null });
  });

  it('says what a failed link means', () => {
    expect(linkErrorMessage('login code already used.')).toBe(
      'That sign-in link did not work (login code already used): each link works once. Sign in with your token instead.',
    );
  });
});

describe('unauthorizedRedirect', () => {
  it('sends a 401 on an ordinary page to sign in, coming back to the same address', () => {
    expect(unauthorizedRedirect('/runs/abc', '?tab=results', '#r1')).toBe('/signin?next=%2Fruns%2Fabc%3Ftab%3Dresults%23r1');
    expect(unauthorizedRedirect('/tokens')).toBe('/signin?next=%2Ftokens');
    expect(unauthorizedRedirect('/')).toBe('/signin');
  });

  it('never fires on a shared comparison or on the sign-in page itself', () => {
    expect(unauthorizedRedirect('/s/abcdefghijkl')).toBeNull();
    expect(unauthorizedRedirect('/s/abcdefghijkl', '?cell=2')).toBeNull();
    expect(unauthorizedRedirect('/signin', '?next=%2Fruns')).toBeNull();
  });
});

describe('signedOutRedirect', () => {
  const out = { authenticated: false, public_read: false };
  it('sends a signed-out browser to sign in before the page asks for anything', () => {
    expect(signedOutRedirect(out, '/runs/new', '?machine=m1')).toBe('/signin?next=%2Fruns%2Fnew%3Fmachine%3Dm1');
  });

  it('lets it read when reads are public: only a write (its 401) asks it to sign in', () => {
    expect(signedOutRedirect({ authenticated: false, public_read: true }, '/runs/new')).toBeNull();
    expect(signedOutRedirect({ authenticated: false, public_read: true }, '/tokens')).toBeNull();
  });

  it('stays when signed in, while the session is unknown, and on the open pages', () => {
    expect(signedOutRedirect({ authenticated: true, public_read: false }, '/runs')).toBeNull();
    expect(signedOutRedirect(undefined, '/runs')).toBeNull();
    expect(signedOutRedirect(out, '/s/abcdefghijkl')).toBeNull();
    expect(signedOutRedirect(out, '/signin', '?next=%2Fruns')).toBeNull();
  });
});
