/**
 * The shipped system-call profile and egress ruleset of the `docker` runtime say what docs/configuration.md
 * ("Cloud sandbox caps") promises; their effect on a real engine is cloud.docker.test.ts's.
 */
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { bridgeNameOf, EGRESS_RULESET_PATH, EGRESS_TABLE, seccompProfileText } from './egress-firewall.ts';

const CLONE_NEWUSER = 0x10000000;

describe('cloud-seccomp.json', () => {
  const profile = JSON.parse(seccompProfileText()) as {
    defaultAction: string;
    syscalls: Array<{
      names: string[];
      action: string;
      args?: Array<{ index: number; value: number; valueTwo: number; op: string }>;
      errnoRet?: number;
    }>;
  };
  const rules = (name: string) => profile.syscalls.filter((r) => r.names.includes(name));

  it('denies by default and never allows a new user namespace', () => {
    expect(profile.defaultAction).toBe('SCMP_ACT_ERRNO');
    for (const name of ['clone', 'unshare']) {
      const allow = rules(name).filter((r) => r.action === 'SCMP_ACT_ALLOW');
      expect(allow).toHaveLength(1);
      expect(allow[0].args).toEqual([{ index: 0, value: CLONE_NEWUSER, valueTwo: 0, op: 'SCMP_CMP_MASKED_EQ' }]);
      const deny = rules(name).filter((r) => r.action === 'SCMP_ACT_ERRNO');
      expect(deny[0].args?.[0]).toMatchObject({ value: CLONE_NEWUSER, valueTwo: CLONE_NEWUSER });
    }
    expect(rules('clone3')).toEqual([expect.objectContaining({ action: 'SCMP_ACT_ERRNO', errnoRet: 38 })]);
  });
});

describe('cloud-egress.nft', () => {
  const text = fs.readFileSync(EGRESS_RULESET_PATH, 'utf8');

  it('refuses the host and the private, link-local, CGNAT and IPv6 local ranges from the users bridges', () => {
    expect(text).toContain(`table inet ${EGRESS_TABLE}`);
    for (const range of [
      '10.0.0.0/8',
      '172.16.0.0/12',
      '192.168.0.0/16',
      '127.0.0.0/8',
      '169.254.0.0/16',
      '100.64.0.0/10',
      'fc00::/7',
      'fe80::/10',
    ])
      expect(text).toContain(range);
    expect(text).toMatch(/hook input.*?iifname "crm-u\*" counter reject.*?hook forward/s);
    expect(text).toMatch(/hook forward[^}]*ip daddr @blocked4[^}]*ip6 daddr @blocked6/s);
    // Linux names an interface in at most 15 characters: the largest user id still fits and matches.
    expect(bridgeNameOf(2_147_483_647).length).toBeLessThanOrEqual(15);
    expect(bridgeNameOf(7)).toMatch(/^crm-u/);
  });
});
